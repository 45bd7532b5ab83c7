package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/taskspec"
)

const (
	specExample = "../../taskspec/testdata/example.json"
	specTiny    = "../../taskspec/testdata/tiny-session-spec.json"
	// tinyRecorderHash is the hash the independent recorder wrote into
	// journal/testdata/tiny-session.
	tinyRecorderHash = "aee59fc5d374ceabbde2329a52ced8b16ad6f318cac5cb619e4b4a824187a502"
)

type cliResult struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, streams{In: strings.NewReader(stdin), Out: &out, Err: &errb})
	return cliResult{code: code, stdout: out.String(), stderr: errb.String()}
}

// specFixtures writes small specification files into a temporary directory.
func specFixtures(t *testing.T) (valid, warn, invalid, missing, dir string) {
	t.Helper()
	dir = t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	valid = specTiny
	warn = write("warn.json", `{"schema":"ceres-task-specification","version":1,"runTitle":"W","cycleCount":1,
		"tasks":[{"id":"o","type":"open","label":"L","instructions":"I","repeatCount":1,"resetTimeS":2}]}`)
	invalid = write("invalid.json", `{"schema":"ceres-task-specification","version":2,"runTitle":"X","cycleCount":1,
		"tasks":[{"id":"o","type":"open","label":"L","instructions":"I","repeatCount":1,"resetTimeS":5,"durationS":3}]}`)
	missing = filepath.Join(dir, "missing.json")
	return valid, warn, invalid, missing, dir
}

func specHashOf(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := taskspec.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return s.Hash()
}

func TestSpecCheck(t *testing.T) {
	valid, warn, invalid, missing, dir := specFixtures(t)
	warnHash := specHashOf(t, warn)
	exampleHash := specHashOf(t, specExample)
	cases := []struct {
		name       string
		args       []string
		stdin      string
		code       int
		stdout     string   // exact
		stderrHas  []string // substrings
		stderrNone bool
	}{
		{name: "valid", args: []string{"spec", "check", valid}, code: exitOK,
			stdout: valid + ": valid, hash " + tinyRecorderHash + "\n", stderrNone: true},
		{name: "contract example", args: []string{"spec", "check", specExample}, code: exitOK,
			stdout: specExample + ": valid, hash " + exampleHash + "\n", stderrNone: true},
		{name: "valid with warning", args: []string{"spec", "check", warn}, code: exitOK,
			stdout:    warn + ": valid, hash " + warnHash + "\n",
			stderrHas: []string{warn + ": warning: tasks[0].resetTimeS: 2 is below the 5-second minimum reset"}},
		{name: "invalid", args: []string{"spec", "check", invalid}, code: exitFindings, stdout: "",
			stderrHas: []string{
				invalid + ": version: must be the integer 1, got 2\n",
				invalid + ": tasks[0].durationS: an open task must not have durationS\n",
			}},
		{name: "unreadable", args: []string{"spec", "check", missing}, code: exitUsage, stdout: "",
			stderrHas: []string{"missing.json", "no such file"}},
		{name: "directory", args: []string{"spec", "check", dir}, code: exitUsage, stdout: ""},
		{name: "valid and invalid", args: []string{"spec", "check", valid, invalid}, code: exitFindings,
			stdout: valid + ": valid, hash " + tinyRecorderHash + "\n", stderrHas: []string{invalid + ": version:"}},
		{name: "worst code wins", args: []string{"spec", "check", missing, valid, invalid}, code: exitUsage,
			stdout: valid + ": valid, hash " + tinyRecorderHash + "\n", stderrHas: []string{"missing.json", invalid + ": version:"}},
		{name: "stdin", args: []string{"spec", "check", "-"}, stdin: `{"schema":"ceres-task-specification","version":1,"runTitle":"Tiny","cycleCount":1,"tasks":[{"id":"wave","type":"timed","label":"Wave","instructions":"Wave once","durationS":1,"repeatCount":2,"resetTimeS":5}]}`,
			code: exitOK, stdout: "-: valid, hash " + tinyRecorderHash + "\n", stderrNone: true},
		{name: "syntax error", args: []string{"spec", "check", "-"}, stdin: `{"schema":`, code: exitFindings,
			stdout: "", stderrHas: []string{"-: JSON syntax error at byte offset 10"}},
		{name: "no files", args: []string{"spec", "check"}, code: exitUsage, stdout: ""},
		{name: "unknown flag", args: []string{"spec", "check", "--bogus", valid}, code: exitUsage, stdout: ""},
		{name: "no subcommand", args: []string{"spec"}, code: exitUsage, stdout: "", stderrHas: []string{"subcommand is required"}},
		{name: "unknown subcommand", args: []string{"spec", "lint", valid}, code: exitUsage, stdout: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, tc.stdin, tc.args...)
			if r.code != tc.code {
				t.Errorf("exit code %d, want %d\nstderr: %s", r.code, tc.code, r.stderr)
			}
			if r.stdout != tc.stdout {
				t.Errorf("stdout:\n%q\nwant:\n%q", r.stdout, tc.stdout)
			}
			for _, want := range tc.stderrHas {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}
			if tc.stderrNone && r.stderr != "" {
				t.Errorf("unexpected stderr: %s", r.stderr)
			}
		})
	}
}

func TestSpecCheckJSON(t *testing.T) {
	valid, warn, invalid, missing, _ := specFixtures(t)
	r := runCLI(t, "", "spec", "check", "--json", valid, warn, invalid, missing)
	if r.code != exitUsage {
		t.Errorf("exit code %d, want %d", r.code, exitUsage)
	}
	if r.stderr != "" {
		t.Errorf("stderr with --json: %s", r.stderr)
	}
	var results []struct {
		MessageType string `json:"message_type"`
		taskspec.Check
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&results); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, r.stdout)
	}
	if dec.More() {
		t.Errorf("more than one JSON document on stdout")
	}
	if len(results) != 4 {
		t.Fatalf("%d results, want 4", len(results))
	}
	want := []taskspec.Check{
		{File: valid, Valid: true, Hash: tinyRecorderHash},
		{File: warn, Valid: true, Hash: specHashOf(t, warn), Warnings: []taskspec.Violation{{Path: "tasks[0].resetTimeS"}}},
		{File: invalid, Violations: []taskspec.Violation{{Path: "version"}, {Path: "tasks[0].durationS"}}},
		{File: missing},
	}
	for i, w := range want {
		g := results[i]
		if g.MessageType != "spec_check" || g.Warnings == nil || g.Violations == nil {
			t.Errorf("result %d: message_type %q, warnings %v, violations %v: want spec_check and arrays, never null", i, g.MessageType, g.Warnings, g.Violations)
		}
		if g.File != w.File || g.Valid != w.Valid || g.Hash != w.Hash || len(g.Warnings) != len(w.Warnings) || len(g.Violations) != len(w.Violations) {
			t.Errorf("result %d = %+v, want %+v", i, g, w)
			continue
		}
		for j := range w.Warnings {
			if g.Warnings[j].Path != w.Warnings[j].Path || g.Warnings[j].Message == "" {
				t.Errorf("result %d warning %d = %+v", i, j, g.Warnings[j])
			}
		}
		for j := range w.Violations {
			if g.Violations[j].Path != w.Violations[j].Path || g.Violations[j].Message == "" {
				t.Errorf("result %d violation %d = %+v", i, j, g.Violations[j])
			}
		}
	}
	if results[3].Error == "" || results[0].Error != "" {
		t.Errorf("error fields: %q %q", results[0].Error, results[3].Error)
	}
	// Empty lists are [] rather than null, for consumers that iterate.
	if !strings.Contains(r.stdout, `"violations": []`) {
		t.Errorf("empty violations not written as []:\n%s", r.stdout)
	}
}

func TestSpecHashAndCanon(t *testing.T) {
	_, warn, invalid, missing, _ := specFixtures(t)
	data, err := os.ReadFile(specExample)
	if err != nil {
		t.Fatal(err)
	}
	example, err := taskspec.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		args      []string
		code      int
		stdout    string
		stderrHas string
	}{
		{"hash tiny", []string{"spec", "hash", specTiny}, exitOK, tinyRecorderHash + "\n", ""},
		{"hash example", []string{"spec", "hash", specExample}, exitOK, example.Hash() + "\n", ""},
		{"hash with warning", []string{"spec", "hash", warn}, exitOK, specHashOf(t, warn) + "\n", "warning: tasks[0].resetTimeS"},
		{"hash invalid", []string{"spec", "hash", invalid}, exitFindings, "", invalid + ": tasks[0].durationS: an open task must not have durationS"},
		{"hash unreadable", []string{"spec", "hash", missing}, exitUsage, "", "missing.json"},
		{"hash two files", []string{"spec", "hash", specTiny, specExample}, exitUsage, "", ""},
		{"canon example", []string{"spec", "canon", specExample}, exitOK, string(example.Canonical()), ""},
		{"canon invalid", []string{"spec", "canon", invalid}, exitFindings, "", invalid + ": version:"},
		{"canon unreadable", []string{"spec", "canon", missing}, exitUsage, "", "missing.json"},
		{"canon no file", []string{"spec", "canon"}, exitUsage, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, "", tc.args...)
			if r.code != tc.code {
				t.Errorf("exit code %d, want %d\nstderr: %s", r.code, tc.code, r.stderr)
			}
			if r.stdout != tc.stdout {
				t.Errorf("stdout:\n%q\nwant:\n%q", r.stdout, tc.stdout)
			}
			if !strings.Contains(r.stderr, tc.stderrHas) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderrHas, r.stderr)
			}
		})
	}
	// The canonical output hashes to the printed hash.
	canon := runCLI(t, "", "spec", "canon", specTiny)
	again := runCLI(t, canon.stdout, "spec", "hash", "-")
	if again.stdout != tinyRecorderHash+"\n" {
		t.Errorf("hash of canon output = %q, want the recorder's hash", again.stdout)
	}
	if len(strings.TrimSpace(again.stdout)) != 64 {
		t.Errorf("hash is not 64 characters: %q", again.stdout)
	}
}

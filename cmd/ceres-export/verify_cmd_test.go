package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/synth"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// verifyFixture exports a tiny synthetic session into a temporary directory
// of t and returns the session and the shard.
func verifyFixture(t *testing.T) (shard, session string) {
	t.Helper()
	dir := t.TempDir()
	session = filepath.Join(dir, "session")
	shard = filepath.Join(dir, "shard")
	ctx := context.Background()
	if _, err := synth.Write(ctx, session, synth.Options{Seed: 3, TimeScale: 0.1, Cameras: 1, Width: 64, Height: 48}); err != nil {
		t.Fatal(err)
	}
	if _, err := export.Export(ctx, session, shard, export.Options{VideoFiles: video.Files{}, Video: export.VideoOptions{Codec: "h264"}}); err != nil {
		t.Fatal(err)
	}
	return shard, session
}

// copyDir copies a shard so that a test may damage the copy.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "shard")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestVerifyCLI(t *testing.T) {
	good, session := verifyFixture(t)
	damaged := copyDir(t, good)
	if err := os.Remove(filepath.Join(damaged, filepath.FromSlash(layout.StatsPath))); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "nothing")

	tests := []struct {
		name      string
		args      []string
		code      int
		stdoutHas []string
		stderrHas []string
		jsonSound *bool
		jsonCodes []string
	}{
		{name: "sound shard", args: []string{"verify", good}, code: exitOK,
			stdoutHas: []string{good + ": sound: 0 errors, 0 warnings, 0 notes"}},
		{name: "sound shard with journal", args: []string{"verify", "--journal", session, good}, code: exitOK,
			stdoutHas: []string{": sound: 0 errors", "journal"}},
		{name: "sound shard, json", args: []string{"verify", "--json", "--quick", good}, code: exitOK, jsonSound: ptr(true), jsonCodes: []string{}},
		{name: "findings", args: []string{"verify", damaged}, code: exitFindings,
			stdoutHas: []string{layout.StatsPath + ": error layout.missing-file: missing", ": NOT SOUND: 1 errors"}},
		{name: "findings, json", args: []string{"verify", "--json", damaged}, code: exitFindings, jsonSound: ptr(false), jsonCodes: []string{"layout.missing-file"}},
		{name: "no shard", args: []string{"verify", missing}, code: exitUsage, stderrHas: []string{"cannot read"}},
		{name: "no shard, json", args: []string{"verify", "--json", missing}, code: exitUsage, jsonSound: ptr(false), jsonCodes: []string{}},
		{name: "unreadable journal", args: []string{"verify", "--journal", missing, good}, code: exitUsage, stderrHas: []string{"journal"}},
		{name: "no argument", args: []string{"verify"}, code: exitUsage, stderrHas: []string{"accepts 1 arg"}},
	}
	for _, tc := range tests {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			r := runCLI(t, "", tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			for _, s := range tc.stdoutHas {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}
			for _, s := range tc.stderrHas {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			if tc.jsonSound != nil {
				var doc struct {
					Sound    bool     `json:"sound"`
					Checks   []string `json:"checks"`
					Error    string   `json:"error"`
					Findings []struct {
						Code, Severity, File, Message string
						Episode, Row, Frame           *int64
					} `json:"findings"`
				}
				if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
					t.Fatalf("stdout is not one JSON document: %v\n%s", err, r.stdout)
				}
				if doc.Sound != *tc.jsonSound {
					t.Errorf("sound %v, want %v", doc.Sound, *tc.jsonSound)
				}
				codes := []string{}
				for _, f := range doc.Findings {
					codes = append(codes, f.Code)
					if f.Message == "" || f.Severity == "" {
						t.Errorf("finding without message or severity: %+v", f)
					}
				}
				if !reflect.DeepEqual(codes, tc.jsonCodes) {
					t.Errorf("codes %v, want %v", codes, tc.jsonCodes)
				}
				if r.stderr != "" {
					t.Errorf("--json wrote to stderr: %s", r.stderr)
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestVerifyFlags(t *testing.T) {
	var got VerifyOptions
	run := func(_ context.Context, o VerifyOptions, _ streams) error { got = o; return nil }
	cmd := newVerifyCmdWith(streams{}, run)
	cmd.SetArgs([]string{"--journal", "S", "--json", "--quick", "--privacy", "metadata-only", "--salt", "x", "--task-spec", "a.json", "--task-spec", "b.json", "D"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := VerifyOptions{Shard: "D", Journal: "S", JSON: true, Quick: true, Privacy: "metadata-only", Salt: "x", TaskSpecs: []string{"a.json", "b.json"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("options %+v, want %+v", got, want)
	}
}

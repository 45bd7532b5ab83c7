package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestJSONDocumentsNameTheirType runs every command that has --json, in
// process on a small synthetic session, and checks the one convention of
// their documents (docs/development.md, "JSON documents"): stdout holds
// one JSON document whose objects at the top (the document, or each entry
// of a document that is an array) start with message_type, naming what
// they are. A command with --json that the table misses fails too.
func TestJSONDocumentsNameTheirType(t *testing.T) {
	dir := t.TempDir()
	session := filepath.Join(dir, "session")
	shard := filepath.Join(dir, "shard")
	manifest := filepath.Join(dir, "campaign.json")
	doc := `{"schema_version": 1, "campaign_id": "doc", "defaults": {"export": {"no_report": true}},
		"settings": {"s": {"export": {"vcodec": "h264"}}}, "cases": [{"case_id": "c", "setting_id": "s", "run_id": "1", "session": ` + jsonString(session) + `}]}`
	if err := os.WriteFile(manifest, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	campaign := filepath.Join(dir, "campaign")
	cases := []struct {
		path string // the command's path under ceres-export
		args []string
		want string // its message_type
	}{
		{"synth", []string{"synth", "-o", session, "--time-scale", "0.1", "--width", "64", "--height", "48", "--cycles", "1", "--json"}, "synth"},
		{"journal inspect", []string{"journal", "inspect", session, "--json"}, "journal_inspect"},
		{"export", []string{"export", session, "-o", shard, "--vcodec", "h264", "--no-report", "--json"}, "summary"},
		{"verify", []string{"verify", shard, "--quick", "--json"}, "verify"},
		{"merge", []string{"merge", shard, "-o", filepath.Join(dir, "merged"), "--json"}, "merge"},
		{"spec check", []string{"spec", "check", specTiny, specExample, "--json"}, "spec_check"},
		{"version", []string{"version", "--json"}, "version"},
		{"batch", []string{"batch", manifest, "-o", campaign, "--jobs", "1", "--json"}, "batch"},
		{"batch plan", []string{"batch", "plan", manifest}, "batch_plan"},
		{"batch status", []string{"batch", "status", campaign, "--json"}, "batch_status"},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.path] = true
		code, stdout, stderr := runMain(t, c.args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", strings.Join(c.args, " "), code, stderr)
		}
		if err := checkMessageType([]byte(stdout), c.want); err != "" {
			t.Errorf("%s --json: %s", c.path, err)
		}
	}
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), "ceres-export ")
		if c.LocalFlags().Lookup("json") != nil && !covered[path] {
			t.Errorf("%s has --json but no row in this test: add it, its document named by message_type", path)
		}
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(newRootCmd(streams{}))
}

// checkMessageType says what is wrong with doc under the convention, or "".
func checkMessageType(doc []byte, want string) string {
	dec := json.NewDecoder(bytes.NewReader(doc))
	var top any
	if err := json.Unmarshal(doc, &top); err != nil {
		return "not one JSON document: " + err.Error()
	}
	var objects []json.RawMessage
	if _, ok := top.([]any); ok {
		if err := dec.Decode(&objects); err != nil {
			return err.Error()
		}
		if len(objects) == 0 {
			return "an empty array: nothing names its type"
		}
	} else {
		objects = []json.RawMessage{doc}
	}
	for i, o := range objects {
		d := json.NewDecoder(bytes.NewReader(o))
		if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
			return "entry " + itoa(i) + ": not an object"
		}
		key, err := d.Token()
		if err != nil || key != "message_type" {
			return "entry " + itoa(i) + ": first key " + jsonString(key) + ", want message_type"
		}
		var got string
		if err := d.Decode(&got); err != nil || got != want {
			return "entry " + itoa(i) + ": message_type " + jsonString(got) + ", want " + jsonString(want)
		}
	}
	return ""
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func itoa(i int) string { return jsonString(i) }

// typed names a document's objects and refuses what the convention cannot
// name: a scalar, or an object that names itself (two message_type keys).
func TestTyped(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{`{"a":1}`, `{"message_type":"x","a":1}`},
		{`{}`, `{"message_type":"x"}`},
		{`[{"a":1},{}]`, `[{"message_type":"x","a":1},{"message_type":"x"}]`},
		{`[]`, `[]`},
		{`"a"`, ""},
		{`[1]`, ""},
		{`{"message_type":"y"}`, ""},
	} {
		got, err := typed("x", []byte(c.doc))
		if c.want == "" {
			if err == nil {
				t.Errorf("typed(%s) = %s, want an error", c.doc, got)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("typed(%s) = %s, %v; want %s", c.doc, got, err, c.want)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --license takes the Hugging Face Hub's licence ids; anything else is a
// usage error (exit 2) naming the flag, the value and the nearest id,
// before anything is read or written.
func TestLicenseFlagRefusesUnknownIDs(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"export", filepath.Join(dir, "session"), "-o", filepath.Join(dir, "shard"), "--license", "cc-by-4"},
			`--license "cc-by-4": not a licence id of the Hugging Face Hub (did you mean cc-by-4.0?`},
		{[]string{"merge", filepath.Join(dir, "a"), filepath.Join(dir, "b"), "-o", filepath.Join(dir, "merged"), "--license", "Apache-2.0"},
			`merge: --license "Apache-2.0": not a licence id of the Hugging Face Hub (did you mean apache-2.0?`},
		{[]string{"batch", filepath.Join(dir, "campaign.json"), "-o", filepath.Join(dir, "out"), "--license", "cc0"},
			`--license "cc0": not a licence id of the Hugging Face Hub (did you mean cc0-1.0?`},
		{[]string{"batch", "plan", filepath.Join(dir, "campaign.json"), "--license", "gpl-2.0-or-later"},
			`--license "gpl-2.0-or-later": not a licence id of the Hugging Face Hub (did you mean gpl-2.0?`},
	} {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), c.args, streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
		if code != exitUsage || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%s: exit %d, %q; want exit %d saying %q", strings.Join(c.args[:1], " "), code, errOut.String(), exitUsage, c.want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%s wrote %d entries", c.args[0], len(entries))
		}
	}
}

// export --license is the export's card licence (export.Options.License).
func TestExportLicenseFlag(t *testing.T) {
	var got ExportOptions
	cmd := newExportCmdWith(streams{}, func(_ context.Context, o ExportOptions, _ streams) error { got = o; return nil })
	cmd.SetArgs([]string{"S", "-o", "D", "--license", "cc-by-nc-4.0"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Settings.License != "cc-by-nc-4.0" || got.Options.License != "cc-by-nc-4.0" {
		t.Errorf("--license cc-by-nc-4.0: setting %q, option %q", got.Settings.License, got.Options.License)
	}
}

// batch --license licenses every task the manifest leaves without one
// (batch plan shows the tasks as batch runs them), and refuses a task the
// manifest licenses otherwise, naming where.
func TestBatchLicenseFlag(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "campaign.json")
	write := func(doc string) {
		if err := os.WriteFile(manifest, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}},
		"cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x"},
			{"case_id": "b", "setting_id": "s", "run_id": "1", "session": "y", "export": {"license": "cc-by-4.0"}}]}`)
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), args, streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
		return code, out.String(), errOut.String()
	}
	code, out, errOut := run("batch", "plan", manifest, "--license", "cc-by-4.0")
	if code != exitOK {
		t.Fatalf("batch plan --license cc-by-4.0: exit %d, %s", code, errOut)
	}
	var plan struct {
		Tasks []struct {
			Export struct {
				License string `json:"license"`
			} `json:"export"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil || len(plan.Tasks) != 2 {
		t.Fatalf("plan %s: %v", out, err)
	}
	for i, task := range plan.Tasks {
		if task.Export.License != "cc-by-4.0" {
			t.Errorf("task %d licensed %q, want cc-by-4.0", i, task.Export.License)
		}
	}
	code, _, errOut = run("batch", "plan", manifest, "--license", "mit")
	if want := `cases[1].export.license: license "cc-by-4.0" differs from --license "mit"`; code != exitUsage || !strings.Contains(errOut, want) {
		t.Errorf("batch plan --license mit: exit %d, %q; want exit %d saying %q", code, errOut, exitUsage, want)
	}
}

package campaign

import (
	"slices"
	"strings"
	"testing"
)

// A manifest gives a licence as every export option (defaults < setting <
// case); batch --license gives every task one, and refuses a task whose
// manifest names another where the manifest names it.
func TestWithLicense(t *testing.T) {
	m := mustParse(t, `{"schema_version": 1, "campaign_id": "c",
		"defaults": {"export": {"license": "cc-by-4.0"}},
		"settings": {"s": {}, "open": {"export": {"license": "cc0-1.0"}}},
		"cases": [
			{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x"},
			{"case_id": "b", "setting_id": "open", "run_id": "1", "session": "x"},
			{"case_id": "c", "setting_id": "s", "run_id": "1", "session": "x", "export": {"license": "cc-by-nc-4.0"}}]}`)
	var got []string
	for _, task := range m.Tasks {
		got = append(got, task.Export.License)
	}
	if want := []string{"cc-by-4.0", "cc0-1.0", "cc-by-nc-4.0"}; !slices.Equal(got, want) {
		t.Fatalf("licences %q, want %q (defaults < setting < case)", got, want)
	}

	for _, c := range []struct {
		name    string
		tasks   []Task
		license string
		want    []string // the tasks' licences, or with err its message
		err     bool
	}{
		{"none changes nothing", slices.Clone(m.Tasks), "", []string{"cc-by-4.0", "cc0-1.0", "cc-by-nc-4.0"}, false},
		{"the same licence", slices.Clone(m.Tasks[:1]), "cc-by-4.0", []string{"cc-by-4.0"}, false},
		{"a setting's other licence", slices.Clone(m.Tasks[:2]), "cc-by-4.0", []string{`campaign.json: settings.open.export.license: license "cc0-1.0" differs from --license "cc-by-4.0"`}, true},
		{"a case's other licence", slices.Clone(m.Tasks[2:]), "cc-by-4.0", []string{`campaign.json: cases[2].export.license: license "cc-by-nc-4.0" differs from --license "cc-by-4.0"`}, true},
	} {
		err := WithLicense(c.tasks, c.license)
		if c.err {
			if err == nil || !strings.Contains(err.Error(), c.want[0]) {
				t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want[0])
			}
			continue
		}
		got = nil
		for _, task := range c.tasks {
			got = append(got, task.Export.License)
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}

	// Tasks the manifest gives no licence get --license's.
	bare := mustParse(t, `{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}},
		"cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x"}]}`)
	if err := WithLicense(bare.Tasks, "mit"); err != nil || bare.Tasks[0].Export.License != "mit" {
		t.Errorf("a task without a licence: %q, %v; want mit", bare.Tasks[0].Export.License, err)
	}
}

// Every array task runs batch with the campaign's --license, so that a
// scheduled campaign's shards carry the licence a local batch's do.
func TestScriptsCarryLicense(t *testing.T) {
	o := ScriptOptions{Binary: "/b", Manifest: "/m.json", Out: "/o", ArrayCount: 2, License: "cc-by-4.0"}
	if args := o.batchArgs(); !slices.Contains(args, "--license") || args[slices.Index(args, "--license")+1] != "cc-by-4.0" {
		t.Errorf("batch args %q lack --license cc-by-4.0", args)
	}
	script, err := SlurmArrayScript("c", 2, o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(script, "exec /b batch /m.json -o /o --array-count 2 --license cc-by-4.0\n") {
		t.Errorf("array script does not pass --license:\n%s", script)
	}
	o.License = ""
	if args := o.batchArgs(); slices.Contains(args, "--license") {
		t.Errorf("batch args %q pass --license without one", args)
	}
}

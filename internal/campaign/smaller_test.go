package campaign

import (
	"strings"
	"testing"
)

// A huge value makes a short message, whichever field
// or flag carries it.
func TestLongValuesAreCut(t *testing.T) {
	// Values of 10 MiB in make test; 1 MiB in -short (make check), as far
	// past what a message quotes (maxShown), in a tenth of the time.
	size := 10 << 20
	if testing.Short() {
		size = 1 << 20
	}
	huge := strings.Repeat("c", size)
	for _, doc := range []string{
		`{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}}, "cases": [{"case_id": "` + huge + `", "setting_id": "s", "run_id": "1", "session": "x"}]}`,
		`{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}}, "cases": [{"case_id": "` + strings.Repeat(" ", size) + `", "setting_id": "s", "run_id": "1", "session": "x"}]}`,
		`{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}}, "cases": [{"case_id": "a", "setting_id": "` + huge + `", "run_id": "1", "session": "x"}]}`,
		`{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}}, "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x", "expected": {"state": "` + huge + `"}}]}`,
		`{"schema_version": 1, "campaign_id": "c", "settings": {"` + huge + `": {"export": {"nope": 1}}}, "cases": []}`,
	} {
		_, err := Parse("campaign.json", []byte(doc), false)
		if err == nil || len(err.Error()) > 2000 || !strings.Contains(err.Error(), "bytes)") && !strings.Contains(err.Error(), "campaign.json") {
			n := 0
			if err != nil {
				n = len(err.Error())
			}
			t.Errorf("error of %d bytes: %.300v", n, err)
		}
	}
	m := mustParse(t, `{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}}, "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x"}]}`)
	if _, err := Select(m.Tasks, Selection{CaseIDs: []string{huge}}); err == nil || len(err.Error()) > 2000 {
		t.Errorf("selection error: %.300v", err)
	}
	if _, err := SlurmArrayScript("c", 1, ScriptOptions{Out: huge + "\n", ArrayCount: 1}); err == nil || len(err.Error()) > 2000 {
		t.Errorf("script error: %.300v", err)
	}
}

// An array task's index below SLURM_ARRAY_TASK_MIN says
// so, and an --array-index of one's own takes the count from SLURM.
func TestArrayFromSlurmEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, c := range []struct {
		getenv       func(string) string
		index, count int
		want         *ArrayShare
		say          string
	}{
		{env("SLURM_ARRAY_TASK_ID", "0", "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_COUNT", "4"), -1, 0, nil, "SLURM_ARRAY_TASK_ID=0 is below SLURM_ARRAY_TASK_MIN=1"},
		{env("SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_MIN", "5", "SLURM_ARRAY_TASK_COUNT", "4"), -1, 0, nil, "below SLURM_ARRAY_TASK_MIN=5"},
		{env("SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_COUNT", "4"), -1, 0, &ArrayShare{1, 4}, ""},
		{env("SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_COUNT", "4"), 3, 0, &ArrayShare{3, 4}, ""},
		{env("SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_COUNT", "4"), 1, 2, &ArrayShare{1, 2}, ""},
		{env("SLURM_ARRAY_TASK_ID", "2"), 1, 0, nil, "SLURM_ARRAY_TASK_COUNT is not"},
		{env(), 1, 0, nil, "--array-index 1 without --array-count"},
	} {
		got, err := ArrayFromEnv(c.getenv, c.index, c.count)
		switch {
		case c.say != "" && (err == nil || !strings.Contains(err.Error(), c.say)):
			t.Errorf("index %d count %d: %v %v, want an error saying %q", c.index, c.count, got, err, c.say)
		case c.say == "" && (err != nil || got == nil || *got != *c.want):
			t.Errorf("index %d count %d: %v %v, want %v", c.index, c.count, got, err, c.want)
		}
	}
}

package batch

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Issue 23, class 8: a huge value makes a short message, whichever field
// or flag carries it.
func TestLongValuesAreCut(t *testing.T) {
	huge := strings.Repeat("c", 10<<20)
	for _, doc := range []string{
		`{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}}, "cases": [{"case_id": "` + huge + `", "setting_id": "s", "run_id": "1", "session": "x"}]}`,
		`{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}}, "cases": [{"case_id": "` + strings.Repeat(" ", 10<<20) + `", "setting_id": "s", "run_id": "1", "session": "x"}]}`,
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

// Issue 23, class 8: a damaged record (cut short, not JSON, numbered
// wrong, a pipe) is reported; every other record and task is still
// listed, and the campaign page is still written.
func TestDamagedRecordIsReportedAndTheRestListed(t *testing.T) {
	out, tasks := fakeCampaign(t, 3)
	for _, task := range tasks {
		r := &Record{RecordVersion: RecordVersion, TaskID: task.ID, State: StateSucceeded, StartedAt: "2026-12-01T00:00:00Z", Episodes: 2, Frames: 60}
		if err := os.MkdirAll(taskRecordsDir(out, task.ID), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := createRecord(out, r); err != nil {
			t.Fatal(err)
		}
	}
	dir := taskRecordsDir(out, tasks[1].ID)
	os.WriteFile(filepath.Join(dir, "attempt-0002.json"), []byte(`{"record_version": 1, "task_id": "`), 0o644)
	os.WriteFile(filepath.Join(dir, "attempt-0003.json"), []byte(`{"record_version": 1, "attempt_no": 7}`), 0o644)
	syscall.Mkfifo(filepath.Join(taskRecordsDir(out, tasks[2].ID), "attempt-0002.json"), 0o644)
	st, err := Status(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Tasks) != 3 || len(st.Damaged) != 3 {
		t.Fatalf("%d tasks, %d damaged records, want 3 and 3: %+v", len(st.Tasks), len(st.Damaged), st.Damaged)
	}
	for _, want := range []string{"attempt-0002.json: unexpected end of JSON input", "does not match its name", "named pipe"} {
		found := false
		for _, d := range st.Damaged {
			found = found || strings.Contains(d.Error, want)
		}
		if !found {
			t.Errorf("no damaged record saying %q: %+v", want, st.Damaged)
		}
	}
	c, err := Campaign("c", tasks, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tasks) != 3 || c.Tasks[0].Error != "" || !strings.Contains(c.Tasks[1].Error, "attempt record") || c.Tasks[1].Episodes != 2 {
		t.Errorf("campaign rows %+v", c.Tasks)
	}
	// A new attempt takes the next free number past the damaged ones.
	r := &Record{RecordVersion: RecordVersion, TaskID: tasks[1].ID, State: StateRunning}
	if err := createRecord(out, r); err != nil || r.AttemptNo != 4 {
		t.Errorf("new attempt %d (%v), want 4", r.AttemptNo, err)
	}
}

// Issue 23, class 8: an array task's index below SLURM_ARRAY_TASK_MIN says
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

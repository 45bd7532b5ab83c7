package batch

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// A damaged record (cut short, not JSON, numbered
// wrong, a pipe) is reported; every other record and task is still
// listed, and the campaign page is still written.
func TestDamagedRecordIsReportedAndTheRestListed(t *testing.T) {
	out, tasks := fakeCampaign(t, 3)
	for _, task := range tasks {
		r := &campaign.Record{RecordVersion: campaign.RecordVersion, TaskID: task.ID, State: campaign.StateSucceeded, StartedAt: "2026-12-01T00:00:00Z", Episodes: 2, Frames: 60}
		if err := os.MkdirAll(filepath.Join(out, layout.AttemptsDir, task.ID), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := campaign.CreateRecord(out, r); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(out, layout.AttemptsDir, tasks[1].ID)
	os.WriteFile(filepath.Join(dir, "attempt-0002.json"), []byte(`{"record_version": 1, "task_id": "`), 0o644)
	os.WriteFile(filepath.Join(dir, "attempt-0003.json"), []byte(`{"record_version": 1, "attempt_no": 7}`), 0o644)
	syscall.Mkfifo(filepath.Join(out, layout.AttemptsDir, tasks[2].ID, "attempt-0002.json"), 0o644)
	st, err := campaign.Status(out, nil)
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
	c, err := CampaignPage("c", tasks, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tasks) != 3 || c.Tasks[0].Error != "" || !strings.Contains(c.Tasks[1].Error, "attempt record") || c.Tasks[1].Episodes != 2 {
		t.Errorf("campaign rows %+v", c.Tasks)
	}
	// A new attempt takes the next free number past the damaged ones.
	r := &campaign.Record{RecordVersion: campaign.RecordVersion, TaskID: tasks[1].ID, State: campaign.StateRunning}
	if err := campaign.CreateRecord(out, r); err != nil || r.AttemptNo != 4 {
		t.Errorf("new attempt %d (%v), want 4", r.AttemptNo, err)
	}
}

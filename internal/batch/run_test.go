package batch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/output"
)

// fakeCampaign writes n tiny "sessions" (a file each) and returns their
// tasks; sessions are only hashed, the fake export reads nothing.
func fakeCampaign(t *testing.T, n int) (string, []Task) {
	t.Helper()
	dir := t.TempDir()
	var cases []string
	for i := range n {
		s := filepath.Join(dir, "s"+string(rune('a'+i)))
		if err := os.MkdirAll(filepath.Join(s, "journal"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s, "journal", "000001.cjl"), []byte{byte(i)}, 0o644); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, `{"case_id": "`+filepath.Base(s)+`", "setting_id": "s", "run_id": "1", "session": "`+filepath.Base(s)+`"}`)
	}
	doc := `{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}}, "cases": [` + strings.Join(cases, ",") + `]}`
	m, err := Parse(filepath.Join(dir, "c.json"), []byte(doc), false)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "out"), m.Tasks
}

// Every execution of a task id is a new attempt; the task id survives
// retry, earlier failed attempts stay readable after a later success.
func TestAttemptNumberingAcrossRetries(t *testing.T) {
	out, tasks := fakeCampaign(t, 1)
	var calls atomic.Int32
	failing := errors.New("encoder: out of memory")
	opts := Options{Out: out, ToolVersion: "test", RetryFailed: true,
		export: func(context.Context, string, string, export.Options) (*export.Report, error) {
			if calls.Add(1) < 3 {
				return nil, failing
			}
			return nil, errors.New("disk full")
		}}
	for range 3 {
		if _, err := Run(context.Background(), tasks, opts); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := ReadRecords(out, tasks[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	for i, r := range recs {
		if r.AttemptNo != i+1 || r.TaskID != "c__sa__s__run-1" || r.State != StateFailed || *r.ExitStatus != 4 || r.Fingerprint == "" || r.RecordVersion != RecordVersion {
			t.Errorf("record %d: %+v", i, r)
		}
	}
	if recs[0].Error != "encoder: out of memory" || recs[2].Error != "disk full" {
		t.Errorf("errors %q %q", recs[0].Error, recs[2].Error)
	}
	for _, name := range []string{"attempt-0001.json", "attempt-0002.json", "attempt-0003.json"} {
		if _, err := os.Stat(filepath.Join(out, layout.AttemptsDir, tasks[0].ID, name)); err != nil {
			t.Error(err)
		}
	}
}

// Without --retry-failed a task that failed with the same inputs is final:
// a rerun makes no attempt and reports the standing failure; changed inputs
// make a new attempt.
func TestFailedTaskIsFinalUntilInputsChange(t *testing.T) {
	out, tasks := fakeCampaign(t, 1)
	var calls atomic.Int32
	opts := Options{Out: out, ToolVersion: "test", export: func(context.Context, string, string, export.Options) (*export.Report, error) {
		calls.Add(1)
		return nil, errors.New("journal: corrupt")
	}}
	for range 2 {
		sum, err := Run(context.Background(), tasks, opts)
		if err != nil {
			t.Fatal(err)
		}
		if r := sum.Results[0]; r.Record == nil || r.Record.AttemptNo != 1 || r.OK() {
			t.Fatalf("result %+v", r)
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("%d exports, want 1", calls.Load())
	}
	if err := os.WriteFile(filepath.Join(tasks[0].SessionDir, "journal", "000001.cjl"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, _ := Run(context.Background(), tasks, opts)
	if r := sum.Results[0]; r.Outcome != OutcomeFailed || r.Record.AttemptNo != 2 || calls.Load() != 2 {
		t.Fatalf("after the change: %+v, %d exports", r, calls.Load())
	}
}

// A record left running by a killed process becomes interrupted when the
// next attempt starts, and the next attempt gets the next number.
func TestAbandonedAttemptIsClosed(t *testing.T) {
	out, tasks := fakeCampaign(t, 1)
	host, _ := os.Hostname()
	dead := &Record{RecordVersion: RecordVersion, TaskID: tasks[0].ID, State: StateRunning, Host: host, PID: 1 << 30}
	if err := PrepareOut(out, nil); err != nil {
		t.Fatal(err)
	}
	if err := createRecord(out, dead); err != nil {
		t.Fatal(err)
	}
	opts := Options{Out: out, export: func(context.Context, string, string, export.Options) (*export.Report, error) {
		return nil, errors.New("x")
	}}
	if _, err := Run(context.Background(), tasks, opts); err != nil {
		t.Fatal(err)
	}
	recs, _ := ReadRecords(out, tasks[0].ID)
	if len(recs) != 2 || recs[0].State != StateInterrupted || recs[1].AttemptNo != 2 || recs[1].State != StateFailed {
		t.Fatalf("records %+v", recs)
	}
	if !strings.Contains(recs[0].Error, "killed") {
		t.Fatalf("error %q", recs[0].Error)
	}
	// One still running on this host is left alone, and the task refused.
	alive := &Record{RecordVersion: RecordVersion, TaskID: tasks[0].ID, State: StateRunning, Host: host, PID: os.Getppid()}
	if err := createRecord(out, alive); err != nil {
		t.Fatal(err)
	}
	sum, _ := Run(context.Background(), tasks, opts)
	if r := sum.Results[0]; r.Outcome != OutcomeFailed || !strings.Contains(r.Reason, "is still running") {
		t.Fatalf("%+v", r)
	}
}

// --jobs runs tasks side by side, never more than asked; a cancelled run
// starts nothing more and says so.
func TestJobsAndCancel(t *testing.T) {
	out, tasks := fakeCampaign(t, 6)
	var running, peak atomic.Int32
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	opts := Options{Out: out, Jobs: 3, export: func(ctx context.Context, _, _ string, _ export.Options) (*export.Report, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		if n == 3 {
			close(release)
		}
		<-release
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	sum, err := Run(ctx, tasks, opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	if peak.Load() != 3 {
		t.Fatalf("peak %d tasks at once, want 3", peak.Load())
	}
	if got := sum.Count(OutcomeInterrupted); got != 6 {
		t.Fatalf("%d interrupted, want 6: %+v", got, sum.Results)
	}
	for _, r := range sum.Results[:3] {
		if r.Record == nil || r.Record.State != StateInterrupted || r.Record.ExitStatus != nil {
			t.Fatalf("%+v", r.Record)
		}
	}
	for _, r := range sum.Results[3:] {
		if r.Record != nil || r.OK() {
			t.Fatalf("not started, yet %+v", r)
		}
	}
}

// OUT follows the destination rules: it becomes a campaign output, an
// existing directory of other files is refused, so is OUT inside a session.
func TestPrepareOut(t *testing.T) {
	out, tasks := fakeCampaign(t, 1)
	if err := PrepareOut(out, nil); err != nil {
		t.Fatal(err)
	}
	if kind, ok := output.KindOf(out); !ok || kind != output.KindCampaign {
		t.Fatalf("kind %q %v", kind, ok)
	}
	if err := PrepareOut(out, nil); err != nil {
		t.Fatalf("again: %v", err)
	}
	other := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := PrepareOut(other, nil)
	if !errors.Is(err, output.ErrDestinationRefused) || err.Error() != "output: destination refused: "+other+" exists and is not a campaign output of ceres-export (no "+layout.OutputMarkerPath+"); choose a new directory" {
		t.Fatalf("error %v", err)
	}
	inside := filepath.Join(tasks[0].SessionDir, "out")
	if _, err := Run(context.Background(), tasks, Options{Out: inside}); !errors.Is(err, output.ErrDestinationRefused) {
		t.Fatalf("OUT inside a session: %v", err)
	}
	// Array tasks starting together on one new OUT all get it.
	fresh := filepath.Join(t.TempDir(), "fresh")
	errs := make(chan error, 4)
	for range 4 {
		go func() { errs <- PrepareOut(fresh, nil) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

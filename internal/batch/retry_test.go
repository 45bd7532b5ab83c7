package batch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/output"
	"github.com/ceres-robotics/ceres-export/journal"
)

// policyCampaign is a one-task campaign (a tiny session the fake export
// never reads) whose defaults hold retryPolicy, raw JSON or "".
func policyCampaign(t *testing.T, retryPolicy string) (string, []campaign.Task) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "s", "journal"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "s", "journal", "000001.cjl"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	defaults := ""
	if retryPolicy != "" {
		defaults = `"defaults": {"retry_policy": ` + retryPolicy + `}, `
	}
	doc := `{"schema_version": 1, "campaign_id": "c", ` + defaults + `"settings": {"s": {}},
		"cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "s"}]}`
	m, err := campaign.Parse(filepath.Join(dir, "c.json"), []byte(doc), false)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "out"), m.Tasks
}

// scriptedExport fails with errs in turn, then succeeds; calls counts.
func scriptedExport(calls *atomic.Int32, errs ...error) func(context.Context, string, string, export.Options) (*export.Report, error) {
	return func(context.Context, string, string, export.Options) (*export.Report, error) {
		n := int(calls.Add(1))
		if n <= len(errs) {
			return nil, errs[n-1]
		}
		return &export.Report{Episodes: 1, Frames: 10}, nil
	}
}

// states lists a task's records as "state/category".
func states(t *testing.T, out, id string) string {
	t.Helper()
	recs, err := campaign.ReadRecords(out, id)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, r := range recs {
		s = append(s, r.State+"/"+r.Category)
	}
	return strings.Join(s, " ")
}

var (
	errIO      = errors.New("write data/chunk-000/file-000.parquet: no space left on device")
	errCorrupt = fmt.Errorf("segment 000002.cjl offset 81920: %w", journal.ErrCorrupt)
)

// A retry policy retries its categories in the same run, up to
// max_attempts; what it does not name, or what reached max_attempts,
// stands on a rerun; --retry-failed overrides it once.
func TestRetryPolicy(t *testing.T) {
	for _, tc := range []struct {
		name, policy string
		errs         []error
		// want: the records after the first run, then after a rerun.
		want, wantRerun string
		exports         int32
	}{
		{"retried in the run", `{"max_attempts": 3, "retry_categories": ["io_error"]}`, []error{errIO, errIO},
			"failed/io_error failed/io_error succeeded/", "", 3},
		{"max_attempts reached", `{"max_attempts": 2, "retry_categories": ["io_error"]}`, []error{errIO, errIO, errIO},
			"failed/io_error failed/io_error", "failed/io_error failed/io_error", 2},
		{"category not retried", `{"max_attempts": 5, "retry_categories": ["io_error"]}`, []error{errCorrupt},
			"failed/journal_corrupt", "failed/journal_corrupt", 1},
		{"no policy: a failure stands", "", []error{errIO},
			"failed/io_error", "failed/io_error", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, tasks := policyCampaign(t, tc.policy)
			var calls atomic.Int32
			opts := Options{Out: out, ToolVersion: "test", export: scriptedExport(&calls, tc.errs...)}
			if _, err := Run(context.Background(), tasks, opts); err != nil {
				t.Fatal(err)
			}
			if got := states(t, out, tasks[0].ID); got != tc.want {
				t.Fatalf("after the run: %s, want %s", got, tc.want)
			}
			if strings.HasSuffix(tc.want, "succeeded/") {
				// The fake export writes no shard to find up to date.
				if calls.Load() != tc.exports {
					t.Fatalf("%d exports, want %d", calls.Load(), tc.exports)
				}
				return
			}
			sum, err := Run(context.Background(), tasks, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := states(t, out, tasks[0].ID); got != tc.wantRerun || calls.Load() != tc.exports {
				t.Fatalf("after a rerun: %s with %d exports, want %s with %d", got, calls.Load(), tc.wantRerun, tc.exports)
			}
			if r := sum.Results[0]; r.Outcome != OutcomeSkipped {
				t.Fatalf("rerun outcome %s (%s)", r.Outcome, r.Reason)
			}
			// --retry-failed buys exactly one more attempt.
			opts.RetryFailed = true
			if _, err := Run(context.Background(), tasks, opts); err != nil {
				t.Fatal(err)
			}
			if calls.Load() != tc.exports+1 {
				t.Fatalf("--retry-failed: %d exports, want %d", calls.Load(), tc.exports+1)
			}
		})
	}
}

// Attempts lost with their node count against max_attempts: with two lost
// attempts of the same inputs and max_attempts 2, no third one is made,
// and the skip says why.
func TestLostAttemptsCount(t *testing.T) {
	out, tasks := policyCampaign(t, `{"max_attempts": 2, "retry_categories": ["lost"]}`)
	eo, err := taskOptions(&tasks[0])
	if err != nil {
		t.Fatal(err)
	}
	in, err := hashInputs(&tasks[0], eo.TaskSpec, eo.Profile)
	if err != nil {
		t.Fatal(err)
	}
	fp, err := fingerprint(&tasks[0], in, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := campaign.PrepareOut(out, nil); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		// A running record of a process on another host: its node was lost.
		r := &campaign.Record{RecordVersion: campaign.RecordVersion, TaskID: tasks[0].ID, State: campaign.StateRunning,
			Host: "lost-node", PID: 1, Fingerprint: fp}
		if err := campaign.CreateRecord(out, r); err != nil {
			t.Fatal(err)
		}
	}
	var calls atomic.Int32
	sum, err := Run(context.Background(), tasks, Options{Out: out, ToolVersion: "test", export: scriptedExport(&calls)})
	if err != nil {
		t.Fatal(err)
	}
	r := sum.Results[0]
	if calls.Load() != 0 || r.Outcome != OutcomeSkipped || !strings.Contains(r.Reason, "max_attempts 2 reached") || r.OK() {
		t.Fatalf("%d exports, result %s: %s (misses %v)", calls.Load(), r.Outcome, r.Reason, r.Misses)
	}
	if got := states(t, out, tasks[0].ID); got != "interrupted/lost interrupted/lost" {
		t.Fatalf("records %s", got)
	}
}

// A task another process holds waits for it with WaitBusy and then goes
// on, under the one record its attempt made; without WaitBusy it gives up
// at once as busy.
func TestWaitBusy(t *testing.T) {
	t.Run("shard busy", func(t *testing.T) {
		busy := fmt.Errorf("%w: held by pid 7", output.ErrDestinationBusy)
		for _, tc := range []struct {
			wait    time.Duration
			outcome string
			records string
		}{
			{0, OutcomeInterrupted, "interrupted/busy"},
			{time.Minute, OutcomeExported, "succeeded/"},
		} {
			out, tasks := policyCampaign(t, "")
			var calls atomic.Int32
			sum, err := Run(context.Background(), tasks, Options{Out: out, ToolVersion: "test", WaitBusy: tc.wait, busyPoll: 50 * time.Millisecond, export: scriptedExport(&calls, busy, busy)})
			if err != nil {
				t.Fatal(err)
			}
			if r := sum.Results[0]; r.Outcome != tc.outcome || r.Busy != (tc.wait == 0) {
				t.Errorf("wait %v: outcome %s busy %v", tc.wait, r.Outcome, r.Busy)
			}
			if got := states(t, out, tasks[0].ID); got != tc.records {
				t.Errorf("wait %v: records %s, want %s", tc.wait, got, tc.records)
			}
		}
	})
	t.Run("live attempt", func(t *testing.T) {
		// A requeued task finds its first attempt's record running, its
		// process alive on this host: it waits, and once the process is
		// gone the record is closed as lost and the task runs.
		out, tasks := policyCampaign(t, "")
		if err := campaign.PrepareOut(out, nil); err != nil {
			t.Fatal(err)
		}
		holder := exec.Command("sleep", "60")
		if err := holder.Start(); err != nil {
			t.Fatal(err)
		}
		host, _ := os.Hostname()
		r := &campaign.Record{RecordVersion: campaign.RecordVersion, TaskID: tasks[0].ID, State: campaign.StateRunning, Host: host, PID: holder.Process.Pid}
		if err := campaign.CreateRecord(out, r); err != nil {
			t.Fatal(err)
		}
		go func() {
			time.Sleep(1500 * time.Millisecond)
			_ = holder.Process.Kill()
			_ = holder.Wait() // reaped: a zombie would still look alive
		}()
		var calls atomic.Int32
		start := time.Now()
		sum, err := Run(context.Background(), tasks, Options{Out: out, ToolVersion: "test", WaitBusy: time.Minute, export: scriptedExport(&calls)})
		if err != nil {
			t.Fatal(err)
		}
		if r := sum.Results[0]; r.Outcome != OutcomeExported || time.Since(start) < time.Second {
			t.Fatalf("outcome %s after %v: %s", r.Outcome, time.Since(start), r.Reason)
		}
		if got := states(t, out, tasks[0].ID); got != "interrupted/lost succeeded/" {
			t.Fatalf("records %s", got)
		}
	})
}

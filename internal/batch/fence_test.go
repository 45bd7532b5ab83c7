package batch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/output"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/internal/synth"
)

// syntheticCampaign is a one-task campaign of a small real session.
func syntheticCampaign(t *testing.T) (string, []campaign.Task) {
	t.Helper()
	dir := t.TempDir()
	if _, err := synth.Write(context.Background(), filepath.Join(dir, "s"), synth.Options{Seed: 7, Cameras: 1, TimeScale: 0.1, Width: 64, Height: 64}); err != nil {
		t.Fatal(err)
	}
	doc := `{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}},
		"cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "s"}]}`
	m, err := campaign.Parse(filepath.Join(dir, "c.json"), []byte(doc), false)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "out"), m.Tasks
}

// An attempt that froze after its record was written and before it took
// the shard's lock (a stalled node whose task the scheduler requeued)
// comes back after the requeued attempt has committed: its commit is
// refused, its record says superseded, and the shard stays the newer
// attempt's, the one succeeded attempt of the task.
func TestZombieAttemptIsSuperseded(t *testing.T) {
	out, tasks := syntheticCampaign(t)
	frozen, thaw := make(chan struct{}), make(chan struct{})
	zombie := func(ctx context.Context, session, dir string, o export.Options) (*export.Report, error) {
		close(frozen)
		<-thaw
		return export.Export(ctx, session, dir, o)
	}
	type result struct {
		sum *Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := Run(context.Background(), tasks, Options{Out: out, ToolVersion: "test", export: zombie})
		done <- result{sum, err}
	}()
	<-frozen
	// The requeued attempt: the zombie's record is running with a pid this
	// host cannot vouch for (here: this very process), as a lost node's is.
	sum, err := Run(context.Background(), tasks, Options{Out: out, ToolVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if r := sum.Results[0]; r.Outcome != OutcomeExported || r.Record.AttemptNo != 2 {
		t.Fatalf("requeued attempt: %s (%s) %+v", r.Outcome, r.Reason, r.Record)
	}
	close(thaw)
	z := <-done
	if z.err != nil {
		t.Fatal(z.err)
	}
	if r := z.sum.Results[0]; r.Outcome == OutcomeExported {
		t.Errorf("the zombie's attempt was exported over the newer one: %+v", r.Record)
	}
	if got := states(t, out, tasks[0].ID); got != "superseded/ succeeded/" {
		t.Errorf("records %s, want superseded/ succeeded/", got)
	}
	c, ok := campaign.ReadCommitted(filepath.Join(out, tasks[0].ID))
	if !ok || c.Attempt != 2 {
		t.Errorf("the shard says attempt %d, want 2 (the one succeeded attempt)", c.Attempt)
	}
	// The next run finds the task up to date.
	sum, err = Run(context.Background(), tasks, Options{Out: out, ToolVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if r := sum.Results[0]; r.Outcome != OutcomeSkipped || r.Record.AttemptNo != 2 {
		t.Errorf("rerun: %s (%s)", r.Outcome, r.Reason)
	}
}

// Waiting for a busy shard is not an attempt: with max_attempts 3, a task
// whose shard another process holds through three looks waits (WaitBusy)
// and then exports; the wait leaves no record of its own, and the attempt
// that exports is attempt 1, in its record and in the shard.
func TestBusyWaitIsNotAnAttempt(t *testing.T) {
	out, tasks := policyCampaign(t, `{"max_attempts": 3, "retry_categories": ["io_error", "lost", "busy"]}`)
	busy := fmt.Errorf("%w: held by pid 7", output.ErrDestinationBusy)
	var calls atomic.Int32
	var shardAttempt int64
	fake := func(ctx context.Context, session, dir string, o export.Options) (*export.Report, error) {
		if c, ok := o.CeresFiles[layout.CampaignPath].(shard.CampaignOrigin); ok {
			shardAttempt = c.AttemptNo
		}
		return scriptedExport(&calls, busy, busy, busy)(ctx, session, dir, o)
	}
	start := time.Now()
	sum, err := Run(context.Background(), tasks, Options{Out: out, ToolVersion: "test", WaitBusy: time.Minute, busyPoll: 50 * time.Millisecond, export: fake})
	if err != nil {
		t.Fatal(err)
	}
	r := sum.Results[0]
	if r.Outcome != OutcomeExported || r.Busy {
		t.Fatalf("outcome %s after %v (busy %v): %s", r.Outcome, time.Since(start).Round(time.Millisecond), r.Busy, r.Reason)
	}
	if got := states(t, out, tasks[0].ID); got != "succeeded/" {
		t.Errorf("records %s, want one: succeeded/", got)
	}
	if r.Record.AttemptNo != 1 || shardAttempt != 1 {
		t.Errorf("exported as attempt %d (shard says %d), want 1", r.Record.AttemptNo, shardAttempt)
	}
	if _, err := os.Stat(filepath.Join(out, layout.AttemptsDir, tasks[0].ID, layout.AttemptRecordName(2))); err == nil {
		t.Errorf("a second record was written")
	}
}

// A zombie that comes back while the newer attempt still holds the shard
// finds it busy: it is superseded all the same (not a wait of its own),
// and the run reports the task as the newer attempt's.
func TestZombieMeetsNewerAttemptAtWork(t *testing.T) {
	out, tasks := policyCampaign(t, "")
	frozen, thaw, zombieDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	zombie := func(ctx context.Context, session, dir string, o export.Options) (*export.Report, error) {
		close(frozen)
		<-thaw
		st, err := output.Stage(dir, output.StageOptions{Replace: true, Fence: o.Fence})
		if err == nil {
			_ = st.Abort()
			return nil, fmt.Errorf("the zombie staged the shard the newer attempt holds")
		}
		return nil, err
	}
	type result struct {
		sum *Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := Run(context.Background(), tasks, Options{Out: out, ToolVersion: "test", export: zombie})
		done <- result{sum, err}
		close(zombieDone)
	}()
	<-frozen
	newer := func(ctx context.Context, session, dir string, o export.Options) (*export.Report, error) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return nil, err
		}
		lock, err := output.LockDestination(dir)
		if err != nil {
			return nil, err
		}
		defer lock.Unlock()
		close(thaw)
		<-zombieDone
		return &export.Report{Episodes: 1, Frames: 10}, nil
	}
	sum, err := Run(context.Background(), tasks, Options{Out: out, ToolVersion: "test", export: newer})
	if err != nil {
		t.Fatal(err)
	}
	if r := sum.Results[0]; r.Outcome != OutcomeExported || r.Record.AttemptNo != 2 {
		t.Fatalf("newer attempt: %s (%s)", r.Outcome, r.Reason)
	}
	z := <-done
	if z.err != nil {
		t.Fatal(z.err)
	}
	if r := z.sum.Results[0]; r.Outcome == OutcomeExported || r.Record == nil || r.Record.State == campaign.StateInterrupted {
		t.Errorf("the zombie's run: %s (%s) %+v", r.Outcome, r.Reason, r.Record)
	}
	if got := states(t, out, tasks[0].ID); got != "superseded/ succeeded/" {
		t.Errorf("records %s, want superseded/ succeeded/", got)
	}
}

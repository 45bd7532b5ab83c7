package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/testenv"
)

// TestE2EBatchWaitsForFrozenPeer runs a campaign's task in one batch
// process, freezes it (SIGSTOP) holding the shard's lock, and runs the
// same task from a second batch on another host (a UTS namespace of its
// own, under unshare -u: the first one's record is of a host it cannot
// look into, as a requeued array task's is), with max_attempts 3 and
// --wait-busy. The second waits for the first without a record per look
// and without using up the attempts; once the first resumes (SIGCONT) and
// commits, the second finds the task done. One record, one succeeded
// attempt, the shard's attempt_no 1.
func TestE2EBatchWaitsForFrozenPeer(t *testing.T) {
	if err := exec.Command("unshare", "-u", "true").Run(); err != nil {
		testenv.Missing(t, "unshare -u (a UTS namespace, as root): %v", err)
	}
	root := t.TempDir()
	session := synthSession(t, "--seed", "5", "--cameras", "1", "--time-scale", "0.3")
	manifest := filepath.Join(root, "campaign.json")
	if err := os.WriteFile(manifest, []byte(`{"schema_version": 1, "campaign_id": "peer",
  "defaults": {"retry_policy": {"max_attempts": 3, "retry_categories": ["io_error", "lost", "busy"]}, "export": {"no_report": true}},
  "settings": {"h264": {"export": {"vcodec": "h264"}}},
  "cases": [{"case_id": "a", "setting_id": "h264", "run_id": "1", "session": "`+session+`"}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "out")
	const id = "peer__a__h264__run-1"

	first, ctx, cancel := binaryCommand("batch", manifest, "-o", out, "--jobs", "1")
	defer cancel()
	var firstErr strings.Builder
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if stopped {
			_ = first.Process.Signal(syscall.SIGCONT)
		}
	}()
	lock := filepath.Join(out, "."+id+".ceres-lock")
	// Frozen once its attempt is recorded and its export holds the lock: a
	// task first takes and drops the lock to see whether the shard is busy,
	// then records its attempt, then stages; the holder writes its pid
	// into the lock file once it holds it. The file alone is too early.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if recs, _ := campaign.ReadRecords(out, id); len(recs) == 1 {
			if b, err := os.ReadFile(lock); err == nil && strings.HasPrefix(string(b), "pid ") {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first batch took no shard lock and recorded no attempt in a minute:\n%s", firstErr.String())
		}
	}
	if err := first.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped = true

	second := exec.Command("unshare", "-u", "sh", "-c", `hostname ceres-test-other-node && exec "$@"`, "sh",
		ceresBinary, "batch", manifest, "-o", out, "--jobs", "1", "--wait-busy", "1m")
	var secondOut strings.Builder
	second.Stdout, second.Stderr = &secondOut, &secondOut
	start := time.Now()
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- second.Wait() }()
	// Longer than the three looks after which the second used to give up.
	select {
	case err := <-done:
		t.Fatalf("the second batch ended after %v while the first was frozen: %v\n%s", time.Since(start).Round(time.Millisecond), err, secondOut.String())
	case <-time.After(5 * time.Second):
	}
	if recs, _ := campaign.ReadRecords(out, id); len(recs) != 1 {
		t.Errorf("%d records while the second batch waits, want the first's alone", len(recs))
	}
	_ = first.Process.Signal(syscall.SIGCONT)
	stopped = false
	if err := first.Wait(); err != nil || ctx.Err() != nil {
		t.Fatalf("first batch: %v\n%s", err, firstErr.String())
	}
	if err := <-done; err != nil {
		t.Fatalf("second batch: %v\n%s", err, secondOut.String())
	}
	if !strings.Contains(secondOut.String(), "skipped (attempt 1") {
		t.Errorf("the second batch did not find the task done:\n%s", secondOut.String())
	}
	recs := readRecords(t, out, id)
	if len(recs) != 1 || recs[0].State != campaign.StateSucceeded {
		t.Fatalf("records %+v, want one succeeded", recs)
	}
	if a := shardAttempt(t, filepath.Join(out, id)); a != 1 {
		t.Errorf("the shard says attempt %d, want 1", a)
	}
}

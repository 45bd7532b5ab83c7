package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// TestE2ESlurmNodesFrozen freezes (SIGSTOP) an array task's export on its
// node and cuts the node off (its slurmd killed): SLURM requeues the task
// onto another node, whose hostname differs, while the frozen one still
// holds the task. Frozen holding the shard's lock, it is waited for: the
// requeued task waits (--wait-busy) without burning the retry policy's
// max_attempts 3 and without a record per look, and once the export
// resumes (SIGCONT) and commits, finds the task done. Frozen before it
// took the lock, it is superseded: the requeued attempt, newer, commits,
// and the resumed one's commit is refused. Either way the task ends with
// exactly one succeeded attempt whose attempt_no the shard carries, at
// most two records, and the rerun job after the array finds it done.
func TestE2ESlurmNodesFrozen(t *testing.T) {
	c := slurmNodes(t)
	for _, tc := range []struct {
		name string
		// locked: freeze once the shard's lock is taken; else as soon as
		// the attempt's record is written (before its lock, mostly: the
		// export reads and plans the journal first).
		locked bool
		// want: the task's records, state/category in attempt order, for
		// each way the freeze fell (before or after the lock).
		want []string
	}{
		{"holding the lock", true, []string{"succeeded/"}},
		{"before the lock", false, []string{"superseded/ succeeded/", "succeeded/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			manifest, ids := nodesManifestWith(t, root, "frozen",
				`"retry_policy": {"max_attempts": 3, "retry_categories": ["io_error", "lost", "busy"]}, `, "long", "short1")
			out := filepath.Join(root, "out")
			array, _ := c.submit(t, manifest, out, 2)
			if !tc.locked {
				// The attempt's record appears before its export reads and
				// plans the journal, and takes the lock after: look for
				// it often, to freeze the attempt in between.
				rec := filepath.Join(out, layout.AttemptsDir, ids[0], layout.AttemptRecordName(1))
				for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(2 * time.Millisecond) {
					if _, err := os.Stat(rec); err == nil {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("no attempt of %s after 2 minutes\n%s", ids[0], slurmLogs(out))
					}
				}
			}
			first := waitRunning(t, out, ids[0], 2*time.Minute)
			node, job := first.Scheduler["SLURM_JOB_NODELIST"], first.Scheduler["SLURM_JOB_ID"]
			if first.PID <= 0 || node == "" {
				t.Fatalf("running attempt %+v", first)
			}
			lockFile := filepath.Join(out, "."+ids[0]+".ceres-lock")
			for deadline := time.Now().Add(time.Minute); tc.locked; time.Sleep(20 * time.Millisecond) {
				if _, err := os.Stat(lockFile); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s's lock not taken a minute after its attempt started\n%s", ids[0], slurmLogs(out))
				}
			}
			if err := syscall.Kill(first.PID, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			_, lockErr := os.Stat(lockFile)
			t.Logf("froze pid %d on %s (%s), its shard lock taken: %v", first.PID, node, first.Host, lockErr == nil)
			thawed := false
			thaw := func() {
				if !thawed {
					_ = syscall.Kill(first.PID, syscall.SIGCONT)
					thawed = true
				}
			}
			t.Cleanup(func() {
				thaw()
				cancel := exec.Command("scancel", array, c.reruns[array])
				cancel.Env = c.env
				_ = cancel.Run()
				c.cluster(t, "restart-node", node)
			})
			c.cluster(t, "kill-node", node)
			frozen := time.Now()

			// Wait for the requeued task to run on another node, hurrying
			// SLURM's own delay before a requeued job may start.
			var requeued slurmJob
			for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
				j := c.jobs(t, job)["0"]
				if j.Restarts > 0 && j.State == "PENDING" {
					upd := exec.Command("scontrol", "update", "JobId="+job, "StartTime=now")
					upd.Env = c.env
					_ = upd.Run()
				}
				if j.Restarts > 0 && j.State == "RUNNING" {
					requeued = j
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("array task 0 not running again %v after its node froze: %+v\n%s", time.Since(frozen), j, slurmLogs(out))
				}
			}
			if requeued.Nodes == node {
				t.Fatalf("requeued onto the frozen node %s", node)
			}
			if tc.locked {
				// Longer than the requeued task's three looks took before
				// it gave up as busy with max_attempts 3.
				time.Sleep(6 * time.Second)
				if j := c.jobs(t, job)["0"]; j.State != "RUNNING" {
					t.Fatalf("the requeued task did not wait for the frozen one: %+v\n%s", j, slurmLogs(out))
				}
				if recs := readRecords(t, out, ids[0]); len(recs) != 1 {
					t.Fatalf("%d records while the requeued task waits, want the frozen attempt's alone", len(recs))
				}
			}
			thaw()
			c.waitGone(t, out, 5*time.Minute, array, c.reruns[array])

			if j := c.jobs(t, c.reruns[array])[""]; j.State != "COMPLETED" || j.Exit != "0:0" {
				t.Errorf("rerun job: %+v", j)
			}
			for i, id := range ids {
				recs := readRecords(t, out, id)
				var won []campaign.Record
				var desc, states []string
				for _, r := range recs {
					desc = append(desc, strconv.Itoa(r.AttemptNo)+" "+r.State+"/"+r.Category+" token "+strconv.FormatInt(r.FencingToken, 10)+" on "+r.Host)
					states = append(states, r.State+"/"+r.Category)
					if r.State == campaign.StateSucceeded {
						won = append(won, r)
					}
				}
				t.Logf("%s: %s", id, strings.Join(desc, "; "))
				if len(won) != 1 {
					t.Errorf("%s: %d succeeded attempts, want 1", id, len(won))
					continue
				}
				if a := shardAttempt(t, filepath.Join(out, id)); a != int64(won[0].AttemptNo) {
					t.Errorf("%s: the shard says attempt %d, the succeeded record %d", id, a, won[0].AttemptNo)
				}
				if got := strings.Join(states, " "); i == 0 && !slices.Contains(tc.want, got) {
					t.Errorf("%s: records %s, want one of %q", id, got, tc.want)
				}
			}
			if stdout, stderr, code := run(t, "batch", "status", out); code != 0 || strings.Contains(stdout, "running") {
				t.Errorf("batch status: exit %d\n%s\n%s", code, stdout, stderr)
			}
			noLeftovers(t, out)
			if t.Failed() {
				t.Log(slurmLogs(out))
			}
		})
	}
}

// TestE2ESlurmSubmitOnePipelinePerOut submits a campaign twice into one
// OUT: the second is refused (exit 4) while the first's jobs are queued or
// running, and submits nothing.
func TestE2ESlurmSubmitOnePipelinePerOut(t *testing.T) {
	c := slurmNodes(t)
	root := t.TempDir()
	manifest, _ := nodesManifest(t, root, "twice", "short1", "short2")
	out, merged := filepath.Join(root, "out"), filepath.Join(root, "merged")
	array, _ := c.submit(t, manifest, out, 2, "--merge", merged)
	cmd := exec.Command(ceresBinary, "batch", "slurm", manifest, "-o", out, "--merge", merged, "--array-count", "2", "--submit")
	cmd.Env = c.env
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailed || !strings.Contains(string(b), array) || strings.Contains(string(b), "array job") {
		t.Fatalf("second submission while the first is queued: %v\n%s", err, b)
	}
}

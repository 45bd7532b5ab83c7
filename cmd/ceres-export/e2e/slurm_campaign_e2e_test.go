package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/testtree"
)

// campaignSessions is the size of TestE2ESlurmCampaignFrozenAndKilled's
// campaign.
const campaignSessions = 60

// TestE2ESlurmCampaignFrozenAndKilled runs a campaign of 60 sessions on the
// cluster's three nodes with a merge, and while it runs freezes one node
// (its export SIGSTOPped, its slurmd killed; the export resumed later) and
// loses another like a power cut (its slurmd and its export SIGKILLed).
// Nothing is done by hand but bringing the nodes back: every task ends with
// exactly one succeeded attempt whose attempt_no its shard carries, every
// shard holds the bytes of a local batch's (but ceres/campaign.json, which
// names the attempt), and the merged dataset holds the local merge's data
// and videos, and the meta of a local merge of the same shards.
func TestE2ESlurmCampaignFrozenAndKilled(t *testing.T) {
	c := slurmNodes(t)
	if len(c.nodes) < 3 {
		t.Fatalf("want three nodes, have %v", c.nodes)
	}
	root := t.TempDir()
	sdir := filepath.Join(root, "sessions")
	var cases, ids []string
	errs := make([]error, campaignSessions)
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i := range campaignSessions {
		name := fmt.Sprintf("s%02d", i)
		cases = append(cases, fmt.Sprintf(`{"case_id": %q, "setting_id": "h264", "run_id": "1", "session": %q}`, name, filepath.Join(sdir, name)))
		ids = append(ids, "big__"+name+"__h264__run-1")
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if b, err := exec.Command(ceresBinary, "synth", "-o", filepath.Join(sdir, name), "--seed", fmt.Sprint(100+i),
				"--time-scale", "0.05", "--width", "64", "--height", "64", "--cameras", "1").CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("synth %s: %v\n%s", name, err, b)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	manifest := filepath.Join(root, "campaign.json")
	if err := os.WriteFile(manifest, []byte(`{"schema_version": 1, "campaign_id": "big",
  "defaults": {"retry_policy": {"max_attempts": 3, "retry_categories": ["io_error", "lost", "busy"]}, "export": {"camera_jobs": 1, "no_report": true}},
  "settings": {"h264": {"export": {"vcodec": "h264", "crf": 28}}},
  "cases": [`+strings.Join(cases, ",\n")+`]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, merged := filepath.Join(root, "out"), filepath.Join(root, "merged")
	array, merge := c.submit(t, manifest, out, 3, "--merge", merged)
	rerun := c.reruns[array]

	// Two attempts running on two nodes: freeze the one, cut the other.
	running := map[string]campaign.Record{}
	for deadline := time.Now().Add(3 * time.Minute); len(running) < 2; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no two nodes running attempts in 3 minutes (%d)\n%s", len(running), slurmLogs(out))
		}
		for _, id := range ids {
			recs, _ := campaign.ReadRecords(out, id)
			for _, r := range recs {
				if n := r.Scheduler["SLURM_JOB_NODELIST"]; r.State == campaign.StateRunning && n != "" {
					if _, ok := running[n]; !ok && len(running) < 2 {
						running[n] = r
					}
				}
			}
		}
	}
	var frozen, killed campaign.Record
	i := 0
	for _, r := range running {
		if i == 0 {
			frozen = r
		} else {
			killed = r
		}
		i++
	}
	fNode, kNode := frozen.Scheduler["SLURM_JOB_NODELIST"], killed.Scheduler["SLURM_JOB_NODELIST"]
	if err := syscall.Kill(frozen.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	thawed := false
	t.Cleanup(func() {
		if !thawed {
			_ = syscall.Kill(frozen.PID, syscall.SIGCONT)
		}
		cancel := exec.Command("scancel", array, rerun, merge)
		cancel.Env = c.env
		_ = cancel.Run()
		c.cluster(t, "restart-node", fNode)
		c.cluster(t, "restart-node", kNode)
	})
	c.cluster(t, "kill-node", fNode)
	c.cluster(t, "kill-node", kNode)
	_ = syscall.Kill(killed.PID, syscall.SIGKILL)
	t.Logf("froze %s (pid %d on %s), cut %s (pid %d on %s)", frozen.TaskID, frozen.PID, fNode, killed.TaskID, killed.PID, kNode)

	// The frozen node's array task requeued (hurrying SLURM's own delay),
	// the power-cut node's requeued or failed; that node comes back then.
	if frozen.Array == nil || killed.Array == nil {
		t.Fatalf("attempts without their array share: %+v %+v", frozen.Array, killed.Array)
	}
	back := false
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		done := 0
		jobs := c.jobs(t, array)
		for _, r := range []campaign.Record{frozen, killed} {
			task := strconv.Itoa(r.Array.Index)
			j := jobs[task]
			if j.Restarts > 0 && j.State == "PENDING" {
				upd := exec.Command("scontrol", "update", "JobId="+array+"_"+task, "StartTime=now")
				upd.Env = c.env
				_ = upd.Run()
			}
			// The killed export's array task ends (FAILED when SLURM sees
			// the kill, COMPLETED when its node's slurmd reports it later;
			// the rerun job then runs what is not done) or SLURM requeues
			// it. What must hold is checked below: the merge completes,
			// one succeeded attempt per task, the local batch's shards.
			if j.Restarts > 0 || r.PID == killed.PID && (j.State == "FAILED" || j.State == "COMPLETED") {
				done++
				if r.PID == killed.PID && !back {
					c.cluster(t, "restart-node", kNode)
					back = true
				}
			}
		}
		if done == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the array tasks of the lost nodes were not requeued (or failed) in 3 minutes: %+v\n%s", jobs, slurmLogs(out))
		}
	}
	time.Sleep(5 * time.Second)
	_ = syscall.Kill(frozen.PID, syscall.SIGCONT)
	thawed = true
	c.cluster(t, "restart-node", fNode)
	c.waitGone(t, out, 10*time.Minute, array, rerun, merge)
	if st := jobField(t, c.env, merge, "JobState"); st != "COMPLETED" {
		t.Fatalf("merge job %s\n%s", st, slurmLogs(out))
	}

	// The same campaign locally, then compared.
	ref, refMerged := filepath.Join(root, "ref"), filepath.Join(root, "ref-merged")
	mustRun(t, "batch", manifest, "-o", ref, "--jobs", "2", "--merge", refMerged)
	attempts := 0
	for _, id := range ids {
		recs := readRecords(t, out, id)
		attempts += len(recs)
		var won []campaign.Record
		for _, r := range recs {
			if r.State == campaign.StateSucceeded {
				won = append(won, r)
			}
		}
		if len(won) != 1 {
			t.Errorf("%s: %d succeeded attempts, want 1 (%d records)", id, len(won), len(recs))
			continue
		}
		if a := shardAttempt(t, filepath.Join(out, id)); a != int64(won[0].AttemptNo) {
			t.Errorf("%s: the shard says attempt %d, the succeeded record %d", id, a, won[0].AttemptNo)
		}
		got, want := testtree.Files(t, filepath.Join(out, id)), testtree.Files(t, filepath.Join(ref, id))
		delete(got, layout.CampaignPath)
		delete(got, layout.SealPath) // it holds campaign.json's hash
		delete(want, layout.CampaignPath)
		delete(want, layout.SealPath)
		if d := testtree.Differing(got, want); len(d) > 0 {
			t.Errorf("%s differs from the local batch's: %s", id, strings.Join(d, ", "))
		}
	}
	t.Logf("%d tasks, %d attempt records", len(ids), attempts)
	flat := filepath.Join(root, "flat")
	args := []string{"merge"}
	for _, id := range ids {
		args = append(args, filepath.Join(out, id))
	}
	mustRun(t, append(args, "-o", flat)...)
	got := testtree.Files(t, filepath.Join(merged, "h264"))
	local, same := testtree.Files(t, filepath.Join(refMerged, "h264")), testtree.Files(t, flat)
	for _, rel := range testtree.Differing(got, local) {
		// meta/ names each episode's attempt: equal to a merge of the same
		// shards; everything else equal to the local merge.
		if !strings.HasPrefix(rel, "meta/") && !strings.HasPrefix(rel, layout.CeresDir+"/") && rel != layout.CardPath {
			t.Errorf("%s of the merged dataset differs from the local merge's", rel)
		}
	}
	for _, rel := range testtree.Differing(got, same) {
		if !strings.HasPrefix(rel, layout.CeresDir+"/") && rel != layout.CardPath {
			t.Errorf("%s of the merged dataset differs from a merge of the same shards", rel)
		}
	}
	noLeftovers(t, out)
	if t.Failed() {
		t.Log(slurmLogs(out))
	}
}

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/internal/testenv"
	"github.com/ceres-robotics/ceres-export/internal/testtree"
)

// The tests of this file run campaigns on a real SLURM cluster of several
// nodes on this machine (tests/slurm/cluster.sh start, three nodes by
// default): an array spread over the nodes, a node lost while one of its
// array tasks exports, an array task cancelled by the scheduler. Every
// node is its own slurmd, so a test can lose one (SIGKILL its slurmd) and
// bring it back; the jobs' processes on a lost node keep running, as on a
// node cut off from the network, and write to the same OUT.

// nodesCluster is the cluster these tests drive.
type nodesCluster struct {
	env    []string // reaches the cluster (SLURM_CONF)
	dir    string   // cluster.sh's DIR
	script string   // tests/slurm/cluster.sh
	nodes  []string // n1, n2, ...
	cpus   int      // CPUs of a node: an array task asks for all of them
	// reruns are the rerun jobs of the submissions, by array job id.
	reruns map[string]string
}

// slurmNodes returns the cluster of CERES_SLURM_CONF (or one of the test's
// own), every node up: a test that lost a node brings it back, but one
// that failed half-way may not have, and each test starts from a whole
// cluster whatever ran before it.
func slurmNodes(t *testing.T) *nodesCluster {
	t.Helper()
	c := &nodesCluster{env: slurmEnv(t), reruns: map[string]string{}}
	var conf string
	for _, e := range c.env {
		if v, ok := strings.CutPrefix(e, "SLURM_CONF="); ok {
			conf = v
		}
	}
	// cluster.sh start writes slurm.conf and the node list into DIR.
	c.dir = filepath.Dir(conf)
	b, err := os.ReadFile(filepath.Join(c.dir, "nodes"))
	if err != nil {
		testenv.Missing(t, "%s is not a cluster of tests/slurm/cluster.sh start (no node list): %v", conf, err)
	}
	c.nodes = strings.Fields(string(b))
	if len(c.nodes) < 2 {
		testenv.Missing(t, "the cluster of %s has %d node(s); these tests lose one and go on: start it with CERES_SLURM_NODES=3 (cluster.sh's default)", conf, len(c.nodes))
	}
	if c.script, err = filepath.Abs(filepath.Join("..", "..", "..", "tests", "slurm", "cluster.sh")); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.nodes {
		if st := c.nodeState(t, n); st != "idle" {
			t.Logf("node %s is %s at the start: restarting its slurmd", n, st)
			c.cluster(t, "restart-node", n)
		}
	}
	cpus, err := strconv.Atoi(strings.TrimSpace(c.slurm(t, "sinfo", "-h", "-n", c.nodes[0], "-o", "%c")))
	if err != nil || cpus < 1 {
		t.Fatalf("CPUs of %s: %v", c.nodes[0], err)
	}
	c.cpus = cpus
	return c
}

// slurm runs a SLURM client command and returns its output.
func (c *nodesCluster) slurm(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = c.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// cluster runs a cluster.sh subcommand on the cluster's DIR.
func (c *nodesCluster) cluster(t *testing.T, sub string, args ...string) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{c.script, sub, c.dir}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cluster.sh %s %s: %v\n%s", sub, strings.Join(args, " "), err, out)
	}
}

// nodeState is sinfo's state of a node ("idle", "alloc", "down*", ...).
func (c *nodesCluster) nodeState(t *testing.T, node string) string {
	t.Helper()
	return strings.TrimSpace(c.slurm(t, "sinfo", "-h", "-n", node, "-o", "%t"))
}

// submit runs batch slurm --submit for the manifest into out as an array
// of shares tasks, each asking for a node's worth of CPUs, and returns the
// array's (and merge's) job ids; the rerun job's is c.reruns[array].
// Whatever the test leaves queued is cancelled at its end.
func (c *nodesCluster) submit(t *testing.T, manifest, out string, shares int, extra ...string) (array, merge string) {
	t.Helper()
	args := append([]string{"batch", "slurm", manifest, "-o", out, "--array-count", strconv.Itoa(shares), "--jobs", "1",
		"--cpus-per-task", strconv.Itoa(c.cpus), "--submit"}, extra...)
	cmd := exec.Command(ceresBinary, args...)
	cmd.Env = c.env
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("batch slurm --submit: %v\n%s", err, b)
	}
	var rerun string
	for _, m := range regexp.MustCompile(`(?m)^(array|rerun|merge) job (\d+)$`).FindAllStringSubmatch(string(b), -1) {
		switch m[1] {
		case "array":
			array = m[2]
		case "rerun":
			rerun = m[2]
		default:
			merge = m[2]
		}
	}
	if array == "" || rerun == "" {
		t.Fatalf("no array or rerun job id in:\n%s", b)
	}
	c.reruns[array] = rerun
	t.Cleanup(func() {
		cmd := exec.Command("scancel", array, rerun)
		if merge != "" {
			cmd.Args = append(cmd.Args, merge)
		}
		cmd.Env = c.env
		_ = cmd.Run()
	})
	return array, merge
}

// slurmJob is one job (one array task) as scontrol shows it.
type slurmJob struct {
	ID, ArrayTask, State, Exit, Nodes string
	Restarts                          int
}

var scontrolFieldRe = regexp.MustCompile(`(?:^|\s)(JobId|ArrayTaskId|JobState|Restarts|ExitCode|NodeList)=(\S*)`)

// jobs returns scontrol's jobs of id (an array's tasks, by task index).
func (c *nodesCluster) jobs(t *testing.T, id string) map[string]slurmJob {
	t.Helper()
	all := map[string]slurmJob{}
	for _, line := range strings.Split(strings.TrimSpace(c.slurm(t, "scontrol", "-o", "show", "job", id)), "\n") {
		var j slurmJob
		for _, m := range scontrolFieldRe.FindAllStringSubmatch(line, -1) {
			switch m[1] {
			case "JobId":
				j.ID = m[2]
			case "ArrayTaskId":
				j.ArrayTask = m[2]
			case "JobState":
				j.State = m[2]
			case "Restarts":
				j.Restarts, _ = strconv.Atoi(m[2])
			case "ExitCode":
				j.Exit = m[2]
			case "NodeList":
				j.Nodes = m[2]
			}
		}
		all[j.ArrayTask] = j
	}
	return all
}

// waitGone waits until none of the jobs ids is queued or running any more.
func (c *nodesCluster) waitGone(t *testing.T, out string, limit time.Duration, ids ...string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		if strings.TrimSpace(c.slurm(t, "squeue", "-h", "-j", strings.Join(ids, ","), "-o", "%i %t")) == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs %v still queued after %v:\n%s\n%s", ids, limit, c.slurm(t, "squeue"), slurmLogs(out))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// slurmLogs returns the jobs' log files under OUT, for a failure's message.
func slurmLogs(out string) string {
	logs, _ := filepath.Glob(filepath.Join(globEscape(out), filepath.FromSlash(layout.SlurmLogsDir), "*"))
	var b strings.Builder
	for _, l := range logs {
		text, _ := os.ReadFile(l)
		fmt.Fprintf(&b, "== %s\n%s", filepath.Base(l), text)
	}
	return b.String()
}

// nodesSessions are the sessions of these tests: three short ones and a
// long one (an export of several seconds, long enough to lose its node
// during it), written once per test binary.
var (
	nodesOnce     sync.Once
	nodesSessDir  string
	nodesSessErr  error
	nodesSessions = []struct{ name, timeScale, seed string }{
		{"short1", "0.5", "41"}, {"short2", "0.5", "42"}, {"short3", "0.5", "43"}, {"long", "8", "44"},
	}
)

func nodesSessionsDir(t *testing.T) string {
	t.Helper()
	nodesOnce.Do(func() {
		nodesSessDir = filepath.Join(filepath.Dir(ceresBinary), "nodes-sessions")
		var wg sync.WaitGroup
		errs := make([]error, len(nodesSessions))
		for i, s := range nodesSessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, err := exec.Command(ceresBinary, "synth", "-o", filepath.Join(nodesSessDir, s.name), "--seed", s.seed,
					"--time-scale", s.timeScale, "--width", "64", "--height", "64").CombinedOutput()
				if err != nil {
					errs[i] = fmt.Errorf("synth %s: %v\n%s", s.name, err, out)
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				nodesSessErr = err
			}
		}
	})
	if nodesSessErr != nil {
		t.Fatal(nodesSessErr)
	}
	return nodesSessDir
}

// nodesManifest writes a manifest of one case per session named (case
// c01, c02, ... in that order; a session may serve several cases) into
// dir and returns its path and the cases' task ids. Tasks go to array
// tasks round robin: with 3 array tasks case i runs in share i%3.
func nodesManifest(t *testing.T, dir, campaignID string, sessions ...string) (string, []string) {
	t.Helper()
	return nodesManifestWith(t, dir, campaignID, "", sessions...)
}

// nodesManifestWith is nodesManifest whose defaults hold more fields
// (policy: JSON members, each followed by a comma).
func nodesManifestWith(t *testing.T, dir, campaignID, policy string, sessions ...string) (string, []string) {
	t.Helper()
	sdir := nodesSessionsDir(t)
	var cases, ids []string
	for i, s := range sessions {
		id := fmt.Sprintf("c%02d", i+1)
		cases = append(cases, fmt.Sprintf(`{"case_id": %q, "setting_id": "h264", "run_id": "1", "session": %q}`, id, filepath.Join(sdir, s)))
		ids = append(ids, campaignID+"__"+id+"__h264__run-1")
	}
	manifest := filepath.Join(dir, "campaign.json")
	if err := os.WriteFile(manifest, []byte(`{"schema_version": 1, "campaign_id": "`+campaignID+`",
  "defaults": {`+policy+`"export": {"camera_jobs": 1, "no_report": true}},
  "settings": {"h264": {"export": {"vcodec": "h264", "crf": 28}}},
  "cases": [
    `+strings.Join(cases, ",\n    ")+`
  ]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	return manifest, ids
}

// readRecords returns a task's records, failing on a damaged one.
func readRecords(t *testing.T, out, id string) []campaign.Record {
	t.Helper()
	recs, err := campaign.ReadRecords(out, id)
	if err != nil {
		t.Fatalf("records of %s: %v", id, err)
	}
	return recs
}

// waitRunning waits for a running attempt of task id and returns it.
func waitRunning(t *testing.T, out, id string, limit time.Duration) campaign.Record {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		// A record is written whole (a link, then an atomic rename):
		// an error here is the directory not made yet.
		recs, _ := campaign.ReadRecords(out, id)
		for _, r := range recs {
			if r.State == campaign.StateRunning {
				return r
			}
			if r.State != campaign.StateRunning {
				t.Fatalf("%s: attempt %d ended (%s) before the test saw it run: make its session longer", id, r.AttemptNo, r.State)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no running attempt of %s after %v:\n%s", id, limit, slurmLogs(out))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// noLeftovers fails on staging directories or lock files left in out.
func noLeftovers(t *testing.T, out string) {
	t.Helper()
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".ceres-tmp-") || strings.HasSuffix(e.Name(), ".ceres-lock") {
			t.Errorf("left behind in OUT: %s", e.Name())
		}
	}
}

// shardAttempt is the attempt_no in a shard's ceres/campaign.json.
func shardAttempt(t *testing.T, dir string) int64 {
	t.Helper()
	var c shard.CampaignOrigin
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(layout.CampaignPath)))
	if err != nil || json.Unmarshal(b, &c) != nil {
		t.Errorf("%s: %s %v", dir, b, err)
	}
	return c.AttemptNo
}

// TestE2ESlurmNodesSpread runs an array over the cluster's nodes, each
// array task asking for a whole node, with the merge after it as a tree
// (--merge-group-size 2: a job array merging two groups, then the merge
// job joining them): the attempt records say that several nodes ran
// tasks, the merged dataset is sound and holds, in data/, meta/ and
// videos/, the bytes of one flat merge of the same shards.
func TestE2ESlurmNodesSpread(t *testing.T) {
	c := slurmNodes(t)
	root := t.TempDir()
	// Three sessions of their own: merge refuses one session twice.
	manifest, ids := nodesManifest(t, root, "spread", "short1", "short2", "short3")
	out, merged := filepath.Join(root, "out"), filepath.Join(root, "merged")
	array, merge := c.submit(t, manifest, out, 3, "--merge", merged, "--merge-group-size", "2")
	c.waitGone(t, out, 5*time.Minute, array, merge)
	if st := jobField(t, c.env, merge, "JobState"); st != "COMPLETED" {
		t.Fatalf("merge job %s\n%s", st, slurmLogs(out))
	}
	jobs := c.jobs(t, array)
	for i := range 3 {
		if j := jobs[strconv.Itoa(i)]; j.State != "COMPLETED" || j.Exit != "0:0" {
			t.Errorf("array task %d: %+v", i, j)
		}
	}
	nodes := map[string]bool{}
	for i, id := range ids {
		recs := readRecords(t, out, id)
		if len(recs) != 1 || recs[0].State != campaign.StateSucceeded || recs[0].Array == nil || recs[0].Array.Index != i%3 {
			t.Errorf("%s: records %+v", id, recs)
			continue
		}
		n := recs[0].Scheduler["SLURM_JOB_NODELIST"]
		if !slices.Contains(c.nodes, n) {
			t.Errorf("%s ran on %q, not a node of the cluster %v", id, n, c.nodes)
		}
		nodes[n] = true
	}
	t.Logf("the array ran on %d nodes: %v", len(nodes), nodes)
	if len(nodes) < 2 {
		t.Errorf("the array ran on %d node(s), want several: %v", len(nodes), nodes)
	}
	if stdout, stderr, code := run(t, "verify", filepath.Join(merged, "h264")); code != 0 {
		t.Errorf("verify of the merged dataset: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(slurmLogs(out), "merge-groups") {
		t.Errorf("no merge-groups job ran:\n%s", slurmLogs(out))
	}
	if _, err := os.Stat(filepath.Join(out, layout.MergeGroupsDir)); !os.IsNotExist(err) {
		t.Errorf("the groups' datasets were left behind: %v", err)
	}
	flatArgs := []string{"merge"}
	for _, id := range ids {
		flatArgs = append(flatArgs, filepath.Join(out, id))
	}
	flat := filepath.Join(root, "flat")
	mustRun(t, append(flatArgs, "-o", flat)...)
	tree, want := testtree.Files(t, filepath.Join(merged, "h264")), testtree.Files(t, flat)
	for _, rel := range testtree.Differing(tree, want) {
		if strings.HasPrefix(rel, layout.CeresDir+"/") || rel == layout.CardPath {
			continue // provenance: how the dataset was merged
		}
		t.Errorf("%s of the tree merge differs from the flat merge's (or is in one of them only)", rel)
	}
}

// TestE2ESlurmNodesLost loses a node while one of its array tasks
// exports: SLURM sets the node down and requeues the task (the script
// says --requeue), whose first attempt goes on running on the lost node
// and writing to OUT. The requeued task waits for that attempt (batch
// --wait-busy) or finds its tasks done, so that the campaign ends with
// every task succeeded once, every shard byte for byte an uninterrupted
// run's, and nothing left behind.
func TestE2ESlurmNodesLost(t *testing.T) {
	c := slurmNodes(t)
	root := t.TempDir()
	// Share 0 (cases 1, 4 and 7) exports the long session three times:
	// the attempts on the lost node outlast SLURM's finding it lost.
	manifest, ids := nodesManifest(t, root, "lost", "long", "short1", "short2", "long", "short3", "short1", "long", "short2", "short3")
	out := filepath.Join(root, "out")
	array, _ := c.submit(t, manifest, out, 3)

	first := waitRunning(t, out, ids[0], 2*time.Minute)
	node, job := first.Scheduler["SLURM_JOB_NODELIST"], first.Scheduler["SLURM_JOB_ID"]
	if !slices.Contains(c.nodes, node) || job == "" {
		t.Fatalf("running attempt of %s: node %q, job %q", ids[0], node, job)
	}
	// The node comes back after the test, whatever happens, for the tests
	// after it. Its jobs go first: a failed test's requeued task would
	// take the node as it returns, and restart-node waits for it idle.
	t.Cleanup(func() {
		cancel := exec.Command("scancel", array, c.reruns[array])
		cancel.Env = c.env
		_ = cancel.Run()
		c.cluster(t, "restart-node", node)
	})
	lost := time.Now()
	c.cluster(t, "kill-node", node)
	t.Logf("killed %s's slurmd while job %s exported %s", node, job, ids[0])

	// Meanwhile, the same campaign uninterrupted (it slows the attempts
	// on the lost node, which then outlast the requeue the more surely).
	ref := filepath.Join(root, "reference")
	refDone := make(chan error, 1)
	go func() {
		cmd := exec.Command(ceresBinary, "batch", manifest, "-o", ref, "--jobs", "2")
		if b, err := cmd.CombinedOutput(); err != nil {
			refDone <- fmt.Errorf("reference batch: %v\n%s", err, b)
		}
		close(refDone)
	}()
	// A test that ends early still waits for it, before its directory goes.
	t.Cleanup(func() { <-refDone })

	// SLURM finds the node lost and requeues the task. A requeued job
	// waits two minutes before it may start again (its BeginTime), a
	// delay of SLURM's own: start it now, which changes nothing but when.
	deadline := time.Now().Add(2 * time.Minute)
	for requeued := false; !requeued; {
		j := c.jobs(t, job)["0"]
		switch {
		case j.Restarts > 0 && j.State == "PENDING":
			t.Logf("%s requeued %.0f s after the kill; node %s is %s", job, time.Since(lost).Seconds(), node, c.nodeState(t, node))
			// It may have started in between: then there is nothing to
			// hurry.
			update := exec.Command("scontrol", "update", "JobId="+job, "StartTime=now")
			update.Env = c.env
			if b, err := update.CombinedOutput(); err != nil {
				t.Logf("scontrol update StartTime=now: %v %s", err, b)
			}
			// Whether the requeued task will find an attempt of the lost
			// node still running (and wait for it) depends on the
			// machine's speed: said, not required.
			for _, id := range []string{ids[0], ids[3], ids[6]} {
				recs, _ := campaign.ReadRecords(out, id)
				if len(recs) == 0 || recs[len(recs)-1].State == campaign.StateRunning {
					t.Logf("at the requeue, %s is still to do on the lost node (%d records)", id, len(recs))
				}
			}
			requeued = true
		case j.Restarts > 0 && (j.State == "RUNNING" || j.State == "COMPLETED"):
			t.Logf("%s requeued and %s again %.0f s after the kill", job, j.State, time.Since(lost).Seconds())
			requeued = true
		case j.State == "RUNNING" || j.State == "REQUEUED" || j.State == "COMPLETING":
			// Not found lost yet, or on its way back to the queue.
			if time.Now().After(deadline) {
				t.Fatalf("array task 0 not requeued %v after its node was lost: %+v, node %s", time.Since(lost), j, c.nodeState(t, node))
			}
			time.Sleep(500 * time.Millisecond)
		default:
			t.Fatalf("array task 0 after its node was lost: %+v\n%s", j, slurmLogs(out))
		}
	}
	if st := c.nodeState(t, node); !strings.HasPrefix(st, "down") {
		t.Errorf("node %s is %s after the requeue, want down", node, st)
	}
	c.waitGone(t, out, 5*time.Minute, array, c.reruns[array])
	t.Logf("the campaign ended %.0f s after the kill", time.Since(lost).Seconds())
	// ceres/campaign.json names the attempt that made a shard: it is left
	// out of the comparison with the uninterrupted run (and checked
	// against the records below).
	if err := <-refDone; err != nil {
		t.Fatal(err)
	}
	reference := map[string]map[string][]byte{}
	for _, id := range ids {
		reference[id] = testtree.Files(t, filepath.Join(ref, id))
		// The seal lists the attempt's file's hash: it differs with it.
		delete(reference[id], layout.CampaignPath)
		delete(reference[id], layout.SealPath)
	}

	jobs := c.jobs(t, array)
	for i := range 3 {
		j := jobs[strconv.Itoa(i)]
		if j.State != "COMPLETED" || j.Exit != "0:0" || (i == 0) != (j.Restarts > 0) {
			t.Errorf("array task %d: %+v", i, j)
		}
		if i == 0 && j.Nodes == node {
			t.Errorf("array task 0 was requeued onto its lost node %s", node)
		}
	}
	// Every task succeeded exactly once; an extra attempt is one the
	// requeue made and gave up as lost or busy, or one of the lost node's
	// that a newer attempt superseded, never a second success.
	for _, id := range ids {
		recs := readRecords(t, out, id)
		var won []campaign.Record
		var desc []string
		for _, r := range recs {
			desc = append(desc, fmt.Sprintf("%d %s %s %s", r.AttemptNo, r.State, r.Category, r.Scheduler["SLURM_JOB_NODELIST"]))
			switch {
			case r.State == campaign.StateSucceeded:
				won = append(won, r)
			case r.State == campaign.StateSuperseded:
			case r.State != campaign.StateInterrupted || (r.Category != campaign.CategoryLost && r.Category != campaign.CategoryBusy):
				t.Errorf("%s: attempt %d is %s (%s), want interrupted, lost or busy: %s", id, r.AttemptNo, r.State, r.Category, r.Error)
			}
		}
		t.Logf("%s: %s", id, strings.Join(desc, "; "))
		if len(won) != 1 {
			t.Errorf("%s: %d succeeded attempts, want 1", id, len(won))
			continue
		}
		if a := shardAttempt(t, filepath.Join(out, id)); a != int64(won[0].AttemptNo) {
			t.Errorf("%s: the shard says attempt %d made it, the records %d", id, a, won[0].AttemptNo)
		}
		got := testtree.Files(t, filepath.Join(out, id))
		delete(got, layout.CampaignPath)
		delete(got, layout.SealPath)
		if files := testtree.Differing(got, reference[id]); len(files) > 0 {
			t.Errorf("%s differs from the uninterrupted run's: %s", id, strings.Join(files, ", "))
		}
	}
	noLeftovers(t, out)
	// What array task 0 said, both of its runs (SLURM truncates the log
	// for the requeued run, while the lost node's run writes on).
	if b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(layout.SlurmLogsDir), "array-"+array+"_0.out")); err == nil {
		t.Logf("array task 0's log:\n%s", strings.ReplaceAll(string(b), "\x00", ""))
	}
	// A rerun finds the campaign done.
	if stdout, stderr, code := run(t, "batch", manifest, "-o", out); code != 0 || !strings.Contains(stdout, fmt.Sprintf("(0 exported in this run, %d skipped as done)", len(ids))) {
		t.Errorf("rerun: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if t.Failed() {
		t.Log(slurmLogs(out))
	}
}

// TestE2ESlurmNodesStopped has the scheduler stop one array task while it
// exports, by scancel of its index (SIGTERM, state CANCELLED) or by its
// time limit (SIGTERM, state TIMEOUT), or kills the export (SIGKILL, the
// node staying up: state FAILED, its record left running). SLURM requeues
// none; the rerun
// job after the array (afterany) runs only the unfinished work, with no
// resubmission by hand. The stopped task's attempt is recorded
// interrupted and its second attempt made the shard; what its share
// finished before keeps its one attempt, what it never started gets its
// first attempt, and the other shares are left alone.
func TestE2ESlurmNodesStopped(t *testing.T) {
	c := slurmNodes(t)
	for _, tc := range []struct {
		name     string
		sessions []string // round robin over the array's tasks
		shares   int
		stopped  int // the share stopped, once its first task runs
		// stop stops the array task job while it runs the attempt r.
		stop  func(t *testing.T, job string, r campaign.Record)
		state string
		// category is the stopped attempt's record's.
		category string
	}{
		{
			name:     "scancel",
			sessions: []string{"short1", "short2", "long"},
			shares:   3, stopped: 2,
			stop:     func(t *testing.T, job string, _ campaign.Record) { c.slurm(t, "scancel", job) },
			state:    "CANCELLED",
			category: campaign.CategoryInterrupted,
		},
		{
			// SLURM's smallest time limit is a minute, and slurmctld checks
			// limits every 30 s: the running task's end is moved to 3 s
			// from now (scontrol's EndTime, which shortens its limit) and
			// the limit is hit 3-33 s later. Its share holds eight long
			// exports (about 6 s each on an idle machine, serial with
			// --jobs 1; with six, one run was stopped in its last), so that
			// it is still exporting then, whatever it finished.
			name: "time limit",
			sessions: []string{"short1", "long", "short2", "long", "short3", "long", "short1", "long",
				"short2", "long", "short3", "long", "short1", "long", "short2", "long"},
			shares: 2, stopped: 1,
			stop: func(t *testing.T, job string, _ campaign.Record) {
				c.slurm(t, "scontrol", "update", "JobId="+job, "EndTime="+time.Now().Add(3*time.Second).Format("2006-01-02T15:04:05"))
			},
			state:    "TIMEOUT",
			category: campaign.CategoryInterrupted,
		},
		{
			// The export killed on a node that stays up (the OOM killer,
			// an operator): SLURM fails the array task and does not
			// requeue it; the attempt's record is left running, and the
			// rerun job closes it as lost.
			name:     "killed",
			sessions: []string{"short1", "short2", "long"},
			shares:   3, stopped: 2,
			stop: func(t *testing.T, _ string, r campaign.Record) {
				if err := syscall.Kill(r.PID, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			},
			state:    "FAILED",
			category: campaign.CategoryLost,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			manifest, ids := nodesManifest(t, root, "stopped", tc.sessions...)
			out := filepath.Join(root, "out")
			array, _ := c.submit(t, manifest, out, tc.shares)
			r := waitRunning(t, out, ids[tc.stopped], 2*time.Minute)
			if r.Array == nil || r.Array.Index != tc.stopped {
				t.Fatalf("%s runs in array task %+v, want %d", ids[tc.stopped], r.Array, tc.stopped)
			}
			stopped := time.Now()
			tc.stop(t, array+"_"+strconv.Itoa(tc.stopped), r)
			rerun := c.reruns[array]
			c.waitGone(t, out, 5*time.Minute, array, rerun)
			jobs := c.jobs(t, array)
			for i := range tc.shares {
				want := "COMPLETED"
				if i == tc.stopped {
					want = tc.state
				}
				if j := jobs[strconv.Itoa(i)]; j.State != want {
					t.Errorf("array task %d: %+v, want %s", i, j, want)
				}
			}
			if j := c.jobs(t, rerun)[""]; j.State != "COMPLETED" || j.Exit != "0:0" {
				t.Errorf("rerun job %s: %+v\n%s", rerun, j, slurmLogs(out))
			}
			var interrupted []string
			for i, id := range ids {
				recs := readRecords(t, out, id)
				last := recs[len(recs)-1]
				switch {
				case len(recs) == 1 && last.State == campaign.StateSucceeded:
					// Finished by its share, or never started there and
					// run by the rerun job.
				case len(recs) == 2 && i%tc.shares == tc.stopped && recs[0].State == campaign.StateInterrupted &&
					recs[0].Category == tc.category && last.State == campaign.StateSucceeded:
					interrupted = append(interrupted, id)
					if start, err := time.Parse(time.RFC3339Nano, last.StartedAt); err != nil || start.Before(stopped) {
						t.Errorf("%s: the second attempt started at %s, before the stop", id, last.StartedAt)
					}
				default:
					t.Errorf("%s (share %d): records %+v", id, i%tc.shares, recs)
					continue
				}
				if a := shardAttempt(t, filepath.Join(out, id)); a != int64(last.AttemptNo) {
					t.Errorf("%s: the shard says attempt %d made it, want %d", id, a, last.AttemptNo)
				}
				if stdout, stderr, code := run(t, "verify", "--quick", filepath.Join(out, id)); code != 0 {
					t.Errorf("verify %s: exit %d\n%s\n%s", id, code, stdout, stderr)
				}
			}
			if len(interrupted) != 1 {
				t.Errorf("interrupted tasks %v, want the one the share was exporting", interrupted)
			}
			noLeftovers(t, out)
			if t.Failed() {
				t.Log(slurmLogs(out))
			}
		})
	}
}

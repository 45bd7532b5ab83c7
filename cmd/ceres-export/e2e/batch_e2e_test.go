package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/internal/testtree"
)

// The test campaign: 12 tiny synthetic sessions, retries in all of them
// (synth's default), a crash in two, one and two cameras, two
// specifications (the example and the example with one cycle), one session
// whose journal is corrupt (expected to fail), under two settings (AV1 for
// the one-camera sessions, H.264 for the two-camera ones: merge needs the
// same features, so each setting merges into its own dataset). The session
// page is left out (no_report): it has tests of its own, and under a heavily
// loaded machine its plots took minutes in one run.
type campaignCase struct {
	id, setting string
	synth       []string
	fails       bool
}

var campaignCases = []campaignCase{
	{"s01", "av1", []string{"--seed", "1"}, false},
	{"s02", "av1", []string{"--seed", "2", "--cycles", "1"}, false},
	{"s03", "av1", []string{"--seed", "3", "--fault", "crash"}, false},
	{"s04", "av1", []string{"--seed", "4"}, false},
	{"s05", "av1", []string{"--seed", "5", "--cycles", "1"}, false},
	{"s06", "av1", []string{"--seed", "6", "--fault", "corrupt"}, true},
	{"s07", "h264", []string{"--seed", "7", "--cameras", "2"}, false},
	{"s08", "h264", []string{"--seed", "8", "--cameras", "2", "--cycles", "1"}, false},
	{"s09", "h264", []string{"--seed", "9", "--cameras", "2", "--fault", "crash"}, false},
	{"s10", "h264", []string{"--seed", "10", "--cameras", "2"}, false},
	{"s11", "h264", []string{"--seed", "11", "--cameras", "2", "--cycles", "1"}, false},
	{"s12", "h264", []string{"--seed", "12", "--cameras", "2", "--no-retries"}, false},
}

var (
	campaignOnce sync.Once
	campaignPath string
	campaignErr  error
)

// testCampaign writes the sessions and the manifest once per test binary
// and returns the manifest's path.
func testCampaign(t *testing.T) string {
	t.Helper()
	campaignOnce.Do(func() {
		dir := filepath.Join(filepath.Dir(ceresBinary), "campaign")
		var cases []string
		for _, c := range campaignCases {
			args := append([]string{"synth", "-o", filepath.Join(dir, "sessions", c.id), "--time-scale", "0.1", "--width", "64", "--height", "64"}, c.synth...)
			if out, err := exec.Command(ceresBinary, args...).CombinedOutput(); err != nil {
				campaignErr = fmt.Errorf("synth %s: %v\n%s", c.id, err, out)
				return
			}
			expected := ""
			if c.fails {
				expected = `, "expected": {"state": "failed"}`
			}
			cases = append(cases, fmt.Sprintf(`{"case_id": %q, "setting_id": %q, "run_id": "1", "session": "sessions/%s", "extensions": {"org.ceres.test": {"case": %q}}%s}`,
				c.id, c.setting, c.id, c.id, expected))
		}
		manifest := `{
  "schema_version": 1,
  "campaign_id": "CI week",
  "extensions": {"org.ceres.test": {"campaign": true}, "org.ceres.owner": "ci"},
  "defaults": {"export": {"camera_jobs": 1, "no_report": true}, "expected": {"state": "succeeded", "min_episodes": 1, "min_frames": 30}},
  "settings": {"av1": {"export": {"vcodec": "av1"}}, "h264": {"export": {"vcodec": "h264", "crf": 28}}},
  "cases": [
    ` + strings.Join(cases, ",\n    ") + `
  ]
}
`
		campaignPath = filepath.Join(dir, "campaign.json")
		campaignErr = os.WriteFile(campaignPath, []byte(manifest), 0o644)
	})
	if campaignErr != nil {
		t.Fatal(campaignErr)
	}
	return campaignPath
}

func campaignTaskID(c campaignCase) string { return "ci-week__" + c.id + "__" + c.setting + "__run-1" }

// checkRecords checks every task's attempt records under out: the number of
// attempts, the last one's state, episodes and frames, the shard's
// identity file.
func checkRecords(t *testing.T, out string, attempts int, slurm bool) map[string]campaign.Record {
	t.Helper()
	last := map[string]campaign.Record{}
	for _, c := range campaignCases {
		id := campaignTaskID(c)
		recs, err := campaign.ReadRecords(out, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != attempts {
			t.Errorf("%s: %d attempts, want %d", id, len(recs), attempts)
			continue
		}
		r := recs[len(recs)-1]
		last[id] = r
		want := campaign.StateSucceeded
		if c.fails {
			want = campaign.StateFailed
		}
		if r.State != want || r.TaskID != id || r.CaseID != c.id || r.SettingID != c.setting || r.AttemptNo != attempts ||
			r.Expectation == nil || !r.Expectation.Met || r.Fingerprint == "" || r.Tool.Version != binaryVersion(t) {
			t.Errorf("%s: record %+v", id, r)
		}
		if compactJSON(r.Extensions["org.ceres.test"]) != fmt.Sprintf(`{"case":%q}`, c.id) || compactJSON(r.Extensions["org.ceres.owner"]) != `"ci"` {
			t.Errorf("%s: extensions %s", id, r.Extensions)
		}
		if c.fails {
			if r.ExitStatus == nil || *r.ExitStatus != exitCorrupt || !strings.Contains(r.Error, "checksum mismatch") {
				t.Errorf("%s: failure %v %q", id, r.ExitStatus, r.Error)
			}
			if _, err := os.Stat(filepath.Join(out, id)); err == nil {
				t.Errorf("%s: a failed task left a shard", id)
			}
			continue
		}
		if r.ExitStatus == nil || *r.ExitStatus != 0 || r.Episodes < 1 || r.Frames < 30 || r.ShardReportSHA256 == "" {
			t.Errorf("%s: %+v", id, r)
		}
		var camp shard.CampaignOrigin
		b, err := os.ReadFile(filepath.Join(out, id, filepath.FromSlash(layout.CampaignPath)))
		if err != nil || json.Unmarshal(b, &camp) != nil || camp.TaskID != id || camp.AttemptNo != int64(r.AttemptNo) || camp.CampaignID != "ci-week" {
			t.Errorf("%s: %s %s %v", id, layout.CampaignPath, b, err)
		}
		if slurm && (r.Array == nil || r.Array.Count != 4 || r.Scheduler["SLURM_ARRAY_JOB_ID"] == "" || r.Scheduler["SLURM_JOB_ID"] == "") {
			t.Errorf("%s: no SLURM array in the record: %+v %v", id, r.Array, r.Scheduler)
		}
	}
	return last
}

// shardDigests digests every task's shard under out (nil for a task with
// none), leaving out the files named in skip.
func shardDigests(t *testing.T, out string, skip ...string) map[string]map[string][]byte {
	t.Helper()
	all := map[string]map[string][]byte{}
	for _, c := range campaignCases {
		id := campaignTaskID(c)
		if _, err := os.Stat(filepath.Join(out, id)); err != nil {
			all[id] = nil
			continue
		}
		d := testtree.Files(t, filepath.Join(out, id))
		for _, s := range skip {
			delete(d, s)
		}
		all[id] = d
	}
	return all
}

// runLocal runs the campaign locally with --jobs 2 and --merge.
func runLocal(t *testing.T, manifest, out, merged string) {
	t.Helper()
	stdout, stderr, code := run(t, "batch", manifest, "-o", out, "--jobs", "2", "--merge", merged)
	if code != 0 {
		t.Fatalf("local batch: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "12 tasks: 11 succeeded, 1 failed, 0 interrupted (11 exported in this run, 0 skipped as done); 0 missed their expectation") {
		t.Fatalf("local batch summary:\n%s", stdout)
	}
}

// slurmPackages are what tests/slurm/cluster.sh needs.
var slurmPackages = []string{"slurmctld", "slurmd", "sbatch", "scontrol", "sinfo", "munged", "mungekey"}

// freePort returns a TCP port with its successor free on 127.0.0.1.
func freePort(t *testing.T) int {
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if l2, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1)); err == nil {
			l2.Close()
			return p
		}
	}
	t.Fatal("no two free ports")
	return 0
}

// TestE2EBatchSlurm runs the campaign as a 4-task SLURM job array plus the
// merge job on a real single-node cluster, checks every task's record, and
// proves the shards and merged datasets byte-identical to the same campaign
// run locally with --jobs 2.
func TestE2EBatchSlurm(t *testing.T) {
	env := slurmEnv(t)
	manifest := testCampaign(t)
	root := t.TempDir()

	// The nodes run ceres-export through a wrapper, as a cluster whose
	// nodes run the release image does (docs/campaigns.md): --binary. The
	// wrapper notes each command it runs.
	wrapped := filepath.Join(root, "wrapped.log")
	wrapper := filepath.Join(root, "ceres-export-wrapper")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\necho \"$1\" >> '"+wrapped+"'\nexec '"+ceresBinary+"' \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	slurmOut, slurmMerged := filepath.Join(root, "slurm-out"), filepath.Join(root, "slurm-merged")
	submit := exec.Command(ceresBinary, "batch", "slurm", manifest, "-o", slurmOut, "--merge", slurmMerged,
		"--array-count", "4", "--jobs", "1", "--cpus-per-task", "1", "--binary", wrapper, "--submit")
	submit.Env = env
	subOut, err := submit.CombinedOutput()
	if err != nil {
		t.Fatalf("batch slurm --submit: %v\n%s", err, subOut)
	}
	arrayID := regexp.MustCompile(`(?m)^array job (\d+)$`).FindSubmatch(subOut)
	mergeID := regexp.MustCompile(`(?m)^merge job (\d+)$`).FindSubmatch(subOut)
	if arrayID == nil || mergeID == nil {
		t.Fatalf("no job ids in:\n%s", subOut)
	}
	script2, _ := os.ReadFile(filepath.Join(slurmOut, filepath.FromSlash(layout.SlurmArrayScript)))
	if !bytes.Contains(script2, []byte(`#SBATCH --array="0-3"`)) {
		t.Fatalf("array script:\n%s", script2)
	}

	// Meanwhile, the same campaign locally.
	localOut, localMerged := filepath.Join(root, "local-out"), filepath.Join(root, "local-merged")
	runLocal(t, manifest, localOut, localMerged)

	// Wait for the merge job, then read every job's end.
	deadline := time.Now().Add(10 * time.Minute)
	var mergeState string
	for {
		mergeState = jobField(t, env, string(mergeID[1]), "JobState")
		if mergeState == "COMPLETED" || mergeState == "FAILED" || mergeState == "CANCELLED" || mergeState == "TIMEOUT" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("merge job still %s after 10 minutes", mergeState)
		}
		time.Sleep(time.Second)
	}
	logs, _ := filepath.Glob(filepath.Join(slurmOut, filepath.FromSlash(layout.SlurmLogsDir), "*"))
	var logText strings.Builder
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		fmt.Fprintf(&logText, "== %s\n%s", filepath.Base(l), b)
	}
	if mergeState != "COMPLETED" {
		t.Fatalf("merge job %s\n%s", mergeState, logText.String())
	}
	// Each array task on its own: state and exit code.
	show := exec.Command("scontrol", "show", "job", string(arrayID[1]))
	show.Env = env
	jobs, err := show.CombinedOutput()
	if err != nil {
		t.Fatalf("scontrol show job: %v\n%s", err, jobs)
	}
	tasks := regexp.MustCompile(`ArrayTaskId=(\d+) .*?JobState=(\S+) .*?ExitCode=(\S+)`).FindAllSubmatch(bytes.ReplaceAll(jobs, []byte("\n"), nil), -1)
	if len(tasks) != 4 {
		t.Fatalf("%d array tasks in scontrol's answer, want 4:\n%s", len(tasks), jobs)
	}
	for _, m := range tasks {
		if string(m[2]) != "COMPLETED" || string(m[3]) != "0:0" {
			t.Errorf("array task %s: %s, exit %s", m[1], m[2], m[3])
		}
	}

	// Four array tasks and the rerun job after them.
	if b, _ := os.ReadFile(wrapped); strings.Count(string(b), "batch\n") != 5 || !strings.Contains(string(b), "merge\n") {
		t.Errorf("the jobs did not run --binary's wrapper for each array task, the rerun job and the merge; it ran:\n%s", b)
	}
	// Every task's record; each array task did exactly its own share.
	recs := checkRecords(t, slurmOut, 1, true)
	checkRecords(t, localOut, 1, false)
	for i, c := range campaignCases {
		if r, ok := recs[campaignTaskID(c)]; ok && r.Array != nil && r.Array.Index != i%4 {
			t.Errorf("%s ran in array task %d, its share is %d", c.id, r.Array.Index, i%4)
		}
	}
	// Byte-identical shards and merged datasets.
	local, slurm := shardDigests(t, localOut), shardDigests(t, slurmOut)
	for _, c := range campaignCases {
		id := campaignTaskID(c)
		if c.fails != (local[id] == nil) || !reflect.DeepEqual(local[id], slurm[id]) {
			t.Errorf("%s: the SLURM shard differs from the local one (%d and %d files)", id, len(slurm[id]), len(local[id]))
		}
	}
	for _, setting := range []string{"av1", "h264"} {
		l, s := testtree.Files(t, filepath.Join(localMerged, setting)), testtree.Files(t, filepath.Join(slurmMerged, setting))
		if len(l) == 0 || !sameFiles(l, s) {
			t.Errorf("merged %s: SLURM's (%d files) differs from the local (%d files)", setting, len(s), len(l))
		}
	}
	if t.Failed() {
		t.Log(logText.String())
	}
}

// startCluster starts a cluster of its own with tests/slurm/cluster.sh (its
// stop is a cleanup) and returns its SLURM_CONF. CERES_SLURM_CONF names a
// running one instead (.ci/run starts one).
func startCluster(t *testing.T) string {
	// Everything under one scratch directory, which munged wants
	// searchable by all down to its socket (t.TempDir's are 0700).
	clusterDir, err := os.MkdirTemp("", "ceres-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(clusterDir) })
	if err := os.Chmod(clusterDir, 0o755); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "..", "tests", "slurm", "cluster.sh"))
	if err != nil {
		t.Fatal(err)
	}
	start := exec.Command("bash", script, "start", clusterDir)
	start.Env = append(os.Environ(), fmt.Sprintf("CERES_SLURM_PORT=%d", freePort(t)))
	startOut, err := start.CombinedOutput()
	t.Cleanup(func() {
		if out, err := exec.Command("bash", script, "stop", clusterDir).CombinedOutput(); err != nil {
			t.Errorf("stopping the cluster: %v\n%s", err, out)
		}
	})
	if err != nil {
		t.Fatalf("starting the cluster: %v\n%s", err, startOut)
	}
	return filepath.Join(clusterDir, "slurm.conf")
}

// jobField returns one field of `scontrol show job ID`.
func jobField(t *testing.T, env []string, id, field string) string {
	cmd := exec.Command("scontrol", "show", "job", id)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scontrol show job %s: %v\n%s", id, err, out)
	}
	m := regexp.MustCompile(field + `=(\S+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no %s in:\n%s", field, out)
	}
	return string(m[1])
}

// TestE2EBatchKillResume SIGKILLs a running batch at random instants: no
// shard is ever half-written, a rerun redoes no finished task, and the
// final result equals an uninterrupted run's.
func TestE2EBatchKillResume(t *testing.T) {
	manifest := testCampaign(t)
	root := t.TempDir()
	refOut := filepath.Join(root, "reference")
	began := time.Now()
	runLocal(t, manifest, refOut, filepath.Join(root, "reference-merged"))
	refTime := time.Since(began)
	// ceres/campaign.json names the attempt that made the shard: a killed
	// task's shard comes from a later attempt. Everything else is equal.
	// The attempt (ceres/campaign.json) differs between runs, and with it
	// the seal, which lists that file's hash; every other file is compared.
	reference := shardDigests(t, refOut, layout.CampaignPath, layout.SealPath)

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, uninterrupted run %v", seed, refTime)
	rng := rand.New(rand.NewPCG(seed, 16))
	// Kill at a random instant of what is left to do; when a campaign
	// finishes before its kill, check it and start another, until three
	// kills landed.
	kills, campaigns := 0, 0
	out := filepath.Join(root, "killed-0")
	for round := 0; kills < 3; round++ {
		if round == 15 {
			t.Fatalf("only %d kills in %d rounds", kills, round)
		}
		before := finished(t, out)
		left := float64(len(campaignCases)-len(before)) / float64(len(campaignCases))
		wait := time.Duration(float64(refTime) * left * (0.05 + 0.8*rng.Float64()))
		cmd := exec.Command(ceresBinary, "batch", manifest, "-o", out, "--jobs", "2")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
			t.Logf("round %d: the batch ended before the kill at %v", round, wait)
		case <-time.After(wait):
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
			kills++
			t.Logf("round %d: killed after %v, %d of %d tasks were finished before", round, wait, len(before), len(campaignCases))
		}
		// No half-written shard in sight: every shard directory is sound.
		for _, c := range campaignCases {
			dir := filepath.Join(out, campaignTaskID(c))
			if _, err := os.Stat(dir); err != nil {
				continue
			}
			if _, _, code := run(t, "verify", "--quick", dir); code != 0 {
				t.Fatalf("round %d: %s is not sound after the kill", round, dir)
			}
		}
		// Finished tasks stay finished: same attempt, same record.
		after := finished(t, out)
		for id, r := range before {
			if a, ok := after[id]; !ok || a.AttemptNo != r.AttemptNo || a.StartedAt != r.StartedAt {
				t.Fatalf("round %d: finished task %s was redone: attempt %d, then %+v", round, id, r.AttemptNo, a)
			}
		}
		if len(after) == len(campaignCases) {
			resumeCheck(t, manifest, out, reference)
			campaigns++
			out = filepath.Join(root, fmt.Sprintf("killed-%d", campaigns))
		}
	}
	resumeCheck(t, manifest, out, reference)
}

// resumeCheck finishes the killed campaign in out and compares it with the
// uninterrupted run's shards.
func resumeCheck(t *testing.T, manifest, out string, reference map[string]map[string][]byte) {
	t.Helper()
	before := finished(t, out)
	stdout, stderr, code := run(t, "batch", manifest, "-o", out, "--jobs", "2")
	if code != 0 {
		t.Fatalf("final run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	after := finished(t, out)
	for id, r := range before {
		if after[id].AttemptNo != r.AttemptNo {
			t.Errorf("finished task %s redone by the final run", id)
		}
	}
	if len(after) != len(campaignCases) {
		t.Fatalf("%d tasks finished, want %d", len(after), len(campaignCases))
	}
	if got := shardDigests(t, out, layout.CampaignPath, layout.SealPath); !reflect.DeepEqual(got, reference) {
		for id := range reference {
			if !reflect.DeepEqual(got[id], reference[id]) {
				files := testtree.Differing(got[id], reference[id])
				t.Errorf("%s differs from the uninterrupted run's: %s", id, strings.Join(files, ", "))
			}
		}
	}
	for id, r := range after {
		if r.State == campaign.StateSucceeded {
			var camp shard.CampaignOrigin
			b, _ := os.ReadFile(filepath.Join(out, id, filepath.FromSlash(layout.CampaignPath)))
			if json.Unmarshal(b, &camp) != nil || camp.AttemptNo != int64(r.AttemptNo) {
				t.Errorf("%s: %s %s, record attempt %d", id, layout.CampaignPath, b, r.AttemptNo)
			}
		}
	}
	// Nothing left behind: no staging directory, no lock file.
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".ceres-tmp-") || strings.HasSuffix(e.Name(), ".ceres-lock") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	// A rerun of the finished campaign skips every task.
	stdout, _, code = run(t, "batch", manifest, "-o", out)
	if code != 0 || !strings.Contains(stdout, "(0 exported in this run, 12 skipped as done)") {
		t.Fatalf("rerun: exit %d\n%s", code, stdout)
	}
}

// finished returns the tasks under out whose last attempt ended (succeeded
// or failed), with that record.
func finished(t *testing.T, out string) map[string]campaign.Record {
	t.Helper()
	done := map[string]campaign.Record{}
	for _, c := range campaignCases {
		recs, err := campaign.ReadRecords(out, campaignTaskID(c))
		if err != nil {
			t.Fatal(err)
		}
		for i := len(recs) - 1; i >= 0; i-- {
			if s := recs[i].State; s == campaign.StateSucceeded || s == campaign.StateFailed {
				done[campaignTaskID(c)] = recs[i]
				break
			}
		}
	}
	return done
}

func compactJSON(b []byte) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return "invalid: " + string(b)
	}
	return buf.String()
}

// TestE2EBatchKillAfterCommit covers the one instant a random kill rarely
// hits: after a task's shard is committed, before its record is finished.
// The next run completes that record from the shard instead of exporting
// over it (which would change the shard: its report would say the video
// was reused), so the shard stays byte for byte the one the attempt made.
func TestE2EBatchKillAfterCommit(t *testing.T) {
	manifest := testCampaign(t)
	c := campaignCases[4] // s05: one cycle, AV1
	id := campaignTaskID(c)
	out := filepath.Join(t.TempDir(), "out")
	if stdout, stderr, code := run(t, "batch", manifest, "-o", out, "--case-id", c.id); code != 0 {
		t.Fatalf("batch: exit %d\n%s\n%s", code, stdout, stderr)
	}
	made := testtree.Files(t, filepath.Join(out, id))
	// The record as the killed attempt left it: running, its process gone.
	path := filepath.Join(out, layout.AttemptsDir, id, "attempt-0001.json")
	var rec map[string]any
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &rec) != nil {
		t.Fatalf("record: %v %s", err, b)
	}
	want := rec["shard_report_sha256"]
	rec["state"], rec["pid"], rec["exit_status"] = "running", 1<<30, nil
	for _, k := range []string{"ended_at", "duration_s", "episodes", "frames", "shard_report_sha256", "expectation"} {
		delete(rec, k)
	}
	if b, err = json.Marshal(rec); err != nil || os.WriteFile(path, b, 0o644) != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := run(t, "batch", manifest, "-o", out, "--case-id", c.id)
	if code != 0 || !strings.Contains(stdout, "(0 exported in this run, 1 skipped as done)") {
		t.Fatalf("rerun: exit %d\n%s\n%s", code, stdout, stderr)
	}
	recs, err := campaign.ReadRecords(out, id)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records (%v), want the one attempt", len(recs), err)
	}
	r := recs[0]
	if r.State != campaign.StateSucceeded || r.ShardReportSHA256 != want || r.Episodes == 0 || r.Frames == 0 || !strings.Contains(r.Note, "committed shard") || r.Expectation == nil || !r.Expectation.Met {
		t.Errorf("completed record %+v", r)
	}
	if got := testtree.Files(t, filepath.Join(out, id)); !reflect.DeepEqual(got, made) {
		t.Errorf("the shard changed")
	}
}

// batch slurm --binary: the scripts run the named wrapper by its absolute
// path, and a --binary no job could run is refused before anything is
// written.
func TestE2EBatchSlurmBinary(t *testing.T) {
	manifest := testCampaign(t)
	work := t.TempDir()
	wrapper := filepath.Join(work, "wrap")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\nexec ceres-export \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	notExec := filepath.Join(work, "not-exec")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "out")
	rel, err := filepath.Rel(mustGetwd(t), wrapper)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, "batch", "slurm", manifest, "-o", out, "--merge", filepath.Join(work, "merged"), "--binary", rel)
	for _, name := range []string{layout.SlurmArrayScript, layout.SlurmMergeScript} {
		script, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(script, []byte("exec "+wrapper+" batch ")) && !bytes.Contains(script, []byte("\n"+wrapper+" merge ")) {
			t.Errorf("%s does not run %s:\n%s", name, wrapper, script)
		}
	}
	for _, c := range []struct{ binary, say string }{
		{filepath.Join(work, "missing"), "no such file"},
		{notExec, "not executable"},
		{work, "not a regular file"},
	} {
		_, errOut, code := runBounded(t, time.Minute, nil, "batch", "slurm", manifest, "-o", filepath.Join(work, "refused"), "--binary", c.binary)
		if code != exitUsage || !strings.Contains(errOut, "--binary "+c.binary) || !strings.Contains(errOut, c.say) {
			t.Errorf("--binary %s: exit %d, want %d saying %q:\n%s", c.binary, code, exitUsage, c.say, errOut)
		}
	}
	if _, err := os.Lstat(filepath.Join(work, "refused")); err == nil {
		t.Error("a refused batch slurm made its OUT")
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

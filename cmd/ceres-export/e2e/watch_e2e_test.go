package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
)

// watchCampaign writes n small sessions and a manifest of them, one
// setting, and returns the manifest's path.
func watchCampaign(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	var cases []string
	for i := 1; i <= n; i++ {
		session := filepath.Join(dir, "sessions", fmt.Sprintf("w%d", i))
		mustRun(t, "synth", "-o", session, "--seed", fmt.Sprint(i), "--time-scale", "0.1", "--width", "64", "--height", "64")
		cases = append(cases, fmt.Sprintf(`{"case_id": "w%d", "setting_id": "h264", "run_id": "1", "session": %q}`, i, session))
	}
	manifest := filepath.Join(dir, "campaign.json")
	doc := `{"schema_version": 1, "campaign_id": "watch", "defaults": {"export": {"no_report": true}},
		"settings": {"h264": {"export": {"vcodec": "h264"}}}, "cases": [` + strings.Join(cases, ", ") + `]}`
	if err := os.WriteFile(manifest, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return manifest
}

// Without a terminal, long work prints progress lines at a steady pace
// (what, how far, rate, time left); --json puts one document on stdout,
// merged datasets included, and the human summary on stderr.
func TestE2EBatchWatch(t *testing.T) {
	manifest := watchCampaign(t, 3)
	dir := filepath.Dir(manifest)
	out, merged := filepath.Join(dir, "out"), filepath.Join(dir, "merged")
	stdout, stderr, code := run(t, "batch", manifest, "-o", out, "--jobs", "1", "--merge", merged, "--json", "--progress-every", "100ms")
	if code != 0 {
		t.Fatalf("batch: exit %d\n%s", code, stderr)
	}
	line := regexp.MustCompile(`(?m)^progress: campaign: \d+/3 tasks \(\d+%\)(, [0-9.e+]+ tasks/s, \d+s left)?( \[[^]]*\])?, \d running$`)
	if n := len(line.FindAllString(stderr, -1)); n < 2 {
		t.Errorf("%d campaign progress lines, want a steady pace of them:\n%s", n, stderr)
	}
	if !regexp.MustCompile(`(?m)^progress: task watch__w\d__h264__run-1: running for \d+s$`).MatchString(stderr) {
		t.Errorf("no running task in the progress lines:\n%s", stderr)
	}
	if !strings.Contains(stderr, "3 tasks: 3 succeeded") || strings.Contains(stdout, "3 tasks:") {
		t.Errorf("the human summary is not (only) on stderr:\nstdout %s\nstderr %s", stdout, stderr)
	}
	var doc struct {
		MessageType string `json:"message_type"`
		Results     []struct {
			TaskID, Outcome, State string
		}
		States     map[string]int
		ExitStatus int `json:"exit_status"`
		Merged     []struct {
			SettingID string `json:"setting_id"`
			Dir       string
			Shards    int
		}
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, stdout)
	}
	if dec.More() {
		t.Fatalf("more than one document on stdout:\n%s", stdout)
	}
	if doc.MessageType != "batch" || len(doc.Results) != 3 || doc.States[campaign.StateSucceeded] != 3 || doc.ExitStatus != 0 ||
		len(doc.Merged) != 1 || doc.Merged[0].SettingID != "h264" || doc.Merged[0].Shards != 3 || doc.Merged[0].Dir != filepath.Join(merged, "h264") {
		t.Fatalf("document %+v", doc)
	}

	// The export's own stages report too.
	session := filepath.Join(dir, "sessions", "w1")
	_, stderr, code = run(t, "export", session, "-o", filepath.Join(dir, "shard"), "--vcodec", "h264", "--progress-every", "50ms")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	if !regexp.MustCompile(`(?m)^progress: .+: \d+/\d+ frames \(\d+%\)`).MatchString(stderr) {
		t.Errorf("no export progress line:\n%s", stderr)
	}
	// --progress-every 0 is silence.
	_, stderr, _ = run(t, "batch", manifest, "-o", out, "--progress-every", "0")
	if strings.Contains(stderr, "progress:") {
		t.Errorf("progress lines with --progress-every 0:\n%s", stderr)
	}
}

// batch status reads a running campaign from its records: what runs (and
// where), what is done, and, given the manifest, what is left.
func TestE2EBatchStatusWhileRunning(t *testing.T) {
	manifest := watchCampaign(t, 4)
	out := filepath.Join(filepath.Dir(manifest), "out")
	cmd := exec.Command(ceresBinary, "batch", manifest, "-o", out, "--jobs", "1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// Poll until one task has ended and a later one runs.
	deadline := time.Now().Add(2 * time.Minute)
	var st campaign.CampaignStatus
	for {
		if time.Now().After(deadline) {
			t.Fatalf("no status with a finished and a running task: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
		stdout, _, code := run(t, "batch", "status", out, manifest, "--json")
		if code != 0 {
			continue // no record yet
		}
		st = campaign.CampaignStatus{}
		if err := json.Unmarshal([]byte(stdout), &st); err != nil {
			t.Fatalf("status while running: %v\n%s", err, stdout)
		}
		if st.States[campaign.StateSucceeded] >= 1 && st.States[campaign.StateRunning] == 1 && len(st.Pending) >= 1 {
			break
		}
	}
	if n := len(st.Tasks) + len(st.Pending); n != 4 {
		t.Fatalf("%d tasks listed, want 4: %+v", n, st)
	}
	for _, ts := range st.Tasks {
		if ts.State == campaign.StateRunning && (ts.PID != cmd.Process.Pid || ts.Host == "") {
			t.Errorf("running task %s: pid %d on %q, want pid %d", ts.TaskID, ts.PID, ts.Host, cmd.Process.Pid)
		}
	}
	human := mustRun(t, "batch", "status", out, manifest)
	if !strings.Contains(human, "pending") || !regexp.MustCompile(`4 tasks: `).MatchString(human) {
		t.Errorf("status:\n%s", human)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	human = mustRun(t, "batch", "status", out, manifest)
	if !strings.Contains(human, "4 tasks: 4 succeeded") {
		t.Errorf("status after the run:\n%s", human)
	}
}

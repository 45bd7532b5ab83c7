package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// Settings the encoder or planner would refuse are a
// usage error (exit 2) before anything runs, the same through export's
// flags, batch plan and batch; so is a NUL byte in a case's session.
func TestE2ESettingsAreUsageErrors(t *testing.T) {
	session := synthSession(t, "--seed", "13")
	dir := t.TempDir()
	for _, c := range []struct {
		flags   []string
		setting string // the manifest's export object
	}{
		{[]string{"--fps", "4611686018427387904"}, `{"fps": 4611686018427387904}`},
		{[]string{"--crf", "1000"}, `{"crf": 1000}`},
		{[]string{"--g", "2147483648"}, `{"g": 2147483648}`},
		{[]string{"--preset", "nope"}, `{"preset": "nope"}`},
		{[]string{"--video-size", "100000x100000"}, `{"video_size": "100000x100000"}`},
		{[]string{"--vcodec", "h264", "--crf", "52"}, `{"vcodec": "h264", "crf": 52}`},
	} {
		t.Run(strings.Join(c.flags, " "), func(t *testing.T) {
			out := filepath.Join(dir, "x")
			_, errOut, code := run(t, append([]string{"export", session, "-o", out, "-q"}, c.flags...)...)
			if code != exitUsage || !strings.Contains(errOut, c.flags[len(c.flags)-2]) {
				t.Errorf("export %v: exit %d, want %d naming the flag:\n%s", c.flags, code, exitUsage, errOut)
			}
			manifest := filepath.Join(dir, "m.json")
			os.WriteFile(manifest, []byte(`{"schema_version": 1, "campaign_id": "c", "settings": {"s": {"export": `+c.setting+`}},
			  "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": `+fmt.Sprintf("%q", session)+`}]}`), 0o644)
			for _, args := range [][]string{{"batch", "plan", manifest}, {"batch", manifest, "-o", out}} {
				if _, errOut, code := run(t, args...); code != exitUsage || !strings.Contains(errOut, "settings.s.export.") {
					t.Errorf("%v: exit %d, want %d naming the setting's JSON path:\n%s", args, code, exitUsage, errOut)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a refused run wrote its output")
			}
		})
	}
	manifest := filepath.Join(dir, "nul.json")
	os.WriteFile(manifest, []byte(`{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}},
	  "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "se\u0000ssion"}]}`), 0o644)
	for _, args := range [][]string{{"batch", "plan", manifest}, {"batch", manifest, "-o", filepath.Join(dir, "o")}} {
		if _, errOut, code := run(t, args...); code != exitUsage || !strings.Contains(errOut, "cases[0].session: holds a NUL byte") {
			t.Errorf("%v: exit %d, want %d:\n%s", args, code, exitUsage, errOut)
		}
	}
}

// The second of two batches at once on one OUT exits 4
// (another batch runs some of its tasks: not a failure of theirs; it does
// the others), and a damaged
// attempt record is reported by batch status (exit 1) while every task is
// still listed.
func TestE2EConcurrentBatchesAndDamagedRecords(t *testing.T) {
	dir := t.TempDir()
	var cases []string
	for i := range 3 {
		s := filepath.Join(dir, fmt.Sprintf("s%d", i))
		mustRun(t, "synth", "-o", s, "--seed", fmt.Sprint(30+i), "--time-scale", "0.1", "--width", "64", "--height", "64")
		cases = append(cases, fmt.Sprintf(`{"case_id": "c%d", "setting_id": "av1", "run_id": "1", "session": %q}`, i, s))
	}
	manifest := filepath.Join(dir, "campaign.json")
	os.WriteFile(manifest, []byte(`{"schema_version": 1, "campaign_id": "two", "settings": {"av1": {"export": {"vcodec": "av1"}}},
	  "cases": [`+strings.Join(cases, ",")+`]}`), 0o644)
	out := filepath.Join(dir, "out")
	first := exec.Command(ceresBinary, "batch", manifest, "-o", out, "--jobs", "1")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	// Once the first batch's first attempt is running, start the second.
	deadline := time.Now().Add(time.Minute)
	for {
		recs, _ := campaign.ReadRecords(out, "two__c0__av1__run-1")
		if len(recs) > 0 && recs[0].State == campaign.StateRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first batch never started its first attempt")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, errOut, code := runBounded(t, 2*time.Minute, nil, "batch", manifest, "-o", out, "--jobs", "1")
	// The first may meet a task the second took meanwhile: 0 or 4, never
	// a task failure.
	if err := first.Wait(); err != nil && first.ProcessState.ExitCode() != exitFailed {
		t.Fatalf("the first batch: %v", err)
	}
	if code != exitFailed || !strings.Contains(errOut, "being run by another batch") {
		t.Errorf("the second batch: exit %d, want %d saying another batch runs its tasks:\n%s", code, exitFailed, errOut)
	}
	// Whatever the second one did, a rerun finds every task done.
	if stdout := mustRun(t, "batch", manifest, "-o", out); !strings.Contains(stdout, "3 tasks: 3 succeeded") {
		t.Errorf("rerun: %s", stdout)
	}

	rec := filepath.Join(out, layout.AttemptsDir, "two__c1__av1__run-1", "attempt-0099.json")
	os.WriteFile(rec, []byte(`{"record_version": 1, "attempt_no": 99, "state": "succ`), 0o644)
	stdout, errOut, code := run(t, "batch", "status", out)
	if code != exitFindings || !strings.Contains(errOut, "attempt-0099.json") || strings.Count(stdout, "two__c") != 3 {
		t.Errorf("batch status with a damaged record: exit %d, want %d naming it and listing the 3 tasks:\n%s%s", code, exitFindings, stdout, errOut)
	}
	// The campaign page is still written.
	os.Remove(filepath.Join(out, "index.html"))
	mustRun(t, "batch", manifest, "-o", out)
	if _, err := os.Stat(filepath.Join(out, "index.html")); err != nil {
		t.Errorf("no campaign page: %v", err)
	}
}

// A link in a dataset (here one pointing out of it) is
// a verify finding, and merge --into refuses to carry it over.
func TestE2ELinksInADatasetAreRefused(t *testing.T) {
	a, b := exportShard(t, "a", "--seed", "14"), exportShard(t, "b", "--seed", "15")
	merged := filepath.Join(t.TempDir(), "merged")
	mustRun(t, "merge", a, "-o", merged)
	outside := filepath.Join(t.TempDir(), "outside.mp4")
	videos, _ := filepath.Glob(filepath.Join(merged, "videos", "*", "chunk-000", "file-000.mp4"))
	if len(videos) == 0 {
		t.Fatal("no video in the merged dataset")
	}
	copyTree(t, videos[0], outside)
	os.Remove(videos[0])
	if err := os.Symlink(outside, videos[0]); err != nil {
		t.Fatal(err)
	}
	stdout, _, code := run(t, "verify", merged)
	if code != exitFindings || !strings.Contains(stdout, "symbolic link") {
		t.Errorf("verify of a dataset holding a link: exit %d\n%s", code, stdout)
	}
	into := filepath.Join(filepath.Dir(merged), "merged-2")
	_, errOut, code := run(t, "merge", b, "--into", merged, "-o", into)
	if code == exitOK || !strings.Contains(errOut, "symbolic link") {
		t.Errorf("merge --into a dataset holding a link: exit %d\n%s", code, errOut)
	}
	if _, err := os.Lstat(into); err == nil {
		t.Error("the refused merge wrote its output")
	}
}

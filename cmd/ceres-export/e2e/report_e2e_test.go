package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

func TestE2EReport(t *testing.T) {
	session := synthSession(t, "--seed", "3", "--cameras", "2", "--fault", "crash")
	shard := filepath.Join(t.TempDir(), "shard")
	mustRun(t, "export", session, "-o", shard, "--vcodec", "h264", "-q")
	page, err := os.ReadFile(filepath.Join(shard, filepath.FromSlash(layout.SessionPagePath)))
	if err != nil {
		t.Fatalf("export wrote no session page: %v", err)
	}
	if !bytes.Contains(page, []byte(`<svg id="timeline"`)) || !bytes.Contains(page, []byte(`data:image/jpeg;base64,`)) {
		t.Error("the shard's page lacks the timeline or the thumbnails")
	}
	mustRun(t, "verify", shard, "--journal", session, "--quick")

	out := filepath.Join(t.TempDir(), "page.html")
	stdout := mustRun(t, "report", session, "--shard", shard, "-o", out)
	if !strings.Contains(stdout, "report "+out) {
		t.Errorf("report printed %q", stdout)
	}
	again, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, page) {
		t.Errorf("report --shard wrote %d bytes, export's page has %d: they differ", len(again), len(page))
	}

	plain := filepath.Join(t.TempDir(), "plain.html")
	mustRun(t, "report", session, "-o", plain)
	if b, err := os.ReadFile(plain); err != nil || !bytes.Contains(b, []byte("has not been exported")) {
		t.Errorf("report without --shard: %v, %d bytes", err, len(b))
	}

	bare := filepath.Join(t.TempDir(), "bare")
	mustRun(t, "export", session, "-o", bare, "--vcodec", "h264", "-q", "--no-report")
	if _, err := os.Stat(filepath.Join(bare, filepath.FromSlash(layout.SessionPagePath))); !os.IsNotExist(err) {
		t.Errorf("export --no-report wrote a page (%v)", err)
	}

	other := synthSession(t, "--seed", "4", "--cameras", "1")
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"output inside the journal", []string{"report", session, "-o", filepath.Join(session, "journal", "x.html")}, exitUsage},
		{"output is a directory", []string{"report", session, "-o", t.TempDir()}, exitUsage},
		{"shard of another session", []string{"report", other, "--shard", shard, "-o", filepath.Join(t.TempDir(), "x.html")}, exitUsage},
		{"not a shard", []string{"report", session, "--shard", t.TempDir(), "-o", filepath.Join(t.TempDir(), "x.html")}, exitUsage},
		{"no output", []string{"report", session}, exitUsage},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := run(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tc.code, stderr)
			}
		})
	}
	if entries, _ := os.ReadDir(filepath.Join(session, "journal")); len(entries) == 0 || strings.HasSuffix(entries[len(entries)-1].Name(), ".html") {
		t.Error("the refused output touched the journal directory")
	}
}

// TestE2EBatchCampaignPage runs a campaign of two sessions, one of them
// corrupt, and checks OUT/index.html: both tasks, the failure, the link to
// the good task's session page.
func TestE2EBatchCampaignPage(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "synth", "-o", filepath.Join(dir, "good"), "--time-scale", "0.1", "--width", "64", "--height", "48", "--seed", "3")
	mustRun(t, "synth", "-o", filepath.Join(dir, "bad"), "--time-scale", "0.1", "--width", "64", "--height", "48", "--seed", "4", "--fault", "corrupt")
	manifest := filepath.Join(dir, "campaign.json")
	doc := `{"schema_version": 1, "campaign_id": "week", "defaults": {"export": {"vcodec": "h264"}}, "settings": {"rig": {}},
	  "cases": [{"case_id": "good", "setting_id": "rig", "run_id": "1", "session": "good"},
	            {"case_id": "bad", "setting_id": "rig", "run_id": "1", "session": "bad"}]}`
	if err := os.WriteFile(manifest, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	_, stderr, code := run(t, "batch", manifest, "-o", out)
	if code == 0 {
		t.Fatalf("a campaign with a corrupt session exited 0; stderr %s", stderr)
	}
	page, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatalf("no campaign page: %v; stderr %s", err, stderr)
	}
	good, bad := "week__good__rig__run-1", "week__bad__rig__run-1"
	for _, want := range []string{`<a href="` + good + "/" + layout.SessionPagePath + `">`, `<td class="mono">` + bad + `</td>`, `<span class="state failed">failed</span>`, `<svg id="cases"`} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("campaign page lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, good, filepath.FromSlash(layout.SessionPagePath))); err != nil {
		t.Errorf("the linked session page is missing: %v", err)
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestE2EReport(t *testing.T) {
	session := synthSession(t, "--seed", "3", "--cameras", "2", "--fault", "crash")
	shard := filepath.Join(t.TempDir(), "shard")
	mustRun(t, "export", session, "-o", shard, "--vcodec", "h264", "-q")
	page, err := os.ReadFile(filepath.Join(shard, "ceres", "report.html"))
	if err != nil {
		t.Fatalf("export wrote no session page: %v", err)
	}
	if !bytes.Contains(page, []byte(`<svg id="timeline"`)) || !bytes.Contains(page, []byte(`data:image/jpeg;base64,`)) {
		t.Error("the shard's page lacks the timeline or the thumbnails")
	}
	mustRun(t, "verify", shard, "--journal", session, "--quick")

	out := filepath.Join(t.TempDir(), "report.html")
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
	if _, err := os.Stat(filepath.Join(bare, "ceres", "report.html")); !os.IsNotExist(err) {
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

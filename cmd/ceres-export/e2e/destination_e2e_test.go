package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/testtree"
)

// The destination rules (no overlap with any input, no
// symbolic link, only ours replaced) hold for every output of every
// command: batch --merge and batch slurm --merge (inside a session, OUT,
// its records, the manifest's directory, a link), report -o (inside the
// session, a link, another file). Each is refused with exit 2 before
// anything is written; the inputs stay as they were.
func TestE2EEveryOutputFollowsTheDestinationRules(t *testing.T) {
	work := t.TempDir()
	session := filepath.Join(work, "sessions", "s1")
	mustRun(t, "synth", "-o", session, "--seed", "12", "--time-scale", "0.1", "--width", "64", "--height", "48")
	manifest := filepath.Join(work, "campaign.json")
	if err := os.WriteFile(manifest, []byte(`{"schema_version": 1, "campaign_id": "dest",
	  "defaults": {"export": {"vcodec": "h264", "no_report": true}}, "settings": {"s": {}},
	  "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "sessions/s1"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "out")
	mustRun(t, "batch", manifest, "-o", out)
	os.Symlink(filepath.Join(work, "elsewhere"), filepath.Join(work, "link"))
	notPage := filepath.Join(work, "notes.html")
	os.WriteFile(notPage, []byte("<p>my notes</p>"), 0o644)
	page := filepath.Join(work, "page.html")
	mustRun(t, "report", session, "-o", page)
	before := map[string]map[string][]byte{"session": testtree.Files(t, session), "out": testtree.Files(t, out)}

	for _, c := range []struct {
		name string
		args []string
		say  string
	}{
		{"batch --merge inside the session", []string{"batch", manifest, "-o", out, "--merge", filepath.Join(session, "merged")}, "inside the input"},
		{"batch --merge the session", []string{"batch", manifest, "-o", out, "--merge", session}, "is the input"},
		{"batch --merge inside OUT/.attempts", []string{"batch", manifest, "-o", out, "--merge", filepath.Join(out, layout.AttemptsDir, "m")}, "inside the input"},
		{"batch --merge OUT", []string{"batch", manifest, "-o", out, "--merge", out}, "is the input"},
		{"batch --merge the manifest's directory", []string{"batch", manifest, "-o", out, "--merge", work}, "contains the input"},
		{"batch --merge a link", []string{"batch", manifest, "-o", out, "--merge", filepath.Join(work, "link")}, "symbolic link"},
		{"batch --merge a file", []string{"batch", manifest, "-o", out, "--merge", notPage}, "not a directory"},
		{"batch slurm --merge inside the session", []string{"batch", "slurm", manifest, "-o", filepath.Join(work, "slurm-out"), "--merge", filepath.Join(session, "m")}, "inside the input"},
		{"report -o in the session", []string{"report", session, "-o", filepath.Join(session, "report.html")}, "inside the input"},
		{"report -o in the shard", []string{"report", session, "--shard", filepath.Join(out, "dest__a__s__run-1"), "-o", filepath.Join(out, "dest__a__s__run-1", "x.html")}, "inside the input"},
		{"report -o a link", []string{"report", session, "-o", filepath.Join(work, "link")}, "symbolic link"},
		{"report -o another file", []string{"report", session, "-o", notPage}, "not a page written by ceres-export"},
		{"report -o a directory", []string{"report", session, "-o", filepath.Join(work, "sessions")}, "contains the input"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errOut, code := runBounded(t, time.Minute, nil, c.args...)
			if code != exitUsage || !strings.Contains(errOut, c.say) {
				t.Errorf("exit %d, want %d saying %q:\n%s", code, exitUsage, c.say, errOut)
			}
		})
	}
	after := map[string]map[string][]byte{"session": testtree.Files(t, session), "out": testtree.Files(t, out)}
	for k := range before {
		if !sameFiles(before[k], after[k]) {
			t.Errorf("the %s changed", k)
		}
	}
	if b, _ := os.ReadFile(notPage); string(b) != "<p>my notes</p>" {
		t.Errorf("another file was replaced: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(work, "slurm-out")); err == nil {
		t.Error("a refused batch slurm made its OUT")
	}
	// A page of ours is replaced; a merge beside the campaign is fine.
	mustRun(t, "report", session, "-o", page)
	mustRun(t, "batch", manifest, "-o", out, "--merge", filepath.Join(work, "merged"))
}

package batch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/export"
)

// writeSession writes a fake session under dir: a segment and a camera file.
func writeSession(t *testing.T, dir, segment, camera string) {
	t.Helper()
	for rel, content := range map[string]string{"journal/000001.cjl": segment, "media/cam/take.webm": camera} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	_ = os.Remove(link)
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// oneTask is the task of a one-case manifest whose session is session.
func oneTask(t *testing.T, dir, session string) campaign.Task {
	t.Helper()
	doc := `{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}}, "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "` + session + `"}]}`
	m, err := campaign.Parse(filepath.Join(dir, "c.json"), []byte(doc), false)
	if err != nil {
		t.Fatal(err)
	}
	return m.Tasks[0]
}

// The fingerprint covers the bytes an export reads
// however it reaches them: through a session that is a link, a journal/
// that is one, a camera file that is one; changing what is behind a link
// changes the fingerprint.
func TestFingerprintFollowsLinks(t *testing.T) {
	for _, c := range []struct {
		name string
		// build makes the session at dir/session and returns a change of
		// what is behind its links.
		build func(t *testing.T, dir string) (change func())
	}{
		{"the session is a link", func(t *testing.T, dir string) func() {
			writeSession(t, filepath.Join(dir, "take1"), "seg-1", "cam-1")
			writeSession(t, filepath.Join(dir, "take2"), "seg-2", "cam-2")
			symlink(t, "take1", filepath.Join(dir, "session"))
			return func() { symlink(t, "take2", filepath.Join(dir, "session")) }
		}},
		{"journal/ is a link", func(t *testing.T, dir string) func() {
			writeSession(t, filepath.Join(dir, "session"), "seg-1", "cam-1")
			writeSession(t, filepath.Join(dir, "elsewhere"), "seg-2", "cam-2")
			if err := os.RemoveAll(filepath.Join(dir, "session", "journal")); err != nil {
				t.Fatal(err)
			}
			symlink(t, filepath.Join(dir, "elsewhere", "journal"), filepath.Join(dir, "session", "journal"))
			seg := filepath.Join(dir, "elsewhere", "journal", "000001.cjl")
			return func() { os.WriteFile(seg, []byte("seg-3"), 0o644) }
		}},
		{"a camera file is a link", func(t *testing.T, dir string) func() {
			writeSession(t, filepath.Join(dir, "session"), "seg-1", "cam-1")
			cam := filepath.Join(dir, "store", "cam.webm")
			os.MkdirAll(filepath.Dir(cam), 0o755)
			os.WriteFile(cam, []byte("cam-A"), 0o644)
			symlink(t, cam, filepath.Join(dir, "session", "media", "cam", "take.webm"))
			return func() { os.WriteFile(cam, []byte("cam-B"), 0o644) }
		}},
		{"the media directory is a link to a link", func(t *testing.T, dir string) func() {
			writeSession(t, filepath.Join(dir, "session"), "seg-1", "cam-1")
			writeSession(t, filepath.Join(dir, "other"), "x", "cam-2")
			os.RemoveAll(filepath.Join(dir, "session", "media"))
			symlink(t, filepath.Join(dir, "other", "media"), filepath.Join(dir, "hop"))
			symlink(t, filepath.Join(dir, "hop"), filepath.Join(dir, "session", "media"))
			return func() { os.WriteFile(filepath.Join(dir, "other", "media", "cam", "take.webm"), []byte("cam-3"), 0o644) }
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			change := c.build(t, dir)
			task := oneTask(t, dir, "session")
			before, err := hashInputs(&task, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(before.Files) != 2 {
				t.Fatalf("hashed %+v, want the segment and the camera file", before.Files)
			}
			fp1, _ := fingerprint(&task, before, "test")
			change()
			after, err := hashInputs(&task, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if fp2, _ := fingerprint(&task, after, "test"); fp1 == fp2 {
				t.Errorf("the fingerprint did not change with what is behind the link: %+v", after.Files)
			}
		})
	}
}

// No fingerprint of nothing: an empty session, one of
// dangling links only, and a link loop are errors (the loop without
// hanging).
func TestFingerprintOfNothingIsAnError(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(t *testing.T, session string)
		say   string
	}{
		{"empty", func(t *testing.T, s string) { os.MkdirAll(filepath.Join(s, "journal"), 0o755) }, "no file to read"},
		{"dangling links", func(t *testing.T, s string) {
			symlink(t, filepath.Join(s, "gone"), filepath.Join(s, "journal", "000001.cjl"))
		}, "no file to read"},
		{"a link to nothing as the session", func(t *testing.T, s string) {
			symlink(t, s+"-gone", s)
		}, "no such file"},
		{"a loop", func(t *testing.T, s string) {
			writeSession(t, s, "seg", "cam")
			symlink(t, "..", filepath.Join(s, "journal", "up"))
		}, "a link back to a directory above it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.build(t, filepath.Join(dir, "session"))
			task := oneTask(t, dir, "session")
			done := make(chan error, 1)
			go func() { _, err := hashInputs(&task, nil, nil); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), c.say) {
					t.Errorf("hashInputs: %v, want an error saying %q", err, c.say)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("hashInputs does not return")
			}
		})
	}
}

// Through Run: a task that failed is final for its
// inputs, but a session swapped behind its link is new input, so the task
// runs again (it used to be skipped: its fingerprint hashed nothing).
func TestSwappedSessionRunsAgain(t *testing.T) {
	dir := t.TempDir()
	writeSession(t, filepath.Join(dir, "take1"), "seg-1", "cam-1")
	writeSession(t, filepath.Join(dir, "take2"), "seg-2", "cam-2")
	symlink(t, "take1", filepath.Join(dir, "session"))
	task := oneTask(t, dir, "session")
	opts := Options{Out: filepath.Join(dir, "out"), ToolVersion: "test",
		export: func(context.Context, string, string, export.Options) (*export.Report, error) {
			return nil, errors.New("the journal breaks a rule")
		}}
	outcomes := func() string {
		sum, err := Run(context.Background(), []campaign.Task{task}, opts)
		if err != nil {
			t.Fatal(err)
		}
		return sum.Results[0].Outcome
	}
	if got := outcomes(); got != OutcomeFailed {
		t.Fatalf("first run: %s", got)
	}
	if got := outcomes(); got != OutcomeSkipped {
		t.Fatalf("rerun with the same inputs: %s, want skipped", got)
	}
	symlink(t, "take2", filepath.Join(dir, "session"))
	if got := outcomes(); got != OutcomeFailed {
		t.Errorf("rerun after the session was swapped behind its link: %s, want a new attempt", got)
	}
}

// The profile is read by the export too: new content
// under the same file name is new input.
func TestFingerprintCoversTheProfile(t *testing.T) {
	dir := t.TempDir()
	writeSession(t, filepath.Join(dir, "session"), "seg", "cam")
	prof := filepath.Join(dir, "p.yaml")
	fp := func(body string) string {
		if err := os.WriteFile(prof, []byte("schema: ceres-feature-profile\nversion: 1\nfeatures:\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
		doc := `{"schema_version": 1, "campaign_id": "c", "settings": {"s": {"export": {"profile": "p.yaml"}}}, "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "session"}]}`
		m, err := campaign.Parse(filepath.Join(dir, "c.json"), []byte(doc), false)
		if err != nil {
			t.Fatal(err)
		}
		eo, err := export.Resolve(m.Tasks[0].Export, dir)
		if err != nil {
			t.Fatal(err)
		}
		in, err := hashInputs(&m.Tasks[0], eo.TaskSpec, eo.Profile)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := fingerprint(&m.Tasks[0], in, "test")
		return f
	}
	a := fp("  - name: observation.state\n    fields:\n      - {stream: imu, field: accel}\n")
	b := fp("  - name: observation.state\n    fields:\n      - {stream: imu, field: gyro}\n")
	if a == b {
		t.Error("the fingerprint did not change with the profile's content")
	}
}

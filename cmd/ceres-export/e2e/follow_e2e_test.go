package e2e

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/testenv"
	"github.com/ceres-robotics/ceres-export/internal/testtree"
)

// export --follow beside synth --live: the shard equals a plain export of
// the finished session, the progress lines say what the follow did, and a
// signal while it follows leaves no shard and no work files.
func TestE2EExportFollow(t *testing.T) {
	testenv.Short(t, "records live sessions")
	root := t.TempDir()
	session := filepath.Join(root, "session")
	synth := exec.Command(ceresBinary, "synth", "-o", session, "--seed", "3", "--cameras", "1", "--width", "64", "--height", "64",
		"--time-scale", "0.15", "--live", "--speed", "6")
	if err := synth.Start(); err != nil {
		t.Fatal(err)
	}
	followed := filepath.Join(root, "followed")
	_, stderr, code := run(t, "export", session, "-o", followed, "--follow", "--follow-idle", "5s", "--progress-every", "500ms")
	if err := synth.Wait(); err != nil {
		t.Fatalf("synth --live: %v", err)
	}
	if code != exitOK {
		t.Fatalf("export --follow: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"progress: follow: session at", "episodes encoded", "real time", "session ended, committing"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the progress lines lack %q:\n%s", want, stderr)
		}
	}
	batch := filepath.Join(root, "batch")
	mustRun(t, "export", session, "-o", batch, "-q")
	if diff := testtree.Differing(testtree.Files(t, followed), testtree.Files(t, batch)); len(diff) > 0 {
		t.Errorf("the followed shard differs from the plain export in %v", diff)
	}
	if _, _, code := run(t, "verify", followed, "--journal", session); code != exitOK {
		t.Errorf("verify of the followed shard: exit %d", code)
	}
	noStaging(t, root)

	// Stopped while it follows.
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			root := t.TempDir()
			session := filepath.Join(root, "session")
			synth := exec.Command(ceresBinary, "synth", "-o", session, "--seed", "4", "--cameras", "1", "--width", "64", "--height", "64",
				"--time-scale", "0.15", "--live", "--speed", "3")
			if err := synth.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = synth.Process.Kill(); _ = synth.Wait() }()
			dest := filepath.Join(root, "shard")
			journal := func() bool {
				_, err := os.Stat(filepath.Join(session, "journal", "000001.cjl"))
				return err == nil
			}
			signalled(t, sig, journal, 0, nil, "export", session, "-o", dest, "--follow", "-q")
			if _, err := os.Stat(dest); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a stopped follow left %s: %v", dest, err)
			}
			entries, _ := os.ReadDir(root)
			for _, e := range entries {
				// The live synth still runs: its staging and lock are the session's.
				if e.Name() != "session" && !strings.HasPrefix(e.Name(), ".session.") {
					t.Errorf("a stopped follow left %s beside the session", e.Name())
				}
			}
		})
	}
}

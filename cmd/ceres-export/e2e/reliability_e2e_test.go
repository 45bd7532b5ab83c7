package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/exitstatus"
	"github.com/ceres-robotics/ceres-export/internal/testtree"
)

// runBounded runs the binary with stdin and gives it deadline to finish on
// its own; then it sends SIGTERM and fails the test (a hang), and SIGKILL
// if that does not stop it within 10 s either.
func runBounded(t *testing.T, deadline time.Duration, stdin io.Reader, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(ceresBinary, args...)
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(deadline):
		t.Errorf("ceres-export %s still runs after %v: sending SIGTERM", strings.Join(args, " "), deadline)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("SIGTERM did not stop it either")
		}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// noStaging fails when dir holds a staging directory or a lock file.
func noStaging(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".ceres-tmp-") || strings.HasSuffix(e.Name(), ".ceres-lock") {
			t.Errorf("%s left in %s", e.Name(), dir)
		}
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	_ = os.RemoveAll(path)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// An export never writes into an input, never replaces
// what it did not make, never writes through a symlink; each is refused
// with exit 2 before anything is written, naming what is there.
func TestE2EDestinationRefusals(t *testing.T) {
	session := synthSession(t, "--seed", "7", "--cameras", "1")
	work := t.TempDir()
	spec := filepath.Join(work, "spec.json")
	if err := os.WriteFile(spec, mustRunBytes(t, "journal", "inspect", "--json", session), 0o644); err != nil {
		t.Fatal(err)
	}
	shardDir := filepath.Join(work, "shard")
	mustRun(t, "export", session, "-o", shardDir, "--vcodec", "h264", "-q")
	home := filepath.Join(work, "home")
	if err := os.MkdirAll(filepath.Join(home, "Documents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(work, "file.parquet")
	if err := os.WriteFile(file, []byte("PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, filepath.Join(work, "fifo"))
	if err := os.Symlink(shardDir, filepath.Join(work, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home, filepath.Join(work, "link-home")); err != nil {
		t.Fatal(err)
	}
	before := map[string]map[string][]byte{"session": testtree.Files(t, session), "shard": testtree.Files(t, shardDir), "home": testtree.Files(t, home)}
	for _, c := range []struct {
		name string
		args []string
		say  string
	}{
		{"the session", []string{"-o", session}, "is the input"},
		{"the session, replace", []string{"-o", session, "--replace"}, "is the input"},
		{"a new name in journal/", []string{"-o", filepath.Join(session, "journal", "out")}, "inside the input"},
		{"a segment, replace", []string{"-o", filepath.Join(session, "journal", "000001.cjl"), "--replace"}, "inside the input"},
		{"media/, replace", []string{"-o", filepath.Join(session, "media"), "--replace"}, "inside the input"},
		{"a name in media/", []string{"-o", filepath.Join(session, "media", "shard")}, "inside the input"},
		{"the session's parent, replace", []string{"-o", filepath.Dir(session), "--replace"}, "contains the input"},
		{"the spec file", []string{"-o", spec, "--task-spec", spec, "--replace"}, "is the input"},
		{"a home directory, replace", []string{"-o", home, "--replace"}, "not an output of ceres-export"},
		{"a regular file, replace", []string{"-o", file, "--replace"}, "regular file"},
		{"a FIFO, replace", []string{"-o", filepath.Join(work, "fifo"), "--replace"}, "named pipe"},
		{"a symlink to a shard, replace", []string{"-o", filepath.Join(work, "link"), "--replace"}, "symbolic link"},
		{"a symlink to a home, replace", []string{"-o", filepath.Join(work, "link-home"), "--replace"}, "symbolic link"},
		{"an existing shard without replace", []string{"-o", shardDir}, "exists"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errOut, code := runBounded(t, time.Minute, nil, append([]string{"export", session, "--vcodec", "h264", "-q"}, c.args...)...)
			if code != exitUsage || !strings.Contains(errOut, c.say) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, exitUsage, c.say, errOut)
			}
		})
	}
	after := map[string]map[string][]byte{"session": testtree.Files(t, session), "shard": testtree.Files(t, shardDir), "home": testtree.Files(t, home)}
	for k := range before {
		if !sameFiles(before[k], after[k]) {
			t.Errorf("the %s changed", k)
		}
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "PAR1" {
		t.Errorf("the regular file changed: %q %v", b, err)
	}
	noStaging(t, work)
	noStaging(t, session)
}

func mustRunBytes(t *testing.T, args ...string) []byte {
	t.Helper()
	// inspect's spec is not a spec file; the test only needs a file input.
	return []byte(mustRun(t, args...))
}

// A FIFO where a file is expected is an error naming it, found at once:
// TestE2EFIFOEveryInput, over every input the tool opens.

// SIGTERM and SIGINT stop every command promptly, with exit 128 + the
// signal's number (143, 130: what a scheduler tells from a failure, 4)
// and no staging or lock left: a read of a pipe nobody writes to, an
// export, a merge and a campaign's batch at work. The binary is built with the ceres_testhooks tag: with
// CERES_TEST_PAUSE_STAGED=1 a command waits, once its staging directory is
// made, for the signal (internal/output/testhook_pause.go), so the signal
// always arrives before the work is done and an exit 0 is a failure.
func TestE2ESignalsStop(t *testing.T) {
	session := synthSession(t, "--seed", "9", "--cameras", "2", "--height", "64") // SVT-AV1 encodes 64x64 and up
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String()+" stdin pipe", func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			defer r.Close()
			// Nothing shows when main runs: give the start-up (FFmpeg libraries
			// load) time on a loaded machine.
			signalled(t, sig, nil, 3*time.Second, r, "spec", "check", "-")
		})
		t.Run(sig.String()+" export", func(t *testing.T) {
			parent := t.TempDir()
			dest := filepath.Join(parent, "shard")
			signalled(t, sig, staged(parent, "shard"), 0, nil, "export", session, "-o", dest, "-q", "--vcodec", "av1")
			if _, err := os.Stat(dest); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a stopped export left %s: %v", dest, err)
			}
			noStaging(t, parent)
		})
		t.Run(sig.String()+" merge", func(t *testing.T) {
			shards := t.TempDir()
			var args []string
			for i := range 2 {
				d := filepath.Join(shards, fmt.Sprint(i))
				mustRun(t, "export", synthSession(t, "--seed", fmt.Sprint(20+i), "--cameras", "1"), "-o", d, "-q", "--vcodec", "h264", "--no-report")
				args = append(args, d)
			}
			parent := t.TempDir()
			dest := filepath.Join(parent, "merged")
			signalled(t, sig, staged(parent, "merged"), 0, nil, append([]string{"merge", "-o", dest}, args...)...)
			if _, err := os.Stat(dest); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a stopped merge left %s: %v", dest, err)
			}
			noStaging(t, parent)
		})
		t.Run(sig.String()+" batch", func(t *testing.T) {
			dir := t.TempDir()
			manifest := filepath.Join(dir, "campaign.json")
			if err := os.WriteFile(manifest, []byte(`{"schema_version": 1, "campaign_id": "sig",
  "defaults": {"export": {"no_report": true}},
  "settings": {"h264": {"export": {"vcodec": "h264"}}},
  "cases": [{"case_id": "c01", "setting_id": "h264", "run_id": "1", "session": "`+session+`"}]}
`), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			signalled(t, sig, stagedUnder(dir), 0, nil, "batch", manifest, "-o", out)
			if stagedUnder(dir)() {
				t.Errorf("a stopped batch left a staging directory under %s", dir)
			}
		})
	}
}

// stagedUnder reports whether a staging directory exists anywhere under
// dir: a batch's task is at work, paused until its signal.
func stagedUnder(dir string) func() bool {
	return func() bool {
		found := false
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() && strings.Contains(d.Name(), ".ceres-tmp-") {
				found = true
			}
			return nil
		})
		return found
	}
}

// staged reports whether the staging directory of destination parent/base
// exists: the command is at work, paused until its signal.
func staged(parent, base string) func() bool {
	return func() bool {
		m, _ := filepath.Glob(filepath.Join(parent, "."+base+".ceres-tmp-*"))
		return len(m) > 0
	}
}

// signalled starts a command and sends it sig a while after ready reports
// true (nil: at once), and checks that it ends within 10 s with exit
// 128 + sig.
// With ready, the command runs with CERES_TEST_PAUSE_STAGED=1: it waits for
// the signal once its staging directory exists, so it cannot finish first.
func signalled(t *testing.T, sig syscall.Signal, ready func() bool, after time.Duration, stdin io.Reader, args ...string) {
	t.Helper()
	cmd := exec.Command(ceresBinary, args...)
	cmd.Stdin = stdin
	if ready != nil {
		cmd.Env = append(os.Environ(), "CERES_TEST_PAUSE_STAGED=1")
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for ready != nil && !ready() {
		select {
		case <-done:
			t.Fatalf("%s ended with exit %d before its staging directory appeared:\n%s", strings.Join(args, " "), cmd.ProcessState.ExitCode(), errb.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	time.Sleep(after)
	_ = cmd.Process.Signal(sig)
	start := time.Now()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s did not stop %s within 10 s", sig, strings.Join(args, " "))
	}
	want := exitSIGTERM
	if sig == syscall.SIGINT {
		want = int(exitstatus.Interrupt)
	}
	if code := cmd.ProcessState.ExitCode(); code != want {
		t.Errorf("exit %d after %s (stopped in %v), want %d:\n%s", code, sig, time.Since(start), want, errb.String())
	}
}

// Writers racing for one destination with --replace: each one
// either writes the whole shard or is refused at once as busy (exit 4);
// the destination always verifies and nothing is left beside it.
func TestE2EConcurrentReplace(t *testing.T) {
	session := synthSession(t, "--seed", "10", "--cameras", "1")
	parent := t.TempDir()
	dest := filepath.Join(parent, "shard")
	mustRun(t, "export", session, "-o", dest, "--vcodec", "h264", "-q")
	want := testtree.Files(t, dest)
	for round := range 3 {
		var wg sync.WaitGroup
		codes := make([]int, 3)
		msgs := make([]string, 3)
		for i := range codes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(ceresBinary, "export", session, "-o", dest, "--vcodec", "h264", "-q", "--replace", "--no-video-reuse")
				var errb bytes.Buffer
				cmd.Stderr = &errb
				_ = cmd.Run()
				codes[i], msgs[i] = cmd.ProcessState.ExitCode(), errb.String()
			}()
		}
		wg.Wait()
		ok := 0
		for i, code := range codes {
			switch {
			case code == exitOK:
				ok++
			case code == exitFailed && strings.Contains(msgs[i], "being written by another process"):
			default:
				t.Errorf("round %d writer %d: exit %d\n%s", round, i, code, msgs[i])
			}
		}
		if ok == 0 {
			t.Errorf("round %d: no writer succeeded: %v", round, codes)
		}
		if _, errOut, code := run(t, "verify", dest, "--journal", session); code != 0 {
			t.Fatalf("round %d: verify: exit %d\n%s", round, code, errOut)
		}
		if diff := testtree.Differing(testtree.Files(t, dest), want); len(diff) > 0 {
			t.Errorf("round %d: the shard differs from a lone export's in %v", round, diff)
		}
		noStaging(t, parent)
	}
}

// The "Also" paragraph: the same failure gives the same exit status in
// every command.
func TestE2ESameFailureSameStatus(t *testing.T) {
	base := synthSession(t, "--seed", "11", "--cameras", "0")
	loop := filepath.Join(t.TempDir(), "loop")
	if err := os.MkdirAll(loop, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(loop, "journal"), filepath.Join(loop, "journal")); err != nil {
		t.Fatal(err)
	}
	fifoSeg := filepath.Join(t.TempDir(), "session")
	copyTree(t, base, fifoSeg)
	mkfifo(t, filepath.Join(fifoSeg, "journal", "000001.cjl"))
	missing := filepath.Join(t.TempDir(), "none")
	for _, c := range []struct {
		name    string
		session string
		code    int
	}{
		{"symlink loop", loop, exitUsage},
		{"FIFO segment", fifoSeg, exitUsage},
		{"missing session", missing, exitUsage},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, args := range [][]string{
				{"journal", "inspect", c.session},
				{"export", c.session, "-o", filepath.Join(t.TempDir(), "out"), "-q"},
				{"report", c.session, "-o", filepath.Join(t.TempDir(), "page.html")},
				{"verify", mustShard(t, base), "--journal", c.session},
			} {
				_, errOut, code := runBounded(t, 45*time.Second, nil, args...)
				if code != c.code {
					t.Errorf("%s: exit %d, want %d\n%s", strings.Join(args[:1], " "), code, c.code, errOut)
				}
			}
		})
	}
}

var (
	shardOnce sync.Map // session → shard
)

// mustShard exports session once and returns the shard.
func mustShard(t *testing.T, session string) string {
	t.Helper()
	if d, ok := shardOnce.Load(session); ok {
		return d.(string)
	}
	dest, err := os.MkdirTemp("", "ceres-e2e-shard")
	if err != nil {
		t.Fatal(err)
	}
	dest = filepath.Join(dest, "shard")
	mustRun(t, "export", session, "-o", dest, "-q")
	shardOnce.Store(session, dest)
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(dest)); shardOnce.Delete(session) })
	return dest
}

package e2e

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/testenv"
	"github.com/ceres-robotics/ceres-export/internal/testtree"
	"github.com/ceres-robotics/ceres-export/journal"
)

// A follower trusts the journal's records and the camera files' bytes,
// never their sizes, names or the time that passed. These tests play the
// recorders that break those assumptions against `export --follow`.

// follower is a running `export --follow` whose stderr a test reads.
type follower struct {
	t    *testing.T
	cmd  *exec.Cmd
	mu   sync.Mutex
	errb bytes.Buffer
	done chan struct{}
}

func (f *follower) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.errb.Write(p)
}

func (f *follower) stderr() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.errb.String()
}

// tail is the end of stderr, for failure messages (progress lines pile up).
func (f *follower) tail() string {
	s := f.stderr()
	if len(s) > 1500 {
		s = "..." + s[len(s)-1500:]
	}
	return s
}

// startFollower starts the binary with args (progress lines every 100 ms
// unless args say otherwise); the test kills it if it is still running.
func startFollower(t *testing.T, args ...string) *follower {
	t.Helper()
	f := &follower{t: t, cmd: exec.Command(ceresBinary, args...), done: make(chan struct{})}
	f.cmd.Stderr = f
	if err := f.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = f.cmd.Wait()
		close(f.done)
	}()
	t.Cleanup(func() {
		_ = f.cmd.Process.Kill()
		<-f.done
	})
	return f
}

// waitFor waits until stderr matches re, failing after limit or when the
// command ends first.
func (f *follower) waitFor(re *regexp.Regexp, limit time.Duration) {
	f.t.Helper()
	deadline := time.Now().Add(limit)
	for !re.MatchString(f.stderr()) {
		select {
		case <-f.done:
			f.t.Fatalf("ended (exit %d) before its output matched %q:\n%s", f.cmd.ProcessState.ExitCode(), re, f.tail())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("no output matching %q within %v:\n%s", re, limit, f.tail())
		}
	}
}

// exit waits for the command's end, failing the test when it runs past
// limit (a follow that waits for ever).
func (f *follower) exit(limit time.Duration) int {
	f.t.Helper()
	select {
	case <-f.done:
		return f.cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		_ = f.cmd.Process.Kill()
		<-f.done
		f.t.Fatalf("%s: still running after %v:\n%s", strings.Join(f.cmd.Args[1:], " "), limit, f.tail())
		return -1
	}
}

// unended writes a small finished session and takes its END record off,
// so that a follower sees a recorder still at work; the returned function
// appends END again (the recorder closes the session).
func unended(t *testing.T, extra ...string) (session string, end func()) {
	t.Helper()
	session = synthSession(t, append([]string{"--height", "64"}, extra...)...)
	segs, err := filepath.Glob(filepath.Join(session, "journal", "*.cjl"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no segments: %v", err)
	}
	last := segs[len(segs)-1]
	b, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	fr := journal.NewFrameReader(bytes.NewReader(b), journal.SegmentHeaderSize, int64(len(b)))
	at := int64(-1)
	for {
		off := fr.Offset()
		typ, _, err := fr.Next()
		if err != nil {
			break
		}
		if typ == journal.TypeEnd {
			at = off
		}
	}
	if at < 0 {
		t.Fatalf("%s: no END record", last)
	}
	if err := os.Truncate(last, at); err != nil {
		t.Fatal(err)
	}
	return session, func() {
		f, err := os.OpenFile(last, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(b[at:]); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// sameAsBatch exports session in batch and fails when followed differs.
func sameAsBatch(t *testing.T, session, followed string) {
	t.Helper()
	batch := filepath.Join(t.TempDir(), "batch")
	mustRun(t, "export", session, "-o", batch, "-q")
	if diff := testtree.Differing(testtree.Files(t, followed), testtree.Files(t, batch)); len(diff) > 0 {
		t.Errorf("the followed shard differs from the batch export in %v", diff)
	}
}

// waitForFile waits until path exists (a live recorder has started).
func waitForFile(t *testing.T, path string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within %v", path, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A recorder that preallocates its segments writes records in place: the
// journal's size never changes while it records. The follower judges the
// recorder alive by the records that appear, so it follows to END and its
// shard is the batch export's.
func TestE2EFollowPreallocatedRecorder(t *testing.T) {
	testenv.Short(t, "records live sessions")
	for _, c := range []struct {
		name        string
		segmentSize int64
		segments    int // at least
	}{
		{"one segment", 1 << 20, 1},
		{"segments rolled", 64 << 10, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			session := filepath.Join(root, "session")
			size := strconv.FormatInt(c.segmentSize, 10)
			synth := exec.Command(ceresBinary, "synth", "-o", session, "--seed", "3", "--cameras", "1", "--width", "64", "--height", "64",
				"--time-scale", "0.15", "--live", "--speed", "5", "--preallocate", "--segment-size", size)
			if err := synth.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = synth.Process.Kill(); _ = synth.Wait() }()
			waitForFile(t, filepath.Join(session, "journal", "000001.cjl"), time.Minute)
			followed := filepath.Join(root, "followed")
			// The session records for about 5 s; a follower that judged by
			// sizes would end 2.5 s after the first segment appeared.
			f := startFollower(t, "export", session, "-o", followed, "--follow", "--follow-idle", "2500ms", "-q")
			code := f.exit(2 * time.Minute)
			if err := synth.Wait(); err != nil {
				t.Fatalf("synth --live: %v", err)
			}
			if code != exitOK {
				t.Fatalf("export --follow: exit %d\n%s", code, f.tail())
			}
			// Every segment was preallocated: its size is the segment size.
			segs, _ := filepath.Glob(filepath.Join(session, "journal", "*.cjl"))
			if len(segs) < c.segments {
				t.Fatalf("the session has %d segments, want at least %d", len(segs), c.segments)
			}
			for _, s := range segs {
				if st, err := os.Stat(s); err != nil || st.Size() != c.segmentSize {
					t.Fatalf("%s is not preallocated: %v", s, err)
				}
			}
			sameAsBatch(t, session, followed)
		})
	}
}

// A follow whose session never shows a journal (a mistyped path), or whose
// journal disappears after the recorder crashed, ends within --follow-idle
// with an error that says so, not a wait for ever.
func TestE2EFollowLostSession(t *testing.T) {
	testenv.Short(t, "follows sessions")
	t.Run("mistyped path", func(t *testing.T) {
		root := t.TempDir()
		f := startFollower(t, "export", filepath.Join(root, "sesion"), "-o", filepath.Join(root, "shard"), "--follow", "--follow-idle", "1s", "--progress-every", "100ms")
		if code := f.exit(20 * time.Second); code != exitUsage {
			t.Errorf("exit %d, want %d:\n%s", code, exitUsage, f.tail())
		}
		if !strings.Contains(f.stderr(), "no journal appeared") {
			t.Errorf("the error does not say that no journal appeared:\n%s", f.tail())
		}
		if entries, _ := os.ReadDir(root); len(entries) > 0 {
			t.Errorf("the failed follow left %v", entries)
		}
	})
	t.Run("journal deleted", func(t *testing.T) {
		session := synthSession(t, "--seed", "5", "--height", "64", "--fault", "crash")
		shard := filepath.Join(t.TempDir(), "shard")
		f := startFollower(t, "export", session, "-o", shard, "--follow", "--follow-idle", "4s", "--progress-every", "100ms")
		f.waitFor(regexp.MustCompile(`follow: session at`), time.Minute)
		if err := os.RemoveAll(filepath.Join(session, "journal")); err != nil {
			t.Fatal(err)
		}
		if code := f.exit(20 * time.Second); code != exitUsage {
			t.Errorf("exit %d, want %d:\n%s", code, exitUsage, f.tail())
		}
		if !strings.Contains(f.stderr(), "disappeared") {
			t.Errorf("the error does not say that the journal disappeared:\n%s", f.tail())
		}
		if _, err := os.Stat(shard); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a shard was written: %v", err)
		}
		noStaging(t, filepath.Dir(shard))
	})
}

// A follower killed while it encodes leaves its work in a staging
// directory of the destination, which the next run into it removes.
func TestE2EFollowKilledWorkRemoved(t *testing.T) {
	testenv.Short(t, "follows sessions")
	session, end := unended(t, "--seed", "6", "--cameras", "1")
	root := t.TempDir()
	shard := filepath.Join(root, "shard")
	f := startFollower(t, "export", session, "-o", shard, "--follow", "--follow-idle", "1m", "--progress-every", "100ms")
	f.waitFor(regexp.MustCompile(`[1-9][0-9]* episodes encoded`), 2*time.Minute)
	_ = f.cmd.Process.Signal(syscall.SIGKILL)
	<-f.done
	left, _ := os.ReadDir(root)
	if len(left) == 0 {
		t.Fatal("the killed follower left no work behind: the test kills it too late to show anything")
	}
	end()
	mustRun(t, "export", session, "-o", shard, "-q")
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if e.Name() != "shard" {
			t.Errorf("%s is left beside the shard after the next export", e.Name())
		}
	}
}

// A camera file that shrinks or is rewritten under the follower (the
// recorder broke its append-only promise) never gives a shard that differs
// from the batch export: the follower checks the bytes it read by their
// hash and encodes that camera again.
func TestE2EFollowCameraChanged(t *testing.T) {
	testenv.Short(t, "follows sessions")
	other := synthSession(t, "--seed", "8", "--height", "64", "--cameras", "1")
	for _, c := range []struct {
		name   string
		change func(t *testing.T, path string)
	}{
		{"shrunk", func(t *testing.T, path string) {
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, st.Size()/2); err != nil {
				t.Fatal(err)
			}
		}},
		{"rewritten", func(t *testing.T, path string) {
			b, err := os.ReadFile(filepath.Join(other, "media", "front", "000001.webm"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			session, end := unended(t, "--seed", "7", "--cameras", "1")
			shard := filepath.Join(t.TempDir(), "shard")
			f := startFollower(t, "export", session, "-o", shard, "--follow", "--follow-idle", "1m", "--progress-every", "100ms")
			f.waitFor(regexp.MustCompile(`[1-9][0-9]* episodes encoded, 0 pending, 0 attempts open`), 2*time.Minute)
			c.change(t, filepath.Join(session, "media", "front", "000001.webm"))
			end()
			if code := f.exit(2 * time.Minute); code != exitOK {
				t.Fatalf("exit %d:\n%s", code, f.tail())
			}
			if !strings.Contains(f.stderr(), "changed after the follow read it") {
				t.Errorf("the follower does not say that the camera file changed:\n%s", f.tail())
			}
			sameAsBatch(t, session, shard)
		})
	}
}

// A recorder that crashes and restarts leaves a torn segment followed by
// the segment the restarted recorder starts with the session's SESSION
// record: batch and follow export it without --salvage, reporting the
// torn range, and the follow's shard is the batch export's. A torn segment
// in the middle without that signature stays corruption.
func TestE2ERecorderRestart(t *testing.T) {
	testenv.Short(t, "records live sessions")
	session := synthSession(t, "--seed", "9", "--height", "64", "--cameras", "1", "--fault", "restart", "--segment-size", "32768")
	out, stderr, code := run(t, "export", session, "-o", filepath.Join(t.TempDir(), "shard"))
	if code != exitOK {
		t.Fatalf("export of a restarted session: exit %d\n%s", code, stderr)
	}
	if !regexp.MustCompile(`journal: recorder restarted in 0000\d\d\.cjl; torn range of 0000\d\d\.cjl at offset \d+, \d+ bytes dropped`).MatchString(out) {
		t.Errorf("the summary does not report the restart and its torn range:\n%s", out)
	}

	t.Run("follow", func(t *testing.T) {
		root := t.TempDir()
		live := filepath.Join(root, "session")
		synth := exec.Command(ceresBinary, "synth", "-o", live, "--seed", "9", "--cameras", "1", "--width", "64", "--height", "64",
			"--time-scale", "0.15", "--live", "--speed", "6", "--fault", "restart")
		if err := synth.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = synth.Process.Kill(); _ = synth.Wait() }()
		waitForFile(t, filepath.Join(live, "journal", "000001.cjl"), time.Minute)
		followed := filepath.Join(root, "followed")
		f := startFollower(t, "export", live, "-o", followed, "--follow", "--follow-idle", "5s", "-q")
		code := f.exit(2 * time.Minute)
		if err := synth.Wait(); err != nil {
			t.Fatalf("synth --live: %v", err)
		}
		if code != exitOK {
			t.Fatalf("export --follow: exit %d\n%s", code, f.tail())
		}
		sameAsBatch(t, live, followed)
	})

	// Damage that is not a restart: a middle segment cut short whose next
	// segment does not start with SESSION, and a flipped byte before a
	// restart's torn record (valid frames follow it).
	for _, c := range []struct {
		name   string
		extra  []string
		damage func(t *testing.T, journalDir string)
	}{
		{"middle segment cut", []string{"--segment-size", "32768"}, func(t *testing.T, dir string) {
			p := filepath.Join(dir, "000001.cjl")
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, st.Size()-20); err != nil {
				t.Fatal(err)
			}
		}},
		{"byte flipped before a restart", []string{"--fault", "restart", "--segment-size", "1048576"}, func(t *testing.T, dir string) {
			p := filepath.Join(dir, "000001.cjl")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 0x5a
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			session := synthSession(t, append([]string{"--seed", "9", "--height", "64"}, c.extra...)...)
			c.damage(t, filepath.Join(session, "journal"))
			_, stderr, code := run(t, "export", session, "-o", filepath.Join(t.TempDir(), "shard"))
			if code != exitCorrupt {
				t.Errorf("exit %d, want %d (corrupt):\n%s", code, exitCorrupt, stderr)
			}
		})
	}
}

// A second follower into the same destination is refused at once, as a
// second export is, and so is an export while a follower holds it.
func TestE2EFollowSecondFollowerRefused(t *testing.T) {
	testenv.Short(t, "follows sessions")
	session, end := unended(t, "--seed", "11", "--cameras", "1")
	shard := filepath.Join(t.TempDir(), "shard")
	first := startFollower(t, "export", session, "-o", shard, "--follow", "--follow-idle", "1m", "--progress-every", "100ms")
	first.waitFor(regexp.MustCompile(`follow: session at`), time.Minute)
	for _, args := range [][]string{
		{"export", session, "-o", shard, "--follow", "--follow-idle", "1m", "-q"},
		{"export", session, "-o", shard, "-q"},
	} {
		second := startFollower(t, args...)
		if code := second.exit(20 * time.Second); code != exitFailed {
			t.Errorf("%s: exit %d, want %d:\n%s", strings.Join(args, " "), code, exitFailed, second.tail())
		}
		if !strings.Contains(second.stderr(), "being written by another process") {
			t.Errorf("%s: not refused as busy:\n%s", strings.Join(args, " "), second.tail())
		}
	}
	end()
	if code := first.exit(2 * time.Minute); code != exitOK {
		t.Fatalf("the first follower: exit %d:\n%s", code, first.tail())
	}
	sameAsBatch(t, session, shard)
}

// A killed `synth --live` leaves the session it made first in a staging
// directory of its output, which the next run into it removes.
func TestE2ESynthLiveKilledScratchRemoved(t *testing.T) {
	testenv.Short(t, "records live sessions")
	root := t.TempDir()
	session := filepath.Join(root, "session")
	args := []string{"synth", "-o", session, "--seed", "3", "--cameras", "1", "--width", "64", "--height", "64", "--time-scale", "0.15", "--live"}
	synth := exec.Command(ceresBinary, append(args, "--speed", "1")...)
	if err := synth.Start(); err != nil {
		t.Fatal(err)
	}
	waitForFile(t, filepath.Join(session, "journal", "000001.cjl"), time.Minute)
	_ = synth.Process.Kill()
	_ = synth.Wait()
	if left, _ := os.ReadDir(root); len(left) < 2 {
		t.Fatal("the killed synth left nothing beside the session: the test shows nothing")
	}
	if err := os.RemoveAll(session); err != nil {
		t.Fatal(err)
	}
	mustRun(t, append(args, "--speed", "1000")...)
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if e.Name() != "session" {
			t.Errorf("%s is left beside the session after the next run", e.Name())
		}
	}
}

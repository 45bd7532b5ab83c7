package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/testtree"
	"github.com/ceres-robotics/ceres-export/internal/version"
)

// ceresBinary is the ceres-export binary built once for the end-to-end tests.
var ceresBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ceres-export-e2e")
	if err != nil {
		panic(err)
	}
	ceresBinary = filepath.Join(dir, "ceres-export")
	// ceres_testhooks compiles in the hooks a test turns on by environment
	// (internal/output/testhook_pause.go); a release build has none.
	out, err := exec.Command("go", "build", "-tags", "ceres_testhooks", "-o", ceresBinary, "..").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		panic("building the binary: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// commandLimit bounds one run of the binary in a test. A run that hangs
// (a child stuck in a corrupted C heap's lock, say) is sent SIGQUIT, so that
// its goroutines' stacks are in the failure, and the test fails by name
// instead of the package dying at go test's -timeout with nothing to read.
const commandLimit = 10 * time.Minute

// binaryCommand is exec.Command of the binary, ended as commandLimit says;
// ctx.Err() is non-nil after Run when it was.
func binaryCommand(args ...string) (*exec.Cmd, context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), commandLimit)
	cmd := exec.CommandContext(ctx, ceresBinary, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 10 * time.Second
	return cmd, ctx, cancel
}

// run runs the binary and returns stdout, stderr and the exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd, ctx, cancel := binaryCommand(args...)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("ceres-export %s: still running after %v, stopped with SIGQUIT:\n%s", strings.Join(args, " "), commandLimit, stderr.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := run(t, args...)
	if code != 0 {
		t.Fatalf("ceres-export %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// synthSession writes a small synthetic session and returns its directory.
func synthSession(t *testing.T, extra ...string) string {
	dir := filepath.Join(t.TempDir(), "session")
	args := append([]string{"synth", "-o", dir, "--time-scale", "0.1", "--width", "64", "--height", "48"}, extra...)
	mustRun(t, args...)
	return dir
}

func TestE2EExportExitCodes(t *testing.T) {
	session := synthSession(t, "--seed", "3", "--cameras", "1")
	dest := filepath.Join(t.TempDir(), "shard")
	out := mustRun(t, "export", session, "-o", dest, "--vcodec", "h264", "--json")
	var summary struct {
		MessageType string `json:"message_type"`
		Report      struct {
			Episodes int            `json:"episodes"`
			Frames   int            `json:"frames"`
			Fates    map[string]int `json:"fates"`
		} `json:"report"`
	}
	if err := json.Unmarshal([]byte(out), &summary); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if summary.MessageType != "summary" || summary.Report.Episodes != 8 || summary.Report.Fates["retried"] < 2 {
		t.Errorf("summary %+v", summary)
	}
	for _, f := range []string{layout.InfoPath, layout.DataPath(0, 0), layout.VideoPath("observation.images.front", 0, 0)} {
		if _, err := os.Stat(filepath.Join(dest, f)); err != nil {
			t.Errorf("shard lacks %s", f)
		}
	}
	corrupt := synthSession(t, "--seed", "4", "--cameras", "0", "--fault", "corrupt")
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"destination exists", []string{"export", session, "-o", dest}, exitUsage},
		{"missing session", []string{"export", filepath.Join(t.TempDir(), "nope"), "-o", filepath.Join(t.TempDir(), "x")}, exitUsage},
		{"corrupt journal", []string{"export", corrupt, "-o", filepath.Join(t.TempDir(), "x")}, exitCorrupt},
		{"salvaged", []string{"export", corrupt, "-o", filepath.Join(t.TempDir(), "x"), "--salvage", "-q"}, exitOK},
		{"bad codec", []string{"export", session, "-o", filepath.Join(t.TempDir(), "x"), "--vcodec", "mjpeg"}, exitUsage},
		{"bad strict", []string{"export", session, "-o", filepath.Join(t.TempDir(), "x"), "--strict", "often"}, exitUsage},
		{"no args", []string{"export"}, exitUsage},
		{"inspect", []string{"journal", "inspect", session}, exitOK},
		{"inspect corrupt", []string{"journal", "inspect", corrupt}, exitCorrupt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := run(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, errOut)
			}
		})
	}
}

// sameFiles reports whether a and b hold the same files with the same bytes.
func sameFiles(a, b map[string][]byte) bool { return len(testtree.Differing(a, b)) == 0 }

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
}

// TestE2EKillDuringReexport sends SIGKILL to a re-export at many moments and
// checks each time that the destination holds the complete old shard or the
// complete new one, and that leftovers never pass for a shard.
func TestE2EKillDuringReexport(t *testing.T) {
	session := synthSession(t, "--seed", "5", "--cameras", "1")
	work := t.TempDir()
	fixed := filepath.Join(work, "fixed.json")
	spec, err := os.ReadFile(filepath.Join("..", "..", "..", "taskspec", "testdata", "example.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fixed, bytes.Replace(spec, []byte("Pick one sample"), []byte("Pick exactly one sample"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	pristine := filepath.Join(work, "pristine")
	mustRun(t, "export", session, "-o", pristine, "--vcodec", "h264", "-q")
	old := testtree.Files(t, pristine)

	// The complete new shard, and how long a re-export takes.
	probe := filepath.Join(work, "probe")
	copyTree(t, pristine, probe)
	start := time.Now()
	mustRun(t, "export", session, "-o", probe, "--vcodec", "h264", "-q", "--task-spec", fixed, "--replace")
	took := time.Since(start)
	fresh := testtree.Files(t, probe)
	if sameFiles(old, fresh) {
		t.Fatal("the re-export changed nothing; the test would prove nothing")
	}

	const moments = 24
	sawOld, sawNew := 0, 0
	for i := 0; i < moments; i++ {
		dest := filepath.Join(work, "run", "shard")
		os.RemoveAll(filepath.Dir(dest))
		os.MkdirAll(filepath.Dir(dest), 0o755)
		copyTree(t, pristine, dest)
		cmd := exec.Command(ceresBinary, "export", session, "-o", dest, "--vcodec", "h264", "-q", "--task-spec", fixed, "--replace")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(took * time.Duration(i) / moments * 5 / 4)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		if _, errOut, code := run(t, "verify", dest, "--quick"); code != 0 {
			t.Fatalf("kill %d: verify of the destination: exit %d\n%s", i, code, errOut)
		}
		got := testtree.Files(t, dest)
		switch {
		case sameFiles(got, old):
			sawOld++
		case sameFiles(got, fresh):
			sawNew++
		default:
			t.Fatalf("kill %d after %v: the destination is neither the old nor the new shard (%d files)", i, took*time.Duration(i)/moments*5/4, len(got))
		}
		// Leftovers beside the destination are hidden staging directories
		// that the next export removes; none of them is named like a shard.
		entries, _ := os.ReadDir(filepath.Dir(dest))
		for _, e := range entries {
			if e.Name() != "shard" && !strings.HasPrefix(e.Name(), ".") {
				t.Errorf("kill %d left %s, which could pass for a shard", i, e.Name())
			}
		}
		mustRun(t, "export", session, "-o", dest, "--vcodec", "h264", "-q", "--task-spec", fixed, "--replace")
		if got := testtree.Files(t, dest); !sameFiles(got, fresh) {
			t.Fatalf("kill %d: the export after the kill did not give the new shard", i)
		}
		entries, _ = os.ReadDir(filepath.Dir(dest))
		if len(entries) != 1 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("kill %d: after a clean export the directory holds %v", i, names)
		}
	}
	t.Logf("%d kills left the old shard, %d the new one (re-export takes %v)", sawOld, sawNew, took)
	if out, _, code := run(t, "verify", filepath.Join(work, "run", "shard"), "--journal", session); code != 0 {
		t.Errorf("full verify of the final shard against its journal: exit %d\n%s", code, out)
	}
	if sawOld == 0 {
		t.Error("no kill landed before the commit; the moments are badly spread")
	}
}

// binaryVersion is the version string of the binary the end-to-end tests
// run (built apart from the test binary, so its build info may differ).
func binaryVersion(t *testing.T) string {
	t.Helper()
	var r version.Report
	if err := json.Unmarshal([]byte(mustRun(t, "version", "--json")), &r); err != nil || r.Version == "" {
		t.Fatalf("version --json: %v %+v", err, r)
	}
	return r.Version
}

package e2e

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/testtree"
)

// exportShard synthesises a session and exports it; it returns the shard.
func exportShard(t *testing.T, name string, extra ...string) string {
	t.Helper()
	session := synthSession(t, extra...)
	dir := filepath.Join(t.TempDir(), name)
	mustRun(t, "export", session, "-o", dir, "--vcodec", "h264", "-q")
	return dir
}

func TestE2EMergeExitCodes(t *testing.T) {
	a := exportShard(t, "a", "--seed", "1", "--cameras", "1")
	b := exportShard(t, "b", "--seed", "2", "--cameras", "1", "--fault", "crash")
	c15 := filepath.Join(t.TempDir(), "c15")
	mustRun(t, "export", synthSession(t, "--seed", "3", "--cameras", "1"), "-o", c15, "--vcodec", "h264", "--fps", "15", "-q")
	work := t.TempDir()
	out := filepath.Join(work, "merged")
	mustRun(t, "merge", a, b, "-o", out)
	for _, tc := range []struct {
		name string
		args []string
		code int
		text string
	}{
		{"exists", []string{"merge", a, "-o", out}, exitUsage, "exists"},
		{"no output", []string{"merge", a}, exitUsage, "-o DATASET"},
		{"mismatch", []string{"merge", a, c15, "-o", filepath.Join(work, "m2")}, exitUsage, "fps 15, want 30"},
		{"twice", []string{"merge", a, a, "-o", filepath.Join(work, "m3")}, exitUsage, "given twice"},
		{"already in", []string{"merge", "--into", out, b}, exitUsage, "same shard"},
		{"replace a shard", []string{"merge", a, "-o", b, "--replace"}, exitUsage, "not a merged dataset"},
		{"bad quantiles", []string{"merge", a, "-o", filepath.Join(work, "m4"), "--quantiles", "median"}, exitUsage, "weighted-mean or envelope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := run(t, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.text) {
				t.Fatalf("exit %d, stderr %q; want %d containing %q", code, errOut, tc.code, tc.text)
			}
		})
	}
	// The same inputs give the same bytes.
	again := filepath.Join(work, "again")
	mustRun(t, "merge", a, b, "-o", again)
	if !sameFiles(testtree.Files(t, out), testtree.Files(t, again)) {
		t.Fatal("two merges of the same shards differ")
	}
}

// TestE2EKillDuringMergeInto sends SIGKILL to `merge --into` at random
// moments and checks each time that the dataset is sound and is the whole
// old dataset or the whole new one.
func TestE2EKillDuringMergeInto(t *testing.T) {
	a := exportShard(t, "a", "--seed", "11", "--cameras", "2")
	b := exportShard(t, "b", "--seed", "12", "--cameras", "2")
	c := exportShard(t, "c", "--seed", "13", "--cameras", "2", "--fault", "crash")
	work := t.TempDir()
	pristine := filepath.Join(work, "pristine")
	mustRun(t, "merge", a, b, "-o", pristine)
	old := testtree.Files(t, pristine)

	probe := filepath.Join(work, "probe")
	copyTree(t, pristine, probe)
	start := time.Now()
	mustRun(t, "merge", "--into", probe, c)
	took := time.Since(start)
	fresh := testtree.Files(t, probe)
	if sameFiles(old, fresh) {
		t.Fatal("merge --into changed nothing; the test would prove nothing")
	}

	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 15))
	t.Logf("random kill moments from seed %d", seed)
	const moments = 12
	sawOld, sawNew := 0, 0
	for i := 0; i < moments; i++ {
		dest := filepath.Join(work, "run", "merged")
		os.RemoveAll(filepath.Dir(dest))
		os.MkdirAll(filepath.Dir(dest), 0o755)
		copyTree(t, pristine, dest)
		cmd := exec.Command(ceresBinary, "merge", "--into", dest, c)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Moments spread over the run; the first one early, so that at
		// least one kill lands before the commit.
		delay := time.Duration(rng.Float64() * float64(took) * 1.25)
		if i == 0 {
			delay = took / 10
		}
		time.Sleep(delay)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		if _, errOut, code := run(t, "verify", dest, "--quick"); code != 0 {
			t.Fatalf("kill %d after %v: verify: exit %d\n%s", i, delay, code, errOut)
		}
		switch got := testtree.Files(t, dest); {
		case sameFiles(got, old):
			sawOld++
		case sameFiles(got, fresh):
			sawNew++
		default:
			t.Fatalf("kill %d after %v: the dataset is neither the old nor the new one (%d files)", i, delay, len(got))
		}
		entries, _ := os.ReadDir(filepath.Dir(dest))
		for _, e := range entries {
			if e.Name() != "merged" && !strings.HasPrefix(e.Name(), ".") {
				t.Errorf("kill %d left %s, which could pass for a dataset", i, e.Name())
			}
		}
		// A later merge finishes the job (or says it was done).
		if _, errOut, code := run(t, "merge", "--into", dest, c); code != 0 && !strings.Contains(errOut, "same shard") {
			t.Fatalf("kill %d: merge after the kill: exit %d\n%s", i, code, errOut)
		}
		if got := testtree.Files(t, dest); !sameFiles(got, fresh) {
			t.Fatalf("kill %d: after the kill and a new merge the dataset is not the new one", i)
		}
	}
	t.Logf("%d kills left the old dataset, %d the new one (merge --into takes %v)", sawOld, sawNew, took)
	if out, _, code := run(t, "verify", filepath.Join(work, "run", "merged")); code != 0 {
		t.Errorf("full verify of the final dataset: exit %d\n%s", code, out)
	}
	if sawOld == 0 {
		t.Error("no kill landed before the commit; the moments are badly spread")
	}
}

package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/testenv"
)

// slurmEnv returns the environment that reaches the cluster the SLURM
// tests use (CERES_SLURM_CONF's, or one of their own), skipping without
// SLURM.
func slurmEnv(t *testing.T) []string {
	t.Helper()
	for _, p := range slurmPackages {
		testenv.Tool(t, p, "", "SLURM: tests/slurm/cluster.sh install, as .ci/run does")
	}
	conf := os.Getenv("CERES_SLURM_CONF")
	if conf == "" {
		conf = startCluster(t)
	}
	return append(os.Environ(), "SLURM_CONF="+conf)
}

// OUT, --merge, the manifest's path and a selection
// full of shell and sbatch syntax (spaces, quotes, $(), backticks, ';',
// '#', '%', and backslashes outside OUT) go through a real cluster as
// written: every job
// completes, logs land under the literal OUT, the merged dataset under the
// literal --merge, and nothing of them runs. A newline, which no #SBATCH
// line can carry, is refused before anything is written; a hostile
// --partition reaches sbatch as one value, which refuses it.
func TestE2EBatchSlurmHostileValues(t *testing.T) {
	env := slurmEnv(t)
	root, err := os.MkdirTemp("", "ceres-hostile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	// slurmd runs the jobs as this user; the directories must be
	// reachable as they are for TestE2EBatchSlurm's.
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	session := synthSession(t, "--seed", "11")
	mdir := filepath.Join(root, "m $(touch PWNED) `touch PWNED` back\\slash")
	if err := os.MkdirAll(mdir, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(mdir, "campaign;touch PWNED.json")
	if err := os.WriteFile(manifest, []byte(`{"schema_version": 1, "campaign_id": "hostile",
	  "defaults": {"export": {"vcodec": "h264", "no_report": true, "camera_jobs": 1}},
	  "settings": {"s": {}},
	  "cases": [{"case_id": "touch-pwned", "setting_id": "s", "run_id": "1", "session": `+fmt.Sprintf("%q", session)+`}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	names := []string{"with space", `dq"uote`, "sq'uote", "dollar $(touch PWNED)", "tick `touch PWNED`",
		"semi;touch PWNED", "hash #comment", "pct%A%j%%"}
	type submitted struct{ out, merged, array, merge string }
	var jobs []submitted
	idRe := regexp.MustCompile(`(?m)^(array|merge) job (\d+)$`)
	for _, n := range names {
		s := submitted{out: filepath.Join(root, "out "+n), merged: filepath.Join(root, `merged\ `+n)}
		cmd := exec.Command(ceresBinary, "batch", "slurm", manifest, "-o", s.out, "--merge", s.merged,
			"--case-id", "$(touch PWNED)", "--cpus-per-task", "1", "--time", "10:00", "--submit")
		cmd.Env, cmd.Dir = env, root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("batch slurm -o %q: %v\n%s", s.out, err, out)
		}
		for _, m := range idRe.FindAllStringSubmatch(string(out), -1) {
			if m[1] == "array" {
				s.array = m[2]
			} else {
				s.merge = m[2]
			}
		}
		if s.array == "" || s.merge == "" {
			t.Fatalf("no job ids in:\n%s", out)
		}
		jobs = append(jobs, s)
	}

	// Refused before anything is written: newlines in any value, a
	// backslash in OUT (SLURM drops it from the log path).
	for _, c := range []struct{ name, out, extra string }{
		{"OUT", filepath.Join(root, "nl\ntouch PWNED"), ""},
		{"--merge", filepath.Join(root, "ok-out"), filepath.Join(root, "merged\ntouch PWNED")},
		{"OUT (backslash)", filepath.Join(root, `back\slash`), ""},
	} {
		args := []string{"batch", "slurm", manifest, "-o", c.out, "--submit"}
		if c.extra != "" {
			args = append(args, "--merge", c.extra)
		}
		cmd := exec.Command(ceresBinary, args...)
		cmd.Env, cmd.Dir = env, root
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(string(out), "no SLURM script can carry") {
			t.Errorf("newline in %s: exit %d (%v), want %d naming it:\n%s", c.name, code, err, exitUsage, out)
		}
		if _, err := os.Lstat(c.out); err == nil {
			t.Errorf("newline in %s: %s was made", c.name, c.out)
		}
	}
	// A hostile partition is one value to sbatch, which has no such
	// partition: sbatch fails (exit 4), nothing runs.
	cmd := exec.Command(ceresBinary, "batch", "slurm", manifest, "-o", filepath.Join(root, "part-out"), "--partition", "debug $(touch PWNED);touch PWNED", "--submit")
	cmd.Env, cmd.Dir = env, root
	if out, _ := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != exitFailed || !strings.Contains(string(out), "partition") {
		t.Errorf("hostile --partition: exit %d, want %d from sbatch's refusal:\n%s", cmd.ProcessState.ExitCode(), exitFailed, out)
	}

	deadline := time.Now().Add(10 * time.Minute)
	for _, s := range jobs {
		var state string
		for {
			state = jobField(t, env, s.merge, "JobState")
			if state == "COMPLETED" || state == "FAILED" || state == "CANCELLED" || state == "TIMEOUT" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("merge job %s still %s after 10 minutes", s.merge, state)
			}
			time.Sleep(time.Second)
		}
		logs, _ := filepath.Glob(filepath.Join(globEscape(s.out), ".slurm", "logs", "*"))
		if state != "COMPLETED" {
			var text strings.Builder
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				fmt.Fprintf(&text, "== %s\n%s", l, b)
			}
			t.Errorf("OUT %q: merge job %s, array job %s: %s\n%s", s.out, s.merge, s.array, state, text.String())
			continue
		}
		want := map[string]bool{
			"array-" + s.array + "_0.out": false,
			"merge-" + s.merge + ".out":   false,
		}
		for _, l := range logs {
			if _, ok := want[filepath.Base(l)]; ok {
				want[filepath.Base(l)] = true
			}
		}
		for name, ok := range want {
			if !ok {
				t.Errorf("OUT %q: no log %s under the literal OUT (have %q)", s.out, name, logs)
			}
		}
		if _, err := os.Stat(filepath.Join(s.merged, "s", filepath.FromSlash(layout.InfoPath))); err != nil {
			t.Errorf("--merge %q: no merged dataset: %v", s.merged, err)
		}
	}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "PWNED") {
			t.Errorf("a value ran as a command: %s", p)
		}
		return nil
	})
}

// globEscape makes a literal path safe for filepath.Glob.
func globEscape(p string) string {
	return regexp.MustCompile(`[*?\[\\]`).ReplaceAllString(p, `\$0`)
}

package e2e

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// The kinds of input the FIFO test plants a pipe at: a file or a
// directory the command reads. What each string flag and positional
// argument of every command is, is in ../testdata/inputs.json, which the
// CLI package's TestEveryInputHasAKind checks against the command tree.
const (
	argFile = "file"
	argDir  = "dir"
)

// readInputKinds reads ../testdata/inputs.json.
func readInputKinds(t *testing.T) (flags map[string]string, positional map[string][]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "inputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var kinds struct {
		Flags      map[string]string   `json:"flags"`
		Positional map[string][]string `json:"positional"`
	}
	if err := json.Unmarshal(b, &kinds); err != nil || len(kinds.Flags) == 0 || len(kinds.Positional) == 0 {
		t.Fatalf("../testdata/inputs.json: %v (%d flags, %d commands)", err, len(kinds.Flags), len(kinds.Positional))
	}
	return kinds.Flags, kinds.Positional
}

// fifoFixture is one of each input the tool reads, made once.
type fifoFixture struct {
	work, session, spec, profile, manifest, out, shard, shard2, merged string
}

func newFIFOFixture(t *testing.T) fifoFixture {
	t.Helper()
	work := t.TempDir()
	f := fifoFixture{work: work, session: filepath.Join(work, "session"), spec: filepath.Join(work, "spec.json"),
		profile: filepath.Join(work, "profile.yaml"), manifest: filepath.Join(work, "campaign.json"),
		out: filepath.Join(work, "out"), merged: filepath.Join(work, "merged")}
	for i, s := range []string{f.session, filepath.Join(work, "session2")} {
		mustRun(t, "synth", "-o", s, "--seed", fmt.Sprint(8+i), "--cameras", "1", "--time-scale", "0.1", "--width", "64", "--height", "48")
	}
	for src, dst := range map[string]string{"../../../taskspec/testdata/example.json": f.spec, "../../../profiles/synth.yaml": f.profile} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(dst, b, 0o644)
	}
	os.WriteFile(f.manifest, []byte(`{"schema_version": 1, "campaign_id": "fifo", "settings": {"s": {"export": {"vcodec": "h264"}}},
	  "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "session"},
	            {"case_id": "b", "setting_id": "s", "run_id": "1", "session": "session2"}]}`), 0o644)
	mustRun(t, "batch", f.manifest, "-o", f.out)
	f.shard, f.shard2 = filepath.Join(f.out, "fifo__a__s__run-1"), filepath.Join(f.out, "fifo__b__s__run-1")
	mustRun(t, "merge", f.shard, "-o", f.merged)
	return f
}

// expectNoHang runs a command with a named pipe planted at fifo and checks
// that it ends on its own, and that a failure names the pipe; it returns
// the exit code.
func expectNoHang(t *testing.T, fifo string, args ...string) int {
	t.Helper()
	out, errOut, code := runBounded(t, 45*time.Second, nil, args...)
	if code != exitOK && !(strings.Contains(out+errOut, filepath.Base(fifo)) && (strings.Contains(out+errOut, "named pipe") || strings.Contains(out+errOut, "not a directory"))) {
		t.Errorf("ceres-export %s with a pipe at %s: exit %d without naming it:\n%s%s", strings.Join(args, " "), fifo, code, out, errOut)
	}
	return code
}

// Every input the tool opens refuses a named pipe at
// once, naming it: each file or directory flag and positional argument of
// every command (enumerated from the command tree), every file of a
// session, of a shard, of a merged dataset and of a campaign's records.
// Nothing hangs, and a failure leaves no staging or lock behind.
func TestE2EFIFOEveryInput(t *testing.T) {
	f := newFIFOFixture(t)
	pipe := filepath.Join(f.work, "pipe")
	mkfifo(t, pipe)

	// Every flag and argument of every command.
	valid := map[string][]string{ // a valid command line, with {} where the input goes
		"export --profile":     {"export", f.session, "-o", filepath.Join(f.work, "x"), "--profile", "{}"},
		"export --task-spec":   {"export", f.session, "-o", filepath.Join(f.work, "x"), "--task-spec", "{}"},
		"synth --spec":         {"synth", "-o", filepath.Join(f.work, "x"), "--spec", "{}"},
		"verify --task-spec":   {"verify", f.shard, "--journal", f.session, "--task-spec", "{}"},
		"verify --journal":     {"verify", f.shard, "--journal", "{}"},
		"merge --into":         {"merge", f.shard2, "--into", "{}"},
		"report --shard":       {"report", f.session, "--shard", "{}", "-o", filepath.Join(f.work, "r.html")},
		"batch":                {"batch", "{}", "-o", filepath.Join(f.work, "x")},
		"batch kubernetes":     {"batch", "kubernetes", "{}", "-o", "/o", "--image", "i"},
		"batch plan":           {"batch", "plan", "{}"},
		"batch slurm":          {"batch", "slurm", "{}", "-o", filepath.Join(f.work, "x")},
		"batch slurm --binary": {"batch", "slurm", f.manifest, "-o", filepath.Join(f.work, "x"), "--binary", "{}"},
		"batch status":         {"batch", "status", "{}"},
		"export":               {"export", "{}", "-o", filepath.Join(f.work, "x")},
		"journal inspect":      {"journal", "inspect", "{}"},
		"merge":                {"merge", "{}", "-o", filepath.Join(f.work, "x")},
		"report":               {"report", "{}", "-o", filepath.Join(f.work, "r.html")},
		"spec canon":           {"spec", "canon", "{}"},
		"spec check":           {"spec", "check", "{}"},
		"spec hash":            {"spec", "hash", "{}"},
		"verify":               {"verify", "{}"},
	}
	flagKinds, positionalKinds := readInputKinds(t)
	for _, key := range slices.Sorted(maps.Keys(flagKinds)) {
		if kind := flagKinds[key]; kind == argFile || kind == argDir {
			t.Run(key, func(t *testing.T) { runWithPipe(t, valid, key, pipe) })
		}
	}
	for _, path := range slices.Sorted(maps.Keys(positionalKinds)) {
		if kinds := positionalKinds[path]; slices.Contains(kinds, argFile) || slices.Contains(kinds, argDir) {
			t.Run(path, func(t *testing.T) { runWithPipe(t, valid, path, pipe) })
		}
	}

	// Every file of every dataset and record the commands read.
	type reader struct {
		name string
		args func(session, shard, merged, out string) []string
		code int // the exit status a pipe among its inputs gives; -1: any
		// under limits code to the files under this directory ("" for all).
		under string
	}
	second := func(shard string) string { return filepath.Join(filepath.Dir(shard), filepath.Base(f.shard2)) }
	forEach := func(t *testing.T, root string, rel func(fixtureCopy fifoFixture) string, readers []reader) {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			r, _ := filepath.Rel(root, p)
			for _, rd := range readers {
				t.Run(filepath.ToSlash(r)+" "+rd.name, func(t *testing.T) {
					c := f.copy(t)
					fifo := filepath.Join(rel(c), r)
					mkfifo(t, fifo)
					applies := rd.code >= 0 && strings.HasPrefix(filepath.ToSlash(r), rd.under)
					if code := expectNoHang(t, fifo, rd.args(c.session, c.shard, c.merged, c.out)...); applies && code != rd.code {
						t.Errorf("exit %d, want %d", code, rd.code)
					}
					noStaging(t, c.work)
					noStaging(t, filepath.Dir(c.shard))
				})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Run("session files", func(t *testing.T) {
		forEach(t, f.session, func(c fifoFixture) string { return c.session }, []reader{
			{"export", func(s, _, _, _ string) []string {
				return []string{"export", s, "-o", filepath.Join(filepath.Dir(s), "x"), "-q"}
			}, exitUsage, ""},
			{"inspect", func(s, _, _, _ string) []string { return []string{"journal", "inspect", s} }, exitUsage, "journal/"},
			{"report", func(s, _, _, _ string) []string {
				return []string{"report", s, "-o", filepath.Join(filepath.Dir(s), "r.html")}
			}, -1, ""},
			{"batch", func(s, _, _, out string) []string {
				return []string{"batch", filepath.Join(filepath.Dir(s), "campaign.json"), "-o", out}
			}, -1, ""},
		})
	})
	t.Run("shard files", func(t *testing.T) {
		forEach(t, f.shard, func(c fifoFixture) string { return c.shard }, []reader{
			{"verify", func(_, d, _, _ string) []string { return []string{"verify", d} }, exitFindings, ""},
			{"merge", func(_, d, _, _ string) []string {
				return []string{"merge", d, "-o", filepath.Join(filepath.Dir(d), "..", "m2")}
			}, -1, ""},
			{"report", func(s, d, _, _ string) []string {
				return []string{"report", s, "--shard", d, "-o", filepath.Join(filepath.Dir(s), "r.html")}
			}, -1, ""},
			{"batch", func(s, _, _, out string) []string {
				return []string{"batch", filepath.Join(filepath.Dir(s), "campaign.json"), "-o", out}
			}, -1, ""},
		})
	})
	t.Run("merged files", func(t *testing.T) {
		forEach(t, f.merged, func(c fifoFixture) string { return c.merged }, []reader{
			{"verify", func(_, _, m, _ string) []string { return []string{"verify", m} }, exitFindings, ""},
			{"merge --into", func(_, d, m, _ string) []string { return []string{"merge", second(d), "--into", m, "-o", m + "-2"} }, -1, ""},
		})
	})
	t.Run("campaign records", func(t *testing.T) {
		forEach(t, filepath.Join(f.out, layout.AttemptsDir), func(c fifoFixture) string { return filepath.Join(c.out, layout.AttemptsDir) }, []reader{
			{"status", func(_, _, _, out string) []string { return []string{"batch", "status", out} }, -1, ""},
			{"batch", func(s, _, _, out string) []string {
				return []string{"batch", filepath.Join(filepath.Dir(s), "campaign.json"), "-o", out}
			}, -1, ""},
		})
	})
}

// runWithPipe runs the valid command line of key with the pipe as its
// input.
func runWithPipe(t *testing.T, valid map[string][]string, key, pipe string) {
	args, ok := valid[key]
	if !ok {
		t.Fatalf("no command line for %s in the test", key)
	}
	args = slices.Clone(args)
	for i := range args {
		if args[i] == "{}" {
			args[i] = pipe
		}
	}
	if code := expectNoHang(t, pipe, args...); code != exitUsage {
		t.Errorf("ceres-export %s with a pipe as input: exit %d, want %d (an input that cannot be read)", strings.Join(args, " "), code, exitUsage)
	}
}

// copy copies the fixture's inputs (session, manifest, campaign OUT and
// merged dataset) into a new directory.
func (f fifoFixture) copy(t *testing.T) fifoFixture {
	t.Helper()
	work := t.TempDir()
	for _, p := range []string{f.session, filepath.Join(f.work, "session2"), f.manifest, f.out, f.merged} {
		copyTree(t, p, filepath.Join(work, filepath.Base(p)))
	}
	c := f
	c.work = work
	c.session, c.manifest = filepath.Join(work, "session"), filepath.Join(work, "campaign.json")
	c.out, c.merged = filepath.Join(work, "out"), filepath.Join(work, "merged")
	c.shard = filepath.Join(c.out, filepath.Base(f.shard))
	return c
}

package campaign

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// fakeSbatch answers as sbatch --parsable does, recording every call.
type fakeSbatch struct {
	calls  [][]string
	answer []string // printed per call, in turn
	fail   int      // 1-based call that fails; 0 none
}

func (f *fakeSbatch) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	if name == "squeue" {
		return nil, nil // nothing queued: an earlier submission is done
	}
	f.calls = append(f.calls, append([]string{name}, args...))
	if len(f.calls) == f.fail {
		return nil, errors.New("exit status 1: sbatch: error: invalid partition specified")
	}
	return []byte(f.answer[len(f.calls)-1] + "\n"), nil
}

// TestSubmitSlurm: the array goes first, the rerun job after it whatever
// its state (afterany); the merge job depends on the rerun job's id
// (afterok) and is cancelled, not left pending, when it fails; a failure
// or an answer that is no job id is an error.
func TestSubmitSlurm(t *testing.T) {
	t.Parallel()
	tasks := selectionManifest(t)
	out := t.TempDir()
	o := ScriptOptions{Binary: "/bin/ceres-export", Manifest: "/m.json", Out: out, ArrayCount: 2, Merge: "/data/merged"}
	scripts, err := WriteSlurmScripts("c", tasks, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{scripts.Array, scripts.Merge} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm()&0o100 == 0 {
			t.Fatalf("script %s: %v %v", p, fi, err)
		}
	}
	if scripts.Array != filepath.Join(out, filepath.FromSlash(layout.SlurmArrayScript)) {
		t.Errorf("array script at %s", scripts.Array)
	}
	if fi, err := os.Stat(filepath.Join(out, filepath.FromSlash(layout.SlurmLogsDir))); err != nil || !fi.IsDir() {
		t.Errorf("no log directory: %v", err)
	}

	f := &fakeSbatch{answer: []string{"4711;cluster", "4712", "4713"}}
	jobs, err := SubmitSlurm(context.Background(), f, scripts)
	if err != nil {
		t.Fatal(err)
	}
	if jobs != (SlurmJobs{Array: "4711", Rerun: "4712", Merge: "4713"}) {
		t.Errorf("jobs %+v", jobs)
	}
	want := [][]string{
		{"sbatch", "--parsable", scripts.Array},
		{"sbatch", "--parsable", "--dependency=afterany:4711", "--kill-on-invalid-dep=yes", scripts.Rerun},
		{"sbatch", "--parsable", "--dependency=afterok:4712", "--kill-on-invalid-dep=yes", scripts.Merge},
	}
	if !reflect.DeepEqual(f.calls, want) {
		t.Errorf("calls %q, want %q", f.calls, want)
	}
	if cmd := scripts.SubmitCommand(); !strings.HasPrefix(cmd, "sbatch --parsable "+scripts.Array+" && sbatch") ||
		!strings.Contains(cmd, "afterany:<array job id>") || !strings.Contains(cmd, "afterok:<rerun job id>") {
		t.Errorf("submit command %q", cmd)
	}

	// A failed array submission submits no merge job.
	f = &fakeSbatch{answer: []string{"", "", ""}, fail: 1}
	if jobs, err := SubmitSlurm(context.Background(), f, scripts); err == nil || len(f.calls) != 1 || jobs.Array != "" || !strings.Contains(err.Error(), "invalid partition") {
		t.Errorf("failed submission: %+v %v, %d calls", jobs, err, len(f.calls))
	}
	f = &fakeSbatch{answer: []string{"Submitted batch job 12", "", ""}}
	if _, err := SubmitSlurm(context.Background(), f, scripts); err == nil || !strings.Contains(err.Error(), "want a job id") {
		t.Errorf("an answer without --parsable's id: %v", err)
	}
	// Without a merge, one call.
	f = &fakeSbatch{answer: []string{"9"}}
	if jobs, err := SubmitSlurm(context.Background(), f, SlurmScripts{Array: scripts.Array}); err != nil || jobs.Merge != "" || len(f.calls) != 1 {
		t.Errorf("array only: %+v %v %d calls", jobs, err, len(f.calls))
	}
}

// A setting of more shards than MergeGroupSize merges in a tree: an array
// of group merges after the export array, then the merge job after it,
// joining the groups (the others' shards as before), then removing them.
func TestSubmitSlurmMergeTree(t *testing.T) {
	t.Parallel()
	var cases []string
	for i := range 7 {
		cases = append(cases, `{"case_id": "a`+string(rune('0'+i))+`", "setting_id": "av1", "run_id": "1", "session": "x"}`)
	}
	cases = append(cases, `{"case_id": "b", "setting_id": "h264", "run_id": "1", "session": "x"}`)
	m := mustParse(t, `{"schema_version": 1, "campaign_id": "c", "settings": {"av1": {}, "h264": {}}, "cases": [`+strings.Join(cases, ",")+`]}`)
	out := t.TempDir()
	o := ScriptOptions{Binary: "/b", Manifest: "/m.json", Out: out, ArrayCount: 4, Merge: "/d", MergeGroupSize: 3}
	scripts, err := WriteSlurmScripts("c", m.Tasks, o)
	if err != nil {
		t.Fatal(err)
	}
	if scripts.Groups != filepath.Join(out, filepath.FromSlash(layout.SlurmGroupsScript)) {
		t.Fatalf("groups script %q", scripts.Groups)
	}
	groups, err := os.ReadFile(scripts.Groups)
	if err != nil {
		t.Fatal(err)
	}
	// Seven shards in groups of at most three: three even groups (2, 2, 3).
	g := func(n int) string { return out + "/" + layout.MergeGroupPath("av1", n) }
	s := func(i int) string { return out + "/c__a" + string(rune('0'+i)) + "__av1__run-1" }
	for _, want := range []string{`#SBATCH --array="0-2"` + "\n",
		"0)\n\tmkdir -p " + out + "/" + layout.MergeGroupsDir + "/av1\n\texec /b merge " + s(0) + " " + s(1) + " -o " + g(0) + " --replace\n",
		"\texec /b merge " + s(2) + " " + s(3) + " -o " + g(1) + " --replace\n",
		"\texec /b merge " + s(4) + " " + s(5) + " " + s(6) + " -o " + g(2) + " --replace\n",
	} {
		if !strings.Contains(string(groups), want) {
			t.Errorf("groups script lacks %q:\n%s", want, groups)
		}
	}
	merge, err := os.ReadFile(scripts.Merge)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/b merge " + g(0) + " " + g(1) + " " + g(2) + " -o /d/av1 --replace\n",
		"/b merge " + out + "/c__b__h264__run-1 -o /d/h264 --replace\n",
		"rm -rf " + out + "/" + layout.MergeGroupsDir + "\n"} {
		if !strings.Contains(string(merge), want) {
			t.Errorf("merge script lacks %q:\n%s", want, merge)
		}
	}
	f := &fakeSbatch{answer: []string{"10", "11", "12", "13"}}
	jobs, err := SubmitSlurm(context.Background(), f, scripts)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"sbatch", "--parsable", scripts.Array},
		{"sbatch", "--parsable", "--dependency=afterany:10", "--kill-on-invalid-dep=yes", scripts.Rerun},
		{"sbatch", "--parsable", "--dependency=afterok:11", "--kill-on-invalid-dep=yes", scripts.Groups},
		{"sbatch", "--parsable", "--dependency=afterok:12", "--kill-on-invalid-dep=yes", scripts.Merge},
	}
	if jobs != (SlurmJobs{Array: "10", Rerun: "11", Groups: "12", Merge: "13"}) || !reflect.DeepEqual(f.calls, want) {
		t.Errorf("jobs %+v, calls %q", jobs, f.calls)
	}
	// At or under the group size, no tree.
	o.MergeGroupSize = 7
	if scripts, err = WriteSlurmScripts("c", m.Tasks, o); err != nil || scripts.Groups != "" {
		t.Errorf("groups script %q for a setting of 7 shards with groups of 7 (%v)", scripts.Groups, err)
	}
}

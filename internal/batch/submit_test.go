package batch

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
	f.calls = append(f.calls, append([]string{name}, args...))
	if len(f.calls) == f.fail {
		return nil, errors.New("exit status 1: sbatch: error: invalid partition specified")
	}
	return []byte(f.answer[len(f.calls)-1] + "\n"), nil
}

// TestSubmitSlurm: the array goes first; the merge job depends on the
// array's id (afterok) and is cancelled, not left pending, when the array
// fails; a failure or an answer that is no job id is an error.
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

	f := &fakeSbatch{answer: []string{"4711;cluster", "4712"}}
	jobs, err := SubmitSlurm(context.Background(), f, scripts)
	if err != nil {
		t.Fatal(err)
	}
	if jobs != (SlurmJobs{Array: "4711", Merge: "4712"}) {
		t.Errorf("jobs %+v", jobs)
	}
	want := [][]string{
		{"sbatch", "--parsable", scripts.Array},
		{"sbatch", "--parsable", "--dependency=afterok:4711", "--kill-on-invalid-dep=yes", scripts.Merge},
	}
	if !reflect.DeepEqual(f.calls, want) {
		t.Errorf("calls %q, want %q", f.calls, want)
	}
	if cmd := scripts.SubmitCommand(); !strings.HasPrefix(cmd, "sbatch --parsable "+scripts.Array+" && sbatch") || !strings.Contains(cmd, "afterok:<array job id>") {
		t.Errorf("submit command %q", cmd)
	}

	// A failed array submission submits no merge job.
	f = &fakeSbatch{answer: []string{"", ""}, fail: 1}
	if jobs, err := SubmitSlurm(context.Background(), f, scripts); err == nil || len(f.calls) != 1 || jobs.Array != "" || !strings.Contains(err.Error(), "invalid partition") {
		t.Errorf("failed submission: %+v %v, %d calls", jobs, err, len(f.calls))
	}
	f = &fakeSbatch{answer: []string{"Submitted batch job 12", ""}}
	if _, err := SubmitSlurm(context.Background(), f, scripts); err == nil || !strings.Contains(err.Error(), "want a job id") {
		t.Errorf("an answer without --parsable's id: %v", err)
	}
	// Without a merge, one call.
	f = &fakeSbatch{answer: []string{"9"}}
	if jobs, err := SubmitSlurm(context.Background(), f, SlurmScripts{Array: scripts.Array}); err != nil || jobs.Merge != "" || len(f.calls) != 1 {
		t.Errorf("array only: %+v %v %d calls", jobs, err, len(f.calls))
	}
}

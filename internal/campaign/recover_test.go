package campaign

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/output"
)

// A running record of this host whose process is gone is a lost attempt:
// status says so (a record of another host it cannot judge stays running).
func TestStatusDeadPidOnThisHost(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	host, _ := os.Hostname()
	for _, r := range []*Record{
		{RecordVersion: RecordVersion, TaskID: "dead", State: StateRunning, Host: host, PID: 1 << 30},
		{RecordVersion: RecordVersion, TaskID: "alive", State: StateRunning, Host: host, PID: os.Getpid()},
		{RecordVersion: RecordVersion, TaskID: "elsewhere", State: StateRunning, Host: host + "-other-node", PID: 1 << 30},
	} {
		if err := CreateRecord(out, r); err != nil {
			t.Fatal(err)
		}
	}
	st, err := Status(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ts := range st.Tasks {
		got[ts.TaskID] = ts.State + "/" + ts.Category
	}
	want := map[string]string{"dead": "interrupted/lost", "alive": "running/", "elsewhere": "running/"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("states %v, want %v", got, want)
	}
	if st.States[StateRunning] != 2 || st.States[StateInterrupted] != 1 {
		t.Errorf("counts %v", st.States)
	}
}

// fakeQueue answers sbatch --parsable with the next job id, and squeue with
// the jobs it holds queued; it records every call.
type fakeQueue struct {
	calls  [][]string
	next   int
	queued []string
}

func (f *fakeQueue) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	f.calls = append(f.calls, append([]string{name}, args...))
	switch name {
	case "sbatch":
		f.next++
		id := 100 + f.next
		f.queued = append(f.queued, strconv.Itoa(id))
		return []byte(strconv.Itoa(id) + "\n"), nil
	case "squeue":
		var b strings.Builder
		for _, id := range f.queued {
			b.WriteString(id + " " + id + "\n")
		}
		return []byte(b.String()), nil
	}
	return nil, errors.New("unexpected command " + name)
}

// sbatchCalls are the calls of f that were sbatch.
func (f *fakeQueue) sbatchCalls() [][]string {
	var out [][]string
	for _, c := range f.calls {
		if c[0] == "sbatch" {
			out = append(out, c)
		}
	}
	return out
}

// Submitting a campaign into an OUT whose earlier submission still has jobs
// queued or running is refused as busy, and submits nothing; once they
// have left the queue a new submission goes.
func TestSubmitSlurmOnePipelinePerOut(t *testing.T) {
	t.Parallel()
	tasks := selectionManifest(t)
	out := t.TempDir()
	o := ScriptOptions{Binary: "/bin/ceres-export", Manifest: "/m.json", Out: out, ArrayCount: 2, Merge: "/data/merged"}
	scripts, err := WriteSlurmScripts("c", tasks, o)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeQueue{}
	if _, err := SubmitSlurm(context.Background(), f, scripts); err != nil {
		t.Fatal(err)
	}
	first := len(f.sbatchCalls())
	jobs, err := SubmitSlurm(context.Background(), f, scripts)
	if !errors.Is(err, output.ErrDestinationBusy) || len(f.sbatchCalls()) != first || jobs != (SlurmJobs{}) {
		t.Fatalf("second submission while the first is queued: %+v, %v, %d sbatch calls (want %d)", jobs, err, len(f.sbatchCalls()), first)
	}
	if !strings.Contains(err.Error(), "101") {
		t.Errorf("the refusal does not name the first submission's jobs: %v", err)
	}
	f.queued = nil
	if _, err := SubmitSlurm(context.Background(), f, scripts); err != nil || len(f.sbatchCalls()) != 2*first {
		t.Fatalf("submission after the first left the queue: %v, %d sbatch calls", err, len(f.sbatchCalls()))
	}
}

// A campaign recovers from an array task that failed (its export killed on
// a node that stays up, which SLURM does not requeue): a rerun job runs
// after the array whatever its state (afterany), runs the tasks that are
// not done and only then lets the merge go (afterok). The merge job and the
// rerun job ask to be requeued themselves, and the merges wait for a
// destination another (frozen) merge still holds.
func TestSlurmRecoveryChain(t *testing.T) {
	t.Parallel()
	tasks := selectionManifest(t)
	out := t.TempDir()
	o := ScriptOptions{Binary: "/bin/ceres-export", Manifest: "/m.json", Out: out, ArrayCount: 2, Merge: "/data/merged", WaitBusy: 3600e9}
	scripts, err := WriteSlurmScripts("c", tasks, o)
	if err != nil {
		t.Fatal(err)
	}
	rerun := filepath.Join(out, ".slurm", "rerun.sbatch")
	f := &fakeQueue{}
	if _, err := SubmitSlurm(context.Background(), f, scripts); err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"sbatch", "--parsable", scripts.Array},
		{"sbatch", "--parsable", "--dependency=afterany:101", "--kill-on-invalid-dep=yes", rerun},
		{"sbatch", "--parsable", "--dependency=afterok:102", "--kill-on-invalid-dep=yes", scripts.Merge},
	}
	if got := f.sbatchCalls(); !reflect.DeepEqual(got, want) {
		t.Errorf("sbatch calls %q, want %q", got, want)
	}
	body, err := os.ReadFile(rerun)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"#SBATCH --requeue\n", "exec /bin/ceres-export batch /m.json -o " + out + " --wait-busy 1h0m0s"} {
		if !strings.Contains(string(body), w) {
			t.Errorf("rerun script lacks %q:\n%s", w, body)
		}
	}
	if strings.Contains(string(body), "--array") {
		t.Errorf("the rerun job is not an array share:\n%s", body)
	}
	merge, err := os.ReadFile(scripts.Merge)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"#SBATCH --requeue\n", "#SBATCH --open-mode=append\n", " --replace --wait-busy 1h0m0s\n"} {
		if !strings.Contains(string(merge), w) {
			t.Errorf("merge script lacks %q:\n%s", w, merge)
		}
	}
}

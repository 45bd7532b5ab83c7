package campaign

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A Job the command line asks for that none can be is refused before
// anything is printed, naming the flags; an array count of 0 is one
// completion per task.
func TestKubernetesRequestRefused(t *testing.T) {
	tasks := kubeManifest(t, plainTasks)
	for _, c := range []struct {
		name string
		edit func(*KubernetesOptions)
		want string
	}{
		{"more completions than tasks", func(o *KubernetesOptions) { o.ArrayCount = len(tasks) + 1 }, "--array-count 3: only 2 tasks are selected"},
		{"no claim", func(o *KubernetesOptions) { o.Claim = "" }, "--claim and --mount: a claim and its mount are needed"},
		{"no mount", func(o *KubernetesOptions) { o.MountPath = "" }, "--claim and --mount"},
		{"negative time to live", func(o *KubernetesOptions) { o.TTLAfterFinished = -time.Second }, "none may be negative"},
		{"negative failed indexes", func(o *KubernetesOptions) { o.MaxFailedIndexes = -1 }, "none may be negative"},
	} {
		o := kubeOptions()
		c.edit(&o)
		if _, err := KubernetesJob("c", tasks, o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	o := kubeOptions()
	o.ArrayCount = 0
	if job := strictJob(t, tasks, o); *job.Spec.Completions != int32(len(tasks)) {
		t.Errorf("array count 0: %d completions, want one per task (%d)", *job.Spec.Completions, len(tasks))
	}
}

// What batch slurm prints: a line per script written, a line per job
// submitted.
func TestSlurmText(t *testing.T) {
	var b strings.Builder
	s := SlurmScripts{Array: "/o/a.sh", Rerun: "/o/r.sh", Groups: "/o/g.sh", Merge: "/o/m.sh"}
	if err := s.WriteText(&b, 7, ScriptOptions{ArrayCount: 3, MergeGroupSize: 64}); err != nil {
		t.Fatal(err)
	}
	if err := (SlurmJobs{Array: "11", Rerun: "12", Merge: "14"}).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `array script /o/a.sh (7 tasks in 3 array tasks)
rerun script /o/r.sh (after the array, whatever its state: runs what it left undone)
merge-groups script /o/g.sh (a tree merge: groups of at most 64 shards)
merge script /o/m.sh
array job 11
rerun job 12
merge job 14
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// A negative merge group size is refused with the values no script can
// carry, before anything is written.
func TestSlurmMergeGroupSizeRefused(t *testing.T) {
	err := ScriptOptions{Out: "/o", MergeGroupSize: -1}.CheckSlurmValues()
	if err == nil || !strings.Contains(err.Error(), "--merge-group-size -1: want 0 or more") {
		t.Errorf("error %v", err)
	}
	if err := (ScriptOptions{Out: "/o"}).CheckSlurmValues(); err != nil {
		t.Errorf("group size 0: %v", err)
	}
}

// ForSlurm makes the command line's options the scripts': absolute paths,
// this executable for no --binary, an array task per task for no
// --array-count; what no job could use is refused.
func TestForSlurm(t *testing.T) {
	o, err := ScriptOptions{Manifest: "c.json", Out: "out", Merge: "merged"}.ForSlurm(3)
	if err != nil {
		t.Fatal(err)
	}
	for what, p := range map[string]string{"binary": o.Binary, "manifest": o.Manifest, "OUT": o.Out, "merge": o.Merge} {
		if !filepath.IsAbs(p) {
			t.Errorf("%s %q is not absolute", what, p)
		}
	}
	if o.ArrayCount != 3 {
		t.Errorf("array count %d, want one per task (3)", o.ArrayCount)
	}
	for _, c := range []struct {
		o    ScriptOptions
		want string
	}{
		{ScriptOptions{Out: "out", ArrayCount: 4}, "--array-count 4: only 3 tasks are selected"},
		{ScriptOptions{Out: "out", Binary: filepath.Join(t.TempDir(), "missing")}, "--binary "},
		{ScriptOptions{Out: "out", Partition: "a\nb"}, "--partition"},
	} {
		if _, err := c.o.ForSlurm(3); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.o, err, c.want)
		}
	}
}

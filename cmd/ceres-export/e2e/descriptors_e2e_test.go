package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/descriptor"
	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// readDescriptors reads a dataset's ceres/tasks.json.
func readDescriptors(t *testing.T, dataset string) descriptor.File {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dataset, filepath.FromSlash(layout.DescriptorsPath)))
	if err != nil {
		t.Fatal(err)
	}
	var f descriptor.File
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// idsByTask maps each descriptor's specification task id to its id.
func idsByTask(f descriptor.File) map[string]string {
	m := map[string]string{}
	for _, d := range f.Tasks {
		m[d.Ext.Ceres.TaskID] = d.ID
	}
	return m
}

// TestE2EDescriptorIDsAreStable: two sessions of one protocol, and a
// re-export with corrected instructions, give every task the same id; the
// protocol's tasks get different ids; verify accepts each dataset.
func TestE2EDescriptorIDsAreStable(t *testing.T) {
	a := synthSession(t, "--seed", "1", "--cameras", "0")
	b := synthSession(t, "--seed", "2", "--cameras", "0")
	out := t.TempDir()
	shardA, shardB := filepath.Join(out, "a"), filepath.Join(out, "b")
	mustRun(t, "export", a, "-o", shardA, "-q", "--org", "lab-a", "--task-group", "station=bench-3")
	mustRun(t, "export", b, "-o", shardB, "-q")
	fa, fb := readDescriptors(t, shardA), readDescriptors(t, shardB)
	ida, idb := idsByTask(fa), idsByTask(fb)
	if len(ida) != 2 || ida["pick"] == "" || ida["inspect"] == "" {
		t.Fatalf("descriptors of a: %v, want pick and inspect (the pause has none)", ida)
	}
	if ida["pick"] == ida["inspect"] {
		t.Errorf("pick and inspect share id %s", ida["pick"])
	}
	for task, id := range ida {
		if idb[task] != id {
			t.Errorf("task %s: id %s in one session, %s in the other", task, id, idb[task])
		}
	}
	if g := fa.Tasks[0].Groups; len(g) != 4 || g[0] != (descriptor.Group{Level: "org", Key: "lab-a"}) || g[3] != (descriptor.Group{Level: "station", Key: "bench-3"}) {
		t.Errorf("groups with --org and --task-group: %v", g)
	}

	// A corrected specification (instructions and label of pick) keeps ids.
	spec, err := os.ReadFile("../../../taskspec/testdata/example.json")
	if err != nil {
		t.Fatal(err)
	}
	fixed := filepath.Join(out, "fixed.json")
	corrected := strings.Replace(strings.Replace(string(spec), `"Pick one sample"`, `"Pick exactly one sample"`, 1), `"Pick sample"`, `"Pick a sample"`, 1)
	if err := os.WriteFile(fixed, []byte(corrected), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "export", a, "-o", shardA, "-q", "--task-spec", fixed, "--replace", "--org", "lab-a")
	fr := readDescriptors(t, shardA)
	if got := idsByTask(fr); got["pick"] != ida["pick"] || got["inspect"] != ida["inspect"] {
		t.Errorf("re-export changed ids: %v, was %v", got, ida)
	}
	if d := fr.Tasks[0]; d.Title != "Pick a sample" || len(d.Ext.Ceres.Instructions) != 1 || d.Ext.Ceres.Instructions[0] != "Pick exactly one sample" {
		t.Errorf("re-exported pick descriptor: title %q, instructions %q", d.Title, d.Ext.Ceres.Instructions)
	}
	for _, s := range []string{shardA, shardB} {
		mustRun(t, "verify", s)
	}

	// A merge pools by id: one descriptor per task, features summed, every
	// instruction text it was recorded under.
	merged := filepath.Join(out, "merged")
	mustRun(t, "merge", shardA, shardB, "-o", merged)
	mustRun(t, "verify", merged)
	fm := readDescriptors(t, merged)
	if got := idsByTask(fm); len(fm.Tasks) != 2 || got["pick"] != ida["pick"] || got["inspect"] != ida["inspect"] {
		t.Fatalf("merged descriptors %v, want the sessions' ids %v, one each", got, ida)
	}
	pick, pickA, pickB := fm.Tasks[0], fr.Tasks[0], fb.Tasks[0]
	if pick.Features.Sessions != 2 || pick.Features.Episodes != pickA.Features.Episodes+pickB.Features.Episodes ||
		pick.Features.Attempts != pickA.Features.Attempts+pickB.Features.Attempts {
		t.Errorf("merged pick features %+v, want the sum of %+v and %+v", pick.Features, pickA.Features, pickB.Features)
	}
	if want := []string{"Pick exactly one sample", "Pick one sample"}; !slices.Equal(pick.Ext.Ceres.Instructions, want) {
		t.Errorf("merged pick instructions %q, want %q", pick.Ext.Ceres.Instructions, want)
	}

	_, errOut, code := run(t, "export", a, "-o", filepath.Join(out, "c"), "--task-group", "run=x")
	if code != 2 || !strings.Contains(errOut, `--task-group "run=x": level run is derived from the specification`) {
		t.Errorf("--task-group run=x: exit %d, %s", code, errOut)
	}
}

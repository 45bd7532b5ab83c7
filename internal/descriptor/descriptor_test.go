package descriptor

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

func exampleSpec(t *testing.T, edit func(string) string) *taskspec.Spec {
	t.Helper()
	b, err := os.ReadFile("../../taskspec/testdata/example.json")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if edit != nil {
		s = edit(s)
	}
	spec, err := taskspec.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// exampleRun: pick has a retried take, an accepted pass and an accepted
// fail; inspect one accepted attempt.
type exampleRun struct {
	attempts []Attempt
	episodes []Episode
}

func examplePlan() exampleRun {
	return exampleRun{
		attempts: []Attempt{
			{Task: "pick", Retried: true},
			{Task: "pick", Accepted: true, Outcome: "pass"},
			{Task: "pick", Accepted: true, Outcome: "fail"},
			{Task: "inspect", Accepted: true},
		},
		episodes: []Episode{{"pick", 125}, {"pick", 124}, {"inspect", 40}},
	}
}

func build(spec *taskspec.Spec, r exampleRun, opts Options) []Descriptor {
	return Build(spec, r.attempts, r.episodes, opts)
}

// TestIDVector pins the id rule (package doc) to values computed outside Go
// (Python's hashlib over the same key bytes).
func TestIDVector(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ run, task, typ, want string }{
		{"Sample transfer", "pick", "timed", "ceres-task-1a02d1b840113e6cfe8ab503ef174d68"},
		{"Sample transfer", "inspect", "open", "ceres-task-b0b9178cd1ce78d5686a3a55dfd7e11d"},
	} {
		if got := ID(tc.run, tc.task, tc.typ); got != tc.want {
			t.Errorf("ID(%q, %q, %q) = %s, want %s", tc.run, tc.task, tc.typ, got, tc.want)
		}
	}
}

func TestIDIdentifiesTheTask(t *testing.T) {
	t.Parallel()
	base := ID("Sample transfer", "pick", "timed")
	for _, tc := range []struct {
		name           string
		run, task, typ string
	}{
		{"other task", "Sample transfer", "inspect", "timed"},
		{"other type", "Sample transfer", "pick", "open"},
		{"other run", "Sample sorting", "pick", "timed"},
		// Without length prefixes these two would share a key.
		{"shifted boundary", "Sample transferp", "ick", "timed"},
	} {
		if ID(tc.run, tc.task, tc.typ) == base {
			t.Errorf("%s: same id as the base task", tc.name)
		}
	}
	// The id ignores what a correction changes.
	fixed := exampleSpec(t, func(s string) string {
		s = strings.Replace(s, `"Pick one sample"`, `"Pick exactly one sample"`, 1)
		s = strings.Replace(s, `"Pick sample"`, `"Pick a sample"`, 1)
		return strings.Replace(s, `"durationS": 12.5`, `"durationS": 15`, 1)
	})
	a := build(exampleSpec(t, nil), examplePlan(), Options{})
	b := build(fixed, examplePlan(), Options{Org: "lab-a"})
	if len(a) != 2 || len(b) != 2 {
		t.Fatalf("descriptors: %d and %d, want 2 (pause has none)", len(a), len(b))
	}
	for i := range a {
		if a[i].ID != b[i].ID {
			t.Errorf("task %s: corrected specification changed the id (%s → %s)", a[i].Ext.Ceres.TaskID, a[i].ID, b[i].ID)
		}
	}
	if a[0].ID == a[1].ID {
		t.Error("pick and inspect share an id")
	}
}

func TestBuild(t *testing.T) {
	t.Parallel()
	ds := build(exampleSpec(t, nil), examplePlan(), Options{Org: "lab-a", Levels: []Group{{"station", "bench-3"}}})
	pick := ds[0]
	if pick.Title != "Pick sample" || pick.Type != TypeData || pick.Subtype != "timed" || pick.Source.Kind != SourceLive ||
		pick.LabeledBy != (Labeler{LabeledBy, TierRecorded}) || pick.Org != "lab-a" {
		t.Errorf("pick = %+v", pick)
	}
	wantGroups := []Group{{LevelOrg, "lab-a"}, {LevelRun, "Sample transfer"}, {LevelTask, "pick"}, {"station", "bench-3"}}
	if !slices.Equal(pick.Groups, wantGroups) {
		t.Errorf("groups = %v, want %v", pick.Groups, wantGroups)
	}
	f := pick.Features
	if f.Attempts != 3 || f.Accepted != 2 || f.Retried != 1 || f.Passed != 1 || f.Failed != 1 ||
		f.Episodes != 2 || f.Frames != 249 || f.MeanEpisodeLength != 124.5 || f.Sessions != 1 ||
		*f.DurationS != 12.5 || *f.RepeatCount != 3 || *f.ResetTimeS != 5 {
		t.Errorf("pick features = %+v", f)
	}
	if in := ds[1].Features; in.DurationS != nil || in.Episodes != 1 || in.MeanEpisodeLength != 40 {
		t.Errorf("inspect features = %+v", in)
	}
	if errs := Check(ds); len(errs) > 0 {
		t.Errorf("Check: %v", errs)
	}
	// Without org, the chain starts at the run.
	if g := build(exampleSpec(t, nil), examplePlan(), Options{})[0].Groups; g[0].Level != LevelRun {
		t.Errorf("groups without org = %v", g)
	}
}

func TestPool(t *testing.T) {
	t.Parallel()
	orig := build(exampleSpec(t, nil), examplePlan(), Options{})
	fixed := build(exampleSpec(t, func(s string) string {
		return strings.Replace(s, `"Pick one sample"`, `"Pick exactly one sample"`, 1)
	}), examplePlan(), Options{})
	other := build(exampleSpec(t, func(s string) string {
		return strings.Replace(strings.Replace(s, `"durationS": 12.5`, `"durationS": 10`, 1), `"Sample transfer"`, `"Sample sorting"`, 1)
	}), examplePlan(), Options{})
	pooled := Pool(orig, fixed, other)
	if len(pooled) != 4 {
		t.Fatalf("pooled %d descriptors, want 4 (two tasks of two runs)", len(pooled))
	}
	pick := pooled[0]
	if pick.ID != orig[0].ID || pick.Features.Sessions != 2 || pick.Features.Episodes != 4 || pick.Features.Frames != 498 ||
		pick.Features.Attempts != 6 || pick.Features.Retried != 2 || pick.Features.MeanEpisodeLength != 124.5 {
		t.Errorf("pooled pick = %+v", pick.Features)
	}
	if want := []string{"Pick exactly one sample", "Pick one sample"}; !slices.Equal(pick.Ext.Ceres.Instructions, want) {
		t.Errorf("instructions = %q, want %q", pick.Ext.Ceres.Instructions, want)
	}
	if len(pick.Ext.Ceres.SpecificationHashes) != 2 {
		t.Errorf("specification hashes = %v, want both", pick.Ext.Ceres.SpecificationHashes)
	}
	if *pick.Features.DurationS != 12.5 {
		t.Error("sources agree on durationS, yet it was dropped")
	}
	// Disagreeing specification values are dropped, not summed.
	mixed := Pool(orig, build(exampleSpec(t, func(s string) string {
		return strings.Replace(s, `"durationS": 12.5`, `"durationS": 10`, 1)
	}), examplePlan(), Options{}))
	if len(mixed) != 2 || mixed[0].Features.DurationS != nil || mixed[0].Features.RepeatCount == nil {
		t.Errorf("mixed durations: %+v", mixed[0].Features)
	}
	// Pool leaves its inputs alone.
	if len(orig[0].Ext.Ceres.Instructions) != 1 || orig[0].Features.Sessions != 1 {
		t.Error("Pool changed its input")
	}
	if errs := Check(pooled); len(errs) > 0 {
		t.Errorf("Check: %v", errs)
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	good := func() []Descriptor { return build(exampleSpec(t, nil), examplePlan(), Options{Org: "lab-a"}) }
	for _, tc := range []struct {
		name string
		edit func(ds []Descriptor) []Descriptor
		want string
	}{
		{"no id", func(ds []Descriptor) []Descriptor { ds[0].ID = ""; return ds }, "tasks[0] (): no id"},
		{"duplicate id", func(ds []Descriptor) []Descriptor { return append(ds, ds[0]) }, "id also names tasks[0]: one descriptor per task"},
		{"id not derived", func(ds []Descriptor) []Descriptor { ds[1].ID = "ceres-task-00"; return ds }, `id is not the id of run "Sample transfer" task "inspect" type "open"`},
		{"second id for a task", func(ds []Descriptor) []Descriptor {
			d := ds[0]
			d.ID = "ceres-task-ff"
			return append(ds, d)
		}, `task "pick" has a second id`},
		{"type too long", func(ds []Descriptor) []Descriptor { ds[0].Type = strings.Repeat("x", 101); return ds }, "type has 101 characters, at most 100"},
		{"org too long", func(ds []Descriptor) []Descriptor {
			ds[0].Org = strings.Repeat("o", 201)
			ds[0].Groups[0].Key = ds[0].Org
			return ds
		}, "org has 201 characters, at most 200"},
		{"group key too long", func(ds []Descriptor) []Descriptor { ds[0].Groups[2].Key = strings.Repeat("é", 501); return ds }, "groups[2].key has 501 characters, at most 500"},
		{"group level too long", func(ds []Descriptor) []Descriptor {
			ds[0].Groups = append(ds[0].Groups, Group{strings.Repeat("l", 101), "k"})
			return ds
		}, "groups[3].level has 101 characters, at most 100"},
		{"groups not root first", func(ds []Descriptor) []Descriptor {
			g := ds[0].Groups
			g[1], g[2] = g[2], g[1]
			return ds
		}, "groups[2] (run) comes after a level below it"},
		{"user level before task", func(ds []Descriptor) []Descriptor {
			ds[0].Groups = slices.Insert(ds[0].Groups, 1, Group{"station", "s1"})
			return ds
		}, "groups[2] (run) comes after a level below it"},
		{"org not root", func(ds []Descriptor) []Descriptor { ds[0].Groups = ds[0].Groups[1:]; return ds }, `org "lab-a" is not the chain's root group`},
		{"empty group", func(ds []Descriptor) []Descriptor { ds[0].Groups[1].Key = ""; return ds }, "groups[1] needs a level and a key"},
		{"source kind", func(ds []Descriptor) []Descriptor { ds[0].Source.Kind = "replay"; return ds }, `source.kind "replay": want live, backlog, benchmark or history`},
		{"no labeler tier", func(ds []Descriptor) []Descriptor { ds[0].LabeledBy.Tier = ""; return ds }, "labeled_by needs a name and a tier"},
		{"mean off", func(ds []Descriptor) []Descriptor { ds[0].Features.MeanEpisodeLength = 1; return ds }, "features.meanEpisodeLength 1 is not frames/episodes (249/2)"},
		{"no title", func(ds []Descriptor) []Descriptor { ds[0].Title = ""; return ds }, "title is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := Check(tc.edit(good()))
			if !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, tc.want) }) {
				t.Errorf("Check = %q, want one containing %q", errs, tc.want)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	spec := exampleSpec(t, func(s string) string {
		// A label that quotes the instructions, or the run's description,
		// must not survive as title.
		s = strings.Replace(s, `"Pick sample"`, `"Pick: move each sample into the rack"`, 1)
		return strings.Replace(s, `"Inspect sample"`, `"Inspect: inspect until complete"`, 1)
	})
	plain := build(spec, examplePlan(), Options{Org: "lab-a"})
	ds := Redact(plain, "pepper", "session-1", spec)
	if ds[0].ID == plain[0].ID || !strings.HasPrefix(ds[0].ID, "ceres-task-") || Redact(plain, "pepper", "session-1", spec)[0].ID != ds[0].ID || Redact(plain, "salt", "session-1", spec)[0].ID == ds[0].ID {
		t.Errorf("redacted id %s (plain %s): want a salted id, stable for one salt", ds[0].ID, plain[0].ID)
	}
	if ds[0].Title != "pick" {
		t.Errorf("pick title = %q, want the task id (its label carries the run description)", ds[0].Title)
	}
	for i, task := range []string{"pick", "inspect"} {
		tk, _ := spec.Task(task)
		if want := privacy.TaskLabel(tk, "session-1", spec); ds[i].Title != want {
			t.Errorf("%s title = %q, but its public label (the episodes' task string) is %q", task, ds[i].Title, want)
		}
	}
	if ds[1].Title != "inspect" {
		t.Errorf("inspect title = %q, want the task id (its label carries the prompt)", ds[1].Title)
	}
	for _, d := range ds {
		c := d.Ext.Ceres
		if c.RunTitle != "" || c.Instructions != nil || c.Labels != nil {
			t.Errorf("%s: private fields left: %+v", d.ID, c)
		}
		for _, g := range d.Groups {
			if g.Key == "Sample transfer" || g.Key == "lab-a" {
				t.Errorf("%s: group %s keeps its name", d.ID, g.Level)
			}
		}
		if d.Org != privacy.SaltedHash("pepper", "lab-a") {
			t.Errorf("org = %q", d.Org)
		}
	}
	// Two calls with the same salt agree; another salt gives another hash.
	if once, again := privacy.SaltedHash("pepper", "x"), privacy.SaltedHash("pepper", "x"); once == privacy.SaltedHash("salt", "x") || once != again {
		t.Error("salted hash does not depend on exactly the salt")
	}
	if errs := Check(ds); len(errs) > 0 {
		t.Errorf("Check on redacted: %v", errs)
	}
}

package taskspec

import (
	"testing"
)

func TestDiff(t *testing.T) {
	t.Parallel()
	base := doc(head+`,"runDescription":"D"`, timedTask, openTask, pauseTask)
	cases := []struct {
		name string
		old  string
		new  string
		want []Difference
	}{
		{name: "identical", old: base, new: base},
		{name: "only formatting and trimming differ", old: base,
			new: with(with(base, `"Run"`, `"  Run "`), `"durationS":1`, `"durationS":1.0`)},
		{name: "top-level fields", old: base,
			new: with(with(with(base, `"Run"`, `"Run 2"`), `"cycleCount":1`, `"cycleCount":3`), `"runDescription":"D"`, `"runDescription":" "`),
			want: []Difference{
				{Path: "cycleCount", Old: "1", New: "3"},
				{Path: "runDescription", Old: `"D"`, New: ""},
				{Path: "runTitle", Old: `"Run"`, New: `"Run 2"`},
			}},
		{name: "task fields by id", old: base,
			new: with(with(with(base, `"durationS":1,"repeatCount":1`, `"durationS":12.5,"repeatCount":1`), `"label":"L","instructions":"I","repeatCount":1,"resetTimeS":5}`, `"label":"Look","instructions":"I","repeatCount":1,"resetTimeS":5}`), `"id":"p","type":"pause","label":"L","instructions":"I"`, `"id":"p","type":"pause","label":"L","instructions":"Wait \"here\""`),
			want: []Difference{
				{Path: `tasks[id="t"].durationS`, Old: "1", New: "12.5"},
				{Path: `tasks[id="o"].label`, Old: `"L"`, New: `"Look"`},
				{Path: `tasks[id="p"].instructions`, Old: `"I"`, New: `"Wait \"here\""`},
			}},
		{name: "type change swaps numbers", old: doc(head, openTask),
			new: doc(head, `{"id":"o","type":"pause","label":"L","instructions":"I","durationS":3}`),
			want: []Difference{
				{Path: `tasks[id="o"].durationS`, Old: "", New: "3"},
				{Path: `tasks[id="o"].repeatCount`, Old: "1", New: ""},
				{Path: `tasks[id="o"].resetTimeS`, Old: "5", New: ""},
				{Path: `tasks[id="o"].type`, Old: `"open"`, New: `"pause"`},
			}},
		{name: "order, removal and addition", old: doc(head, timedTask, openTask, pauseTask),
			new: doc(head, pauseTask, with(openTask, `"id":"o"`, `"id":"n"`), timedTask),
			want: []Difference{
				{Path: "tasks.order", Old: `["t","p"]`, New: `["p","t"]`},
				{Path: `tasks[id="o"]`, Old: `{"id":"o","instructions":"I","label":"L","repeatCount":1,"resetTimeS":5,"type":"open"}`},
				{Path: `tasks[id="n"]`, New: `{"id":"n","instructions":"I","label":"L","repeatCount":1,"resetTimeS":5,"type":"open"}`},
			}},
		{name: "non-ASCII id and values", old: doc(head, with(pauseTask, `"id":"p"`, `"id":"ü\n"`)),
			new: doc(head, with(with(pauseTask, `"id":"p"`, `"id":"ü"`), `"durationS":1`, `"durationS":5e-7`)),
			want: []Difference{
				{Path: `tasks[id="ü"].durationS`, Old: "1", New: "5e-7"},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old, err := Parse([]byte(tc.old))
			if err != nil {
				t.Fatal(err)
			}
			new, err := Parse([]byte(tc.new))
			if err != nil {
				t.Fatal(err)
			}
			assertDifferences(t, Diff(old, new), tc.want)
			// Swapping the sides swaps Old and New; with the same task
			// order the paths come in the same order.
			if len(old.Tasks) == len(new.Tasks) && Diff(old, new) != nil && tc.name != "order, removal and addition" {
				var swapped []Difference
				for _, d := range tc.want {
					swapped = append(swapped, Difference{Path: d.Path, Old: d.New, New: d.Old})
				}
				assertDifferences(t, Diff(new, old), swapped)
			}
		})
	}
}

func TestDiffNil(t *testing.T) {
	t.Parallel()
	s, err := Parse([]byte(doc(head, pauseTask)))
	if err != nil {
		t.Fatal(err)
	}
	got := Diff(nil, s)
	want := []Difference{
		{Path: "cycleCount", New: "1"},
		{Path: "runTitle", New: `"Run"`},
		{Path: "schema", New: `"ceres-task-specification"`},
		{Path: "version", New: "1"},
		{Path: `tasks[id="p"]`, New: `{"durationS":1,"id":"p","instructions":"I","label":"L","type":"pause"}`},
	}
	assertDifferences(t, got, want)
	if d := Diff(nil, nil); d != nil {
		t.Errorf("Diff(nil, nil) = %v", d)
	}
}

func assertDifferences(t *testing.T, got, want []Difference) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("differences:\n%+v\nwant:\n%+v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("difference %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

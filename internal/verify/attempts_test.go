package verify

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/journal"
)

// TestNoExporterRules checks that the checker's code (not its tests) does
// not import, even indirectly, the packages that hold the exporter's rules
// for fates, windows and the frame clock: verify must judge a shard by its
// own reading of docs/export-semantics.md, or it would agree with the
// exporter's bugs.
func TestNoExporterRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/ceres-robotics/ceres-export/internal/"
	for _, dep := range strings.Fields(string(out)) {
		switch dep {
		case module + "plan", module + "export", module + "shard":
			t.Errorf("internal/verify depends on %s", dep)
		}
	}
	// internal/lerobot is shared for LeRobot's layout (paths, templates),
	// which the conformance run checks against LeRobot itself; its frame
	// clock is the exporter's and stays out of the checker.
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	clock := regexp.MustCompile(`lerobot\.(Length|FrameTime|FrameTimes|LastFrameTime)\b`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := clock.Find(b); m != nil {
			t.Errorf("%s uses the exporter's frame clock (%s)", f, m)
		}
	}
}

// TestFrameClock checks the checker's frame clock against values worked
// out by hand from docs/export-semantics.md.
func TestFrameClock(t *testing.T) {
	cases := []struct {
		start, end int64
		fps        int
		length     int64
		times      []int64 // T_0, T_1, ...
	}{
		{0, 1e9, 10, 10, []int64{0, 1e8, 2e8}},
		{8e9, 9e9, 10, 10, []int64{8e9, 8.1e9}},
		{0, 1e9, 30, 30, []int64{0, 33333333, 66666667, 100000000}}, // 33.33… down, 66.67… up
		{0, 1e9, 3, 3, []int64{0, 333333333, 666666667}},
		{0, 999_999_999, 30, 29, nil}, // floor: the 30th frame would start at the end
		{5, 5, 30, 0, nil},
		{10, 5, 30, 0, nil},
		{0, 1e9, 2_000_000_000, 2_000_000_000, []int64{0, 1, 1, 2}}, // 0.5 ns rounds half up
		{1 << 62, 1<<62 + 2e9, 7, 14, []int64{1 << 62, 1<<62 + 142857143}},
	}
	for _, c := range cases {
		if got := frameCount(c.start, c.end, c.fps); got != c.length {
			t.Errorf("frameCount(%d, %d, %d) = %d, want %d", c.start, c.end, c.fps, got, c.length)
		}
		for k, want := range c.times {
			if got := frameTimeAt(c.start, int64(k), c.fps); got != want {
				t.Errorf("frameTimeAt(%d, %d, %d) = %d, want %d", c.start, k, c.fps, got, want)
			}
		}
	}
}

// TestFatesAgreeWithPlan runs the checker's rules and the exporter's plan
// side by side on the plan package's scripts (every fate and anomaly it
// documents) and on random event sequences, and asserts that they agree on
// every attempt's fate and every episode. The two are written
// independently; this test is where a disagreement shows up, so that the
// checker's findings on real shards can be trusted to mean an exporter bug.
func TestFatesAgreeWithPlan(t *testing.T) {
	scripts, err := filepath.Glob("../plan/testdata/*.txt")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no plan scripts: %v", err)
	}
	for _, path := range scripts {
		t.Run(filepath.Base(path), func(t *testing.T) {
			fps, types, events := readPlanScript(t, path)
			comparePlans(t, events, types, fps)
		})
	}
	types := map[string]string{"wave": "timed", "look": "open", "rest": "pause"}
	t.Run("equal starts", func(t *testing.T) {
		// Two complete attempts of one repetition start at the same time:
		// the later one in the journal wins.
		ev := func(t int64, kind string, attempt int) journal.Event {
			return journal.Event{T: t, Kind: kind, Task: "wave", Cycle: 1, Repetition: 1, Attempt: attempt, Cause: "duration"}
		}
		events := []journal.Event{
			ev(1e9, journal.EventAttemptStart, 2), ev(1e9, journal.EventAttemptStart, 1),
			ev(2e9, journal.EventAttemptEnd, 1), ev(3e9, journal.EventAttemptEnd, 2),
		}
		comparePlans(t, events, types, 10)
		if w := expectExport(events, func(string) (string, bool) { return "timed", true }, 10); len(w.episodes) != 1 || w.episodes[0].key.attempt != 1 {
			t.Errorf("want attempt 1 (later in the journal) as the one episode, got %+v", w.episodes)
		}
	})
	rng := rand.New(rand.NewPCG(13, 0))
	for i := range 3000 {
		events := randomEvents(rng)
		fps := []int{1, 10, 30, 1000}[rng.IntN(4)]
		if !comparePlans(t, events, types, fps) {
			b, _ := json.Marshal(events)
			t.Fatalf("random sequence %d at %d fps disagrees: %s", i, fps, b)
		}
	}
}

// comparePlans reports whether expectExport and plan.Build agree.
func comparePlans(t *testing.T, events []journal.Event, types map[string]string, fps int) bool {
	t.Helper()
	lookup := func(id string) (string, bool) { typ, ok := types[id]; return typ, ok }
	p, err := plan.Build(events, plan.MapTypes(types), fps)
	if err != nil {
		t.Fatal(err)
	}
	want := expectExport(events, lookup, fps)
	ok := true
	fail := func(format string, args ...any) {
		t.Errorf(format, args...)
		ok = false
	}
	if len(want.attempts) != len(p.Attempts) {
		fail("checker sees %d attempts, plan %d", len(want.attempts), len(p.Attempts))
	}
	for _, a := range p.Attempts {
		k := attemptKey{cycle: int64(a.Cycle), task: a.Task, repetition: int64(a.Repetition), attempt: int64(a.Attempt)}
		w := want.attempts[k]
		if w == nil {
			fail("attempt %s: plan has it, the checker does not", k)
			continue
		}
		if w.fate != string(a.Fate) {
			fail("attempt %s: checker says %s (%s), plan %s (%s)", k, w.fate, w.why, a.Fate, a.Reason)
		}
	}
	if len(want.episodes) != len(p.Episodes) {
		fail("checker has %d episodes, plan %d", len(want.episodes), len(p.Episodes))
		return false
	}
	for i, e := range p.Episodes {
		w := want.episodes[i]
		k := attemptKey{cycle: int64(e.Cycle), task: e.Task, repetition: int64(e.Repetition), attempt: int64(e.Attempt)}
		if w.key != k || w.start != e.Start || w.end != e.End || w.length != int64(e.Length) || w.outcome != e.Outcome {
			fail("episode %d: checker %s [%d, %d) length %d outcome %q, plan %s [%d, %d) length %d outcome %q",
				i, w.key, w.start, w.end, w.length, w.outcome, k, e.Start, e.End, e.Length, e.Outcome)
		}
	}
	return ok
}

// readPlanScript reads the header (fps, tasks) and the events of a plan
// script (internal/plan/script_test.go describes the format).
func readPlanScript(t *testing.T, path string) (int, map[string]string, []journal.Event) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	head, rest, ok := strings.Cut(text, "-- events --\n")
	body, _, ok2 := strings.Cut(rest, "-- plan --\n")
	if !ok || !ok2 {
		t.Fatalf("%s: no events and plan sections", path)
	}
	fps, types := 10, map[string]string{}
	for _, line := range strings.Split(head, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "fps":
			if fps, err = strconv.Atoi(f[1]); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		case len(f) > 0 && f[0] == "tasks":
			for _, kv := range f[1:] {
				id, typ, _ := strings.Cut(kv, "=")
				types[id] = typ
			}
		}
	}
	var events []journal.Event
	for _, line := range strings.Split(body, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var ev journal.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		events = append(events, ev)
	}
	return fps, types, events
}

// randomEvents draws a short journal over a few keys, with every event
// kind that decides a fate, duplicated and out-of-order events, unknown
// tasks, equal times, times that go back and zero-length windows included.
func randomEvents(rng *rand.Rand) []journal.Event {
	kinds := []string{journal.EventAttemptStart, journal.EventAttemptEnd, journal.EventRetry, journal.EventAnnotate, journal.EventPrompt}
	tasks := []string{"wave", "look", "rest", "ghost"}
	outcomes := []string{"pass", "fail", "clear", "maybe"}
	n := 1 + rng.IntN(14)
	var t int64
	events := make([]journal.Event, 0, n)
	for range n {
		t += []int64{0, 1, 50_000_000, 333_333_333, 1_000_000_000, -400_000_000}[rng.IntN(6)]
		ev := journal.Event{
			T:          t,
			Kind:       kinds[rng.IntN(len(kinds))],
			Task:       tasks[rng.IntN(len(tasks))],
			Cycle:      1 + rng.IntN(2),
			Repetition: 1 + rng.IntN(2),
			Attempt:    1 + rng.IntN(3),
		}
		switch ev.Kind {
		case journal.EventAttemptEnd:
			ev.Cause = "duration"
		case journal.EventAnnotate:
			ev.Outcome = outcomes[rng.IntN(len(outcomes))]
		}
		events = append(events, ev)
	}
	return events
}

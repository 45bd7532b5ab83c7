package verify

import (
	"fmt"
	"math/big"
	"sort"

	"github.com/ceres-robotics/ceres-export/journal"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// This file is the checker's own reading of docs/export-semantics.md
// ("Attempts and their fates", "Episodes", "The frame clock"). It
// deliberately shares no code with the exporter (internal/plan,
// internal/lerobot): a rule the exporter gets wrong must not be got wrong
// here in the same way, or verify would agree with the bug. Where the two
// could be written alike, this one takes the plainest route (whole-journal
// passes, math/big arithmetic) over the fastest.

// attemptKey names an attempt: (cycle, task, repetition, attempt).
type attemptKey struct {
	cycle      int64
	task       string
	repetition int64
	attempt    int64
}

func (k attemptKey) String() string {
	return fmt.Sprintf("(cycle %d, task %q, repetition %d, attempt %d)", k.cycle, k.task, k.repetition, k.attempt)
}

// fate values, spelled as the export report spells them.
const (
	fateAccepted   = "accepted"
	fateRetried    = "retried"
	fateIncomplete = "incomplete"
	fateEmpty      = "empty"
	fateAnomalous  = "anomalous"
)

// expectedAttempt is what the rules make of one attempt of the journal.
type expectedAttempt struct {
	key    attemptKey
	fate   string
	why    string // for every fate but accepted
	start  int64  // attempt_start.t, when there is exactly one
	end    int64  // attempt_end.t, when there is exactly one
	length int64  // frames of [start, end) at the shard's fps, for candidates
	// outcome is the latest pass/fail annotation, "" when none or cleared.
	outcome string
	// startPos is the journal position of the attempt_start (of the first
	// event naming it, for one without a start): the tie-break of order.
	startPos int
}

// expectedEpisode is an accepted attempt in episode order.
type expectedEpisode struct {
	index int
	*expectedAttempt
	times []int64 // T_k for k in [0, length)
}

// expectedExport is what an export of the session must contain.
type expectedExport struct {
	attempts map[attemptKey]*expectedAttempt
	episodes []expectedEpisode
}

// specTaskType looks a task's type up in a specification.
func specTaskType(spec *taskspec.Spec) func(id string) (string, bool) {
	return func(id string) (string, bool) {
		t, ok := spec.Task(id)
		return t.Type, ok
	}
}

// expectExport applies the rules to the journal's events, with the task
// types of the applied specification, at the shard's fps (at least 1).
func expectExport(events []journal.Event, taskType func(id string) (string, bool), fps int) *expectedExport {
	type gathered struct {
		starts, ends []int // journal positions
		retried      bool
		outcome      string
		first        int
	}
	byKey := map[attemptKey]*gathered{}
	var keys []attemptKey
	for i, ev := range events {
		switch ev.Kind {
		case journal.EventAttemptStart, journal.EventAttemptEnd, journal.EventRetry, journal.EventAnnotate:
		default:
			continue // nothing else decides a fate or a window
		}
		k := attemptKey{cycle: int64(ev.Cycle), task: ev.Task, repetition: int64(ev.Repetition), attempt: int64(ev.Attempt)}
		g := byKey[k]
		if g == nil {
			g = &gathered{first: i}
			byKey[k] = g
			keys = append(keys, k)
		}
		switch ev.Kind {
		case journal.EventAttemptStart:
			g.starts = append(g.starts, i)
		case journal.EventAttemptEnd:
			g.ends = append(g.ends, i)
		case journal.EventRetry:
			g.retried = true
		case journal.EventAnnotate:
			switch ev.Outcome {
			case "pass", "fail":
				g.outcome = ev.Outcome
			case "clear":
				g.outcome = ""
			}
		}
	}

	out := &expectedExport{attempts: map[attemptKey]*expectedAttempt{}}
	for _, k := range keys {
		g := byKey[k]
		a := &expectedAttempt{key: k, outcome: g.outcome, startPos: g.first}
		out.attempts[k] = a
		if len(g.starts) > 0 {
			a.startPos = g.starts[0]
			a.start = events[g.starts[0]].T
		}
		if len(g.ends) > 0 {
			a.end = events[g.ends[0]].T
		}
		typ, inSpec := taskType(k.task)
		switch {
		case len(g.starts) == 0:
			a.fate, a.why = fateAnomalous, "no attempt_start"
		case k.task == "" || k.cycle < 1 || k.repetition < 1 || k.attempt < 1:
			a.fate, a.why = fateAnomalous, "an empty task or a counter below 1"
		case !inSpec:
			a.fate, a.why = fateAnomalous, "a task the specification lacks"
		case typ != taskspec.TypeTimed && typ != taskspec.TypeOpen:
			a.fate, a.why = fateAnomalous, fmt.Sprintf("a task of type %s", typ)
		case len(g.starts) > 1:
			a.fate, a.why = fateAnomalous, fmt.Sprintf("%d attempt_start events", len(g.starts))
		case len(g.ends) > 0 && g.ends[0] < g.starts[0]:
			a.fate, a.why = fateAnomalous, "attempt_end before attempt_start"
		case len(g.ends) > 1:
			a.fate, a.why = fateAnomalous, fmt.Sprintf("%d attempt_end events", len(g.ends))
		case len(g.ends) == 1 && a.end < a.start:
			a.fate, a.why = fateAnomalous, "ends before it starts"
		case g.retried:
			a.fate, a.why = fateRetried, "a retry names it"
		case len(g.ends) == 0:
			a.fate, a.why = fateIncomplete, "no attempt_end"
		default:
			a.fate = fateAccepted // a candidate until the latest per repetition is known
		}
	}

	// Of the candidates of one (cycle, task, repetition), the one that
	// starts last wins (the later start in the journal on equal times).
	type repetition struct {
		cycle      int64
		task       string
		repetition int64
	}
	winner := map[repetition]*expectedAttempt{}
	for _, k := range keys {
		a := out.attempts[k]
		if a.fate != fateAccepted {
			continue
		}
		r := repetition{k.cycle, k.task, k.repetition}
		if w := winner[r]; w == nil || a.start > w.start || a.start == w.start && a.startPos > w.startPos {
			winner[r] = a
		}
	}
	var accepted []*expectedAttempt
	for _, k := range keys {
		a := out.attempts[k]
		if a.fate != fateAccepted {
			continue
		}
		if w := winner[repetition{k.cycle, k.task, k.repetition}]; w != a {
			a.fate, a.why = fateAnomalous, fmt.Sprintf("superseded by attempt %d", w.key.attempt)
			continue
		}
		a.length = frameCount(a.start, a.end, fps)
		if a.length == 0 {
			a.fate, a.why = fateEmpty, "its window is shorter than one frame"
			continue
		}
		accepted = append(accepted, a)
	}
	sort.SliceStable(accepted, func(i, j int) bool {
		if accepted[i].start != accepted[j].start {
			return accepted[i].start < accepted[j].start
		}
		return accepted[i].startPos < accepted[j].startPos
	})
	for i, a := range accepted {
		times := make([]int64, a.length)
		for k := range times {
			times[k] = frameTimeAt(a.start, int64(k), fps)
		}
		out.episodes = append(out.episodes, expectedEpisode{index: i, expectedAttempt: a, times: times})
	}
	return out
}

var nsPerSecond = big.NewInt(1_000_000_000)

// frameCount is floor((end − start)·fps / 1e9), the frames of [start, end).
func frameCount(start, end int64, fps int) int64 {
	d := new(big.Int).Sub(big.NewInt(end), big.NewInt(start))
	if d.Sign() <= 0 {
		return 0
	}
	d.Mul(d, big.NewInt(int64(fps)))
	return d.Quo(d, nsPerSecond).Int64()
}

// frameTimeAt is start + round(k·1e9 / fps) ns, halves rounded up.
func frameTimeAt(start, k int64, fps int) int64 {
	// round(x/y) for x, y > 0 with halves up is floor((2x + y) / 2y).
	x := new(big.Int).Mul(big.NewInt(k), nsPerSecond)
	y := big.NewInt(int64(fps))
	x.Mul(x, big.NewInt(2)).Add(x, y)
	x.Quo(x, y.Mul(y, big.NewInt(2)))
	return x.Add(x, big.NewInt(start)).Int64()
}

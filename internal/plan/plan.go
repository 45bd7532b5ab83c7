package plan

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/journal"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// Fate is what an export does with an attempt.
type Fate string

// The fates of an attempt; see the package documentation for the rules.
const (
	Accepted   Fate = "accepted"   // exported as an episode
	Retried    Fate = "retried"    // a retry names it; never exported
	Incomplete Fate = "incomplete" // attempt_start without attempt_end, not retried
	Anomalous  Fate = "anomalous"  // the journal contradicts itself or the specification; Reason says how
	Empty      Fate = "empty"      // would be accepted, but its window is shorter than one frame
)

// Task types of the task specification (version 1), as taskspec names them.
const (
	TypeTimed = taskspec.TypeTimed
	TypeOpen  = taskspec.TypeOpen
	TypePause = taskspec.TypePause
)

// TaskTypes looks up the type (timed, open or pause) of a task id in the
// applied task specification; ok is false for an id the specification lacks.
type TaskTypes func(id string) (typ string, ok bool)

// SpecTypes returns the TaskTypes of a specification.
func SpecTypes(spec *taskspec.Spec) TaskTypes {
	m := make(map[string]string, len(spec.Tasks))
	for _, t := range spec.Tasks {
		m[t.ID] = t.Type
	}
	return MapTypes(m)
}

// MapTypes returns a TaskTypes that looks ids up in m (task id → type).
func MapTypes(m map[string]string) TaskTypes {
	return func(id string) (string, bool) {
		t, ok := m[id]
		return t, ok
	}
}

// Key identifies an attempt. Counters are 1-based, as in the journal.
type Key struct {
	Cycle      int    `json:"cycle"`
	Task       string `json:"task"`
	Repetition int    `json:"repetition"`
	Attempt    int    `json:"attempt"`
}

// describe formats k as "cycle 1 wave rep 2 attempt 1". (Not a String
// method: Attempt and Episode embed Key and would print as their key.)
func describe(k Key) string {
	return fmt.Sprintf("cycle %d %s rep %d attempt %d", k.Cycle, k.Task, k.Repetition, k.Attempt)
}

// Attempt is one attempt of the journal and its fate.
type Attempt struct {
	Key
	// TaskType is the task's type in the specification; "" when the
	// specification lacks the task.
	TaskType string `json:"taskType"`
	Fate     Fate   `json:"fate"`
	// Reason says why an attempt is anomalous or empty; "" otherwise.
	Reason string `json:"reason,omitempty"`
	// HasStart is false for an orphan: an attempt that events name
	// (attempt_end, retry, annotate) but that never started. Start is then 0.
	HasStart bool  `json:"hasStart"`
	Start    int64 `json:"start"` // attempt_start.t (the first one, if duplicated)
	// HasEnd is false when no attempt_end follows the attempt_start (End is
	// then 0). End is the first attempt_end after the first attempt_start.
	HasEnd bool  `json:"hasEnd"`
	End    int64 `json:"end"`
	// Cause is attempt_end's cause (duration, next or stop); "" without one.
	Cause string `json:"cause,omitempty"`
	// Outcome is the latest annotation: "pass", "fail", or "" when none holds.
	Outcome string `json:"outcome,omitempty"`
	// Episode is the episode index of an accepted attempt, -1 otherwise.
	Episode int `json:"episode"`
	// Length is the window's length in frames at the plan's fps; 0 when the
	// attempt has no complete window.
	Length int `json:"length"`
}

// Episode is an accepted attempt as it is exported. Its window is
// [Start, End) on the journal clock and holds Length >= 1 frames; frame k
// lies at lerobot.FrameTime(Start, k, fps).
type Episode struct {
	Index int `json:"index"` // episode_index: 0, 1, 2, ... in Start order
	Key
	TaskType string `json:"taskType"`
	Start    int64  `json:"start"`
	End      int64  `json:"end"`
	Length   int    `json:"length"`
	Outcome  string `json:"outcome,omitempty"` // "pass", "fail", or "" when not annotated
}

// Interval kinds.
const (
	KindPause = "pause"
	KindReset = "reset"
)

// Interval is a pause (pause_start to pause_end) or a reset (reset_start to
// reset_end). Intervals never produce rows; they are reported. A pause
// carries Task and Cycle only; a reset also Repetition and Attempt.
type Interval struct {
	Kind       string `json:"kind"`
	Task       string `json:"task"`
	Cycle      int    `json:"cycle"`
	Repetition int    `json:"repetition,omitempty"`
	Attempt    int    `json:"attempt,omitempty"`
	Start      int64  `json:"start"`
	// End is 0 and Open is true when the interval never ended.
	End  int64 `json:"end"`
	Open bool  `json:"open,omitempty"`
}

// Plan is what an export of one session does: every attempt with its fate,
// and the episodes in export order.
type Plan struct {
	FPS int `json:"fps"`
	// Attempts holds every attempt: those that started, in attempt_start
	// order (ties in journal order), then orphans in the order events first
	// name them.
	Attempts []Attempt `json:"attempts"`
	// Episodes holds the accepted attempts in Start order; Episodes[i].Index
	// is i.
	Episodes []Episode  `json:"episodes"`
	Pauses   []Interval `json:"pauses"`
	Resets   []Interval `json:"resets"`
	// Diagnostics lists, in journal order, events the plan could not place
	// and that belong to no attempt (an unmatched pause_end, an annotate
	// with an unknown outcome, a decreasing t, ...). Each names its event
	// index.
	Diagnostics []string `json:"diagnostics"`
}

// Count returns the number of attempts with fate f.
func (p *Plan) Count(f Fate) int {
	n := 0
	for _, a := range p.Attempts {
		if a.Fate == f {
			n++
		}
	}
	return n
}

// attemptEvents gathers the events of one attempt, by index into the events.
type attemptEvents struct {
	key       Key
	firstSeen int   // index of the first event naming the attempt
	starts    []int // attempt_start events
	ends      []int // attempt_end events
	retries   []int
	outcome   string // latest pass/fail annotation, "" after clear
}

// Build plans the export of a session from its events, in journal order,
// the types of the applied specification's tasks, and the dataset rate fps.
// It returns an error only when no plan can be made (fps outside [1, lerobot.MaxFPS],
// no task lookup); everything a journal can contain is a fate or a
// diagnostic of the plan.
func Build(events []journal.Event, taskType TaskTypes, fps int) (*Plan, error) {
	if fps < 1 || fps > lerobot.MaxFPS {
		return nil, fmt.Errorf("plan: fps %d outside [1, %d]", fps, lerobot.MaxFPS)
	}
	if taskType == nil {
		return nil, errors.New("plan: no task type lookup")
	}
	p := &Plan{FPS: fps, Attempts: []Attempt{}, Episodes: []Episode{}, Pauses: []Interval{}, Resets: []Interval{}, Diagnostics: []string{}}
	diag := func(i int, format string, args ...any) {
		p.Diagnostics = append(p.Diagnostics, fmt.Sprintf("event %d: ", i)+fmt.Sprintf(format, args...))
	}

	byKey := map[Key]*attemptEvents{}
	var order []*attemptEvents
	named := func(ev journal.Event, i int) *attemptEvents {
		k := Key{Cycle: ev.Cycle, Task: ev.Task, Repetition: ev.Repetition, Attempt: ev.Attempt}
		ae := byKey[k]
		if ae == nil {
			ae = &attemptEvents{key: k, firstSeen: i}
			byKey[k] = ae
			order = append(order, ae)
		}
		return ae
	}
	pauses := newIntervals(KindPause)
	resets := newIntervals(KindReset)
	for i, ev := range events {
		if i > 0 && ev.T < events[i-1].T {
			diag(i, "%s at t=%d is before the previous event (t=%d)", ev.Kind, ev.T, events[i-1].T)
		}
		switch ev.Kind {
		case journal.EventAttemptStart:
			ae := named(ev, i)
			ae.starts = append(ae.starts, i)
		case journal.EventAttemptEnd:
			ae := named(ev, i)
			ae.ends = append(ae.ends, i)
			switch ev.Cause {
			case "duration", "next", "stop":
			default:
				diag(i, "attempt_end of %s has unknown cause %q", describe(ae.key), ev.Cause)
			}
		case journal.EventRetry:
			ae := named(ev, i)
			ae.retries = append(ae.retries, i)
		case journal.EventAnnotate:
			ae := named(ev, i)
			switch ev.Outcome {
			case "pass", "fail":
				ae.outcome = ev.Outcome
			case "clear":
				ae.outcome = ""
			default:
				diag(i, "annotate of %s has unknown outcome %q; ignored", describe(ae.key), ev.Outcome)
			}
		case journal.EventPauseStart, journal.EventPauseEnd:
			typ, ok := taskType(ev.Task)
			switch {
			case !ok:
				diag(i, "%s names task %q, which the specification lacks", ev.Kind, ev.Task)
			case typ != TypePause:
				diag(i, "%s names task %q of type %s, not a pause", ev.Kind, ev.Task, typ)
			}
			pk := Interval{Kind: KindPause, Task: ev.Task, Cycle: ev.Cycle}
			if ev.Kind == journal.EventPauseStart {
				if already := pauses.start(pk, ev.T); already {
					diag(i, "pause_start of %s cycle %d while it is already paused; the earlier pause stays open", ev.Task, ev.Cycle)
				}
			} else if !pauses.end(pk, ev.T) {
				diag(i, "pause_end of %s cycle %d without pause_start", ev.Task, ev.Cycle)
			}
		case journal.EventResetStart, journal.EventResetEnd:
			rk := Interval{Kind: KindReset, Task: ev.Task, Cycle: ev.Cycle, Repetition: ev.Repetition, Attempt: ev.Attempt}
			k := Key{Cycle: ev.Cycle, Task: ev.Task, Repetition: ev.Repetition, Attempt: ev.Attempt}
			if ae := byKey[k]; ae == nil || len(ae.starts) == 0 {
				diag(i, "%s names %s, which has no attempt_start before it", ev.Kind, describe(k))
			}
			if ev.Kind == journal.EventResetStart {
				if already := resets.start(rk, ev.T); already {
					diag(i, "reset_start of %s while its reset is already open; the earlier reset stays open", describe(k))
				}
			} else if !resets.end(rk, ev.T) {
				diag(i, "reset_end of %s without reset_start", describe(k))
			}
		}
		// run_start, cycle_start, cycle_end, prompt, run_end and unknown
		// kinds carry nothing a plan needs.
	}
	p.Pauses = pauses.done()
	p.Resets = resets.done()

	attempts := make([]Attempt, len(order))
	startIndex := make([]int, len(order)) // first attempt_start, or firstSeen for orphans
	for j, ae := range order {
		attempts[j], startIndex[j] = judge(ae, events, taskType)
	}
	resolveDuplicatesAndLength(attempts, startIndex, fps)

	// Started attempts in Start order (ties in journal order), then orphans
	// in the order events first named them.
	idx := make([]int, len(attempts))
	for j := range idx {
		idx[j] = j
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		x, y := attempts[a], attempts[b]
		if x.HasStart != y.HasStart {
			if x.HasStart {
				return -1
			}
			return 1
		}
		if x.HasStart {
			if c := cmp.Compare(x.Start, y.Start); c != 0 {
				return c
			}
		}
		return cmp.Compare(startIndex[a], startIndex[b])
	})
	for _, j := range idx {
		a := attempts[j]
		if a.Fate == Accepted {
			a.Episode = len(p.Episodes)
			p.Episodes = append(p.Episodes, Episode{
				Index: a.Episode, Key: a.Key, TaskType: a.TaskType,
				Start: a.Start, End: a.End, Length: a.Length, Outcome: a.Outcome,
			})
		}
		p.Attempts = append(p.Attempts, a)
	}
	return p, nil
}

// judge decides the fate of one attempt from its own events, before
// attempts of the same repetition are compared. It returns Accepted for a
// candidate episode. The second result is the event index that orders the
// attempt among equal start times.
func judge(ae *attemptEvents, events []journal.Event, taskType TaskTypes) (Attempt, int) {
	a := Attempt{Key: ae.key, Outcome: ae.outcome, Episode: -1}
	typ, known := taskType(ae.key.Task)
	if known {
		a.TaskType = typ
	}
	first := ae.firstSeen
	endBeforeStart := false
	if len(ae.starts) > 0 {
		first = ae.starts[0]
		a.HasStart = true
		a.Start = events[first].T
		for _, e := range ae.ends {
			if e < first {
				endBeforeStart = true
				continue
			}
			if !a.HasEnd {
				a.HasEnd = true
				a.End = events[e].T
				a.Cause = events[e].Cause
			}
		}
	}
	anomaly := func(format string, args ...any) (Attempt, int) {
		a.Fate = Anomalous
		a.Reason = fmt.Sprintf(format, args...)
		return a, first
	}
	switch {
	case !a.HasStart:
		return anomaly("%s without attempt_start", events[ae.firstSeen].Kind)
	case ae.key.Task == "":
		return anomaly("attempt_start without a task id")
	case ae.key.Cycle < 1 || ae.key.Repetition < 1 || ae.key.Attempt < 1:
		return anomaly("counters must be 1-based (cycle %d, repetition %d, attempt %d)", ae.key.Cycle, ae.key.Repetition, ae.key.Attempt)
	case !known:
		return anomaly("task %q is not in the specification", ae.key.Task)
	case typ == TypePause:
		return anomaly("task %q is a pause; pauses record no attempts", ae.key.Task)
	case typ != TypeTimed && typ != TypeOpen:
		return anomaly("task %q has type %q, neither timed nor open", ae.key.Task, typ)
	case len(ae.starts) > 1:
		return anomaly("%d attempt_start events", len(ae.starts))
	case endBeforeStart:
		return anomaly("attempt_end before attempt_start")
	case len(ae.ends) > 1:
		return anomaly("%d attempt_end events", len(ae.ends))
	case a.HasEnd && a.End < a.Start:
		return anomaly("attempt_end.t %d before attempt_start.t %d", a.End, a.Start)
	case len(ae.retries) > 0:
		a.Fate = Retried
		return a, first
	case !a.HasEnd:
		a.Fate = Incomplete
		return a, first
	}
	a.Fate = Accepted
	return a, first
}

// resolveDuplicatesAndLength applies the rules that compare attempts: of
// several candidates of one (cycle, task, repetition) the latest (greatest
// Start, then latest in the journal) wins and the others are anomalous; a
// winner shorter than one frame is empty.
func resolveDuplicatesAndLength(attempts []Attempt, order []int, fps int) {
	type rep struct {
		cycle      int
		task       string
		repetition int
	}
	winner := map[rep]int{}
	for j, a := range attempts {
		if a.Fate != Accepted {
			continue
		}
		r := rep{a.Cycle, a.Task, a.Repetition}
		w, ok := winner[r]
		if !ok || a.Start > attempts[w].Start || a.Start == attempts[w].Start && order[j] > order[w] {
			winner[r] = j
		}
	}
	for j := range attempts {
		a := &attempts[j]
		if a.HasEnd && a.End >= a.Start {
			a.Length = lerobot.Length(a.Start, a.End, fps)
		}
		if a.Fate != Accepted {
			continue
		}
		w := winner[rep{a.Cycle, a.Task, a.Repetition}]
		switch {
		case w != j:
			a.Fate = Anomalous
			a.Reason = fmt.Sprintf("superseded by attempt %d of the same cycle, task and repetition; the latest accepted attempt wins", attempts[w].Attempt)
		case a.Length == 0:
			a.Fate = Empty
			a.Reason = fmt.Sprintf("window of %d ns is shorter than one frame at %d fps", a.End-a.Start, fps)
		}
	}
}

// intervals pairs start and end events of pauses or resets by their key.
type intervals struct {
	kind string
	open map[Interval]int // key (Start, End zero) → index into list
	list []Interval
}

func newIntervals(kind string) *intervals {
	return &intervals{kind: kind, open: map[Interval]int{}}
}

// start opens an interval; it reports whether one with the same key was
// already open (that one stays open for good).
func (iv *intervals) start(key Interval, t int64) bool {
	_, already := iv.open[key]
	in := key
	in.Start = t
	in.Open = true
	iv.open[key] = len(iv.list)
	iv.list = append(iv.list, in)
	return already
}

// end closes the open interval with key; it reports false when none is
// open.
func (iv *intervals) end(key Interval, t int64) bool {
	j, ok := iv.open[key]
	if !ok {
		return false
	}
	delete(iv.open, key)
	iv.list[j].End = t
	iv.list[j].Open = false
	return true
}

// done returns the intervals in start order (ties in journal order).
func (iv *intervals) done() []Interval {
	out := slices.Clone(iv.list)
	if out == nil {
		out = []Interval{}
	}
	slices.SortStableFunc(out, func(a, b Interval) int { return cmp.Compare(a.Start, b.Start) })
	return out
}

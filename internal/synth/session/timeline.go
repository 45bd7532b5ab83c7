package session

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ceres-robotics/ceres-export/journal"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// Time units on the journal clock.
const (
	millisecond int64 = 1_000_000
	second      int64 = 1_000 * millisecond
)

// minResetS is the reset CERES enforces when it applies a specification to a
// capture configuration, whatever resetTimeS says.
const minResetS = 5.0

// timeline is the run as a recorder would have lived it: the lifecycle
// events in order and the time the recording stops.
type timeline struct {
	events []journal.Event
	end    int64 // time of run_end (or of the crash)
}

// retryKind says how an attempt is retried, if at all.
type retryKind int

const (
	noRetry retryKind = iota
	retryWhileRecording
	retryAfterEnd
)

// buildTimeline walks the specification as CERES executes it: tasks in order,
// each timed or open task repetitionCount times with a reset after every
// attempt, pauses where they stand, the whole array cycleCount times. All
// times fall on whole milliseconds so that WebM's 1/1000 time base holds
// them exactly.
func buildTimeline(spec *taskspec.Spec, opts Options, rng *rand.Rand) timeline {
	scale := opts.timeScale()
	dur := func(seconds float64) int64 {
		return int64(math.Round(seconds*scale*1000)) * millisecond
	}
	var tl timeline
	t := 100 * millisecond
	emit := func(e journal.Event) {
		e.T = t
		tl.events = append(tl.events, e)
	}
	forced := []retryKind{retryWhileRecording, retryAfterEnd}
	emit(journal.Event{Kind: journal.EventRunStart})
	for cycle := 1; cycle <= int(spec.CycleCount); cycle++ {
		emit(journal.Event{Kind: journal.EventCycleStart, Cycle: cycle})
		for _, task := range spec.Tasks {
			if task.Type == taskspec.TypePause {
				emit(journal.Event{Kind: journal.EventPauseStart, Task: task.ID, Cycle: cycle})
				t += dur(*task.DurationS)
				emit(journal.Event{Kind: journal.EventPauseEnd, Task: task.ID, Cycle: cycle})
				continue
			}
			reps := int(*task.RepeatCount)
			reset := dur(math.Max(minResetS, *task.ResetTimeS))
			for rep := 1; rep <= reps; rep++ {
				for attempt := 1; ; attempt++ {
					key := journal.Event{Task: task.ID, Cycle: cycle, Repetition: rep, Attempt: attempt}
					var length int64
					cause := "duration"
					if task.Type == taskspec.TypeTimed {
						length = dur(*task.DurationS)
					} else {
						length = dur(3 + float64(4*rng.Float64()))
						cause = "next"
					}
					retry := noRetry
					switch {
					case opts.NoRetries || attempt > 2:
					case len(forced) > 0 && length > 0:
						retry, forced = forced[0], forced[1:]
					case rng.Float64() < 0.1:
						retry = retryWhileRecording
					case rng.Float64() < 0.1:
						retry = retryAfterEnd
					}
					prompt := key
					prompt.Kind, prompt.Attempt, prompt.Repetition, prompt.Cycle = journal.EventPrompt, 0, 0, 0
					prompt.Text = task.Instructions
					emit(prompt)
					start := key
					start.Kind = journal.EventAttemptStart
					emit(start)
					if retry == retryWhileRecording {
						t += length/4 + int64(rng.IntN(int(length/2/millisecond)+1))*millisecond
						r := key
						r.Kind = journal.EventRetry
						emit(r)
					} else {
						t += length
						end := key
						end.Kind, end.Cause = journal.EventAttemptEnd, cause
						emit(end)
					}
					if retry == retryAfterEnd {
						t += 300 * millisecond
						r := key
						r.Kind = journal.EventRetry
						emit(r)
					}
					rs := key
					rs.Kind = journal.EventResetStart
					emit(rs)
					if retry == noRetry {
						annotate(&tl, key, t, rng)
					}
					t += reset
					re := key
					re.Kind = journal.EventResetEnd
					emit(re)
					if retry == noRetry {
						break
					}
				}
			}
		}
		emit(journal.Event{Kind: journal.EventCycleEnd, Cycle: cycle})
	}
	t += 200 * millisecond
	emit(journal.Event{Kind: journal.EventRunEnd})
	tl.end = t
	// Annotations may land after later events when resets are short; the
	// journal's events never go back in time.
	slices.SortStableFunc(tl.events, func(a, b journal.Event) int { return cmp.Compare(a.T, b.T) })
	return tl
}

// annotate adds the operator's Pass/Fail marks for an accepted attempt at
// time t: none, one, or one that is changed or cleared afterwards, so that
// "latest wins" and "clear" are exercised.
func annotate(tl *timeline, key journal.Event, t int64, rng *rand.Rand) {
	outcomes := []string{"pass", "fail"}
	n := rng.IntN(4) // 0: none, 1: one, 2: changed, 3: cleared
	if n == 0 {
		return
	}
	a := key
	a.Kind, a.T = journal.EventAnnotate, t+100*millisecond
	a.Outcome = outcomes[rng.IntN(2)]
	tl.events = append(tl.events, a)
	if n == 1 {
		return
	}
	b := a
	b.T += 200 * millisecond
	switch n {
	case 2:
		if a.Outcome == "pass" {
			b.Outcome = "fail"
		} else {
			b.Outcome = "pass"
		}
	case 3:
		b.Outcome = "clear"
	}
	tl.events = append(tl.events, b)
}

// crashAt cuts the timeline as a crash at time t leaves it: every event after
// t is gone, so the attempt recording at t has no attempt_end.
func (tl *timeline) crashAt(t int64) {
	n := 0
	for _, e := range tl.events {
		if e.T > t {
			break
		}
		n++
	}
	tl.events = tl.events[:n]
	tl.end = t
}

// crashTime picks a moment inside the last accepted-looking attempt of the
// run's second half, so that the crash leaves an incomplete attempt behind.
func (tl *timeline) crashTime(rng *rand.Rand) (int64, error) {
	var candidates []int64
	for i, e := range tl.events {
		if e.Kind != journal.EventAttemptStart || e.T < tl.end/2 {
			continue
		}
		for _, f := range tl.events[i+1:] {
			if f.Kind == journal.EventAttemptEnd && f.Task == e.Task && f.Cycle == e.Cycle &&
				f.Repetition == e.Repetition && f.Attempt == e.Attempt && f.T-e.T >= 2*millisecond {
				mid := e.T + (f.T-e.T)/2
				candidates = append(candidates, mid-mid%millisecond)
				break
			}
		}
	}
	if len(candidates) == 0 {
		return 0, fmt.Errorf("synth: no attempt long enough to crash in")
	}
	return candidates[rng.IntN(len(candidates))], nil
}

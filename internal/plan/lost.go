package plan

import (
	"fmt"

	"github.com/ceres-robotics/ceres-export/journal"
)

// Loss is the first lifecycle event of a journal that does not pair up with
// the events before it: evidence that records were lost (a segment cut at a
// frame boundary, a segment deleted), not of a crash. A crash only ends the
// journal early, so every event it leaves has its start before it; an
// attempt left open at the end is an incomplete attempt, not a loss.
type Loss struct {
	Event  int    // index into the events
	Reason string // e.g. "attempt_end of cycle 1 pick rep 2 attempt 1 without its attempt_start"
}

// FindLoss returns the first event, in journal order, that ends, resets,
// retries or annotates an attempt never started, ends a reset, pause or
// cycle never started, or starts an attempt's reset before the attempt
// ended (or was retried). ok is false when every lifecycle event pairs up.
func FindLoss(events []journal.Event) (loss Loss, ok bool) {
	type state struct{ started, ended, retried bool }
	attempts := map[Key]*state{}
	openResets := map[Key]bool{}
	type pauseKey struct {
		task  string
		cycle int
	}
	openPauses := map[pauseKey]bool{}
	cycles := map[int]bool{}
	lost := func(i int, format string, args ...any) (Loss, bool) {
		return Loss{Event: i, Reason: fmt.Sprintf(format, args...)}, true
	}
	for i, ev := range events {
		k := Key{Cycle: ev.Cycle, Task: ev.Task, Repetition: ev.Repetition, Attempt: ev.Attempt}
		st := attempts[k]
		switch ev.Kind {
		case journal.EventCycleStart:
			cycles[ev.Cycle] = true
		case journal.EventCycleEnd:
			if !cycles[ev.Cycle] {
				return lost(i, "cycle_end of cycle %d without its cycle_start", ev.Cycle)
			}
		case journal.EventAttemptStart:
			if st == nil {
				st = &state{}
				attempts[k] = st
			}
			st.started = true
		case journal.EventAttemptEnd, journal.EventRetry, journal.EventAnnotate, journal.EventResetStart, journal.EventResetEnd:
			if st == nil || !st.started {
				return lost(i, "%s of %s without its attempt_start", ev.Kind, describe(k))
			}
			switch ev.Kind {
			case journal.EventAttemptEnd:
				st.ended = true
			case journal.EventRetry:
				st.retried = true
			case journal.EventResetStart:
				if !st.ended && !st.retried {
					return lost(i, "reset_start of %s before its attempt_end", describe(k))
				}
				openResets[k] = true
			case journal.EventResetEnd:
				if !openResets[k] {
					return lost(i, "reset_end of %s without its reset_start", describe(k))
				}
				delete(openResets, k)
			}
		case journal.EventPauseStart:
			openPauses[pauseKey{ev.Task, ev.Cycle}] = true
		case journal.EventPauseEnd:
			pk := pauseKey{ev.Task, ev.Cycle}
			if !openPauses[pk] {
				return lost(i, "pause_end of %s cycle %d without its pause_start", ev.Task, ev.Cycle)
			}
			delete(openPauses, pk)
		}
	}
	return Loss{}, false
}

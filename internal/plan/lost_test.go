package plan

import (
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/journal"
)

func TestFindLoss(t *testing.T) {
	t.Parallel()
	att := func(kind string, task string, c, r, a int) journal.Event {
		return journal.Event{Kind: kind, Task: task, Cycle: c, Repetition: r, Attempt: a, Cause: "next"}
	}
	start := func(c, r, a int) journal.Event { return att(journal.EventAttemptStart, "pick", c, r, a) }
	end := func(c, r, a int) journal.Event { return att(journal.EventAttemptEnd, "pick", c, r, a) }
	reset := func(kind string, c, r, a int) journal.Event { return att(kind, "pick", c, r, a) }
	cyc := func(kind string, c int) journal.Event { return journal.Event{Kind: kind, Cycle: c} }
	pause := func(kind string, c int) journal.Event { return journal.Event{Kind: kind, Task: "rest", Cycle: c} }
	complete := []journal.Event{
		{Kind: journal.EventRunStart}, cyc(journal.EventCycleStart, 1),
		start(1, 1, 1), att(journal.EventRetry, "pick", 1, 1, 1), reset(journal.EventResetStart, 1, 1, 1), reset(journal.EventResetEnd, 1, 1, 1),
		start(1, 1, 2), end(1, 1, 2), att(journal.EventAnnotate, "pick", 1, 1, 2), reset(journal.EventResetStart, 1, 1, 2), reset(journal.EventResetEnd, 1, 1, 2),
		pause(journal.EventPauseStart, 1), pause(journal.EventPauseEnd, 1),
		cyc(journal.EventCycleEnd, 1), {Kind: journal.EventRunEnd},
	}
	cases := []struct {
		name   string
		events []journal.Event
		event  int    // -1: no loss
		reason string // substring
	}{
		{"complete session", complete, -1, ""},
		{"crash leaves an attempt open", []journal.Event{cyc(journal.EventCycleStart, 1), start(1, 1, 1)}, -1, ""},
		{"crash during a reset", append([]journal.Event{}, complete[:10]...), -1, ""},
		{"crash during a pause", append([]journal.Event{}, complete[:12]...), -1, ""},
		{"attempt_end without start", []journal.Event{cyc(journal.EventCycleStart, 1), end(1, 2, 1)}, 1, "attempt_end of cycle 1 pick rep 2 attempt 1 without its attempt_start"},
		{"retry without start", []journal.Event{att(journal.EventRetry, "pick", 1, 1, 1)}, 0, "retry of cycle 1 pick rep 1 attempt 1 without its attempt_start"},
		{"annotate without start", []journal.Event{att(journal.EventAnnotate, "pick", 1, 1, 3)}, 0, "annotate of"},
		{"reset without its attempt", []journal.Event{start(1, 1, 1), end(1, 1, 1), reset(journal.EventResetStart, 1, 1, 2)}, 2, "reset_start of cycle 1 pick rep 1 attempt 2 without its attempt_start"},
		{"reset before attempt_end", []journal.Event{start(1, 1, 1), reset(journal.EventResetStart, 1, 1, 1)}, 1, "reset_start of cycle 1 pick rep 1 attempt 1 before its attempt_end"},
		{"reset_end without reset_start", []journal.Event{start(1, 1, 1), end(1, 1, 1), reset(journal.EventResetEnd, 1, 1, 1)}, 2, "reset_end of cycle 1 pick rep 1 attempt 1 without its reset_start"},
		{"pause_end without start", []journal.Event{cyc(journal.EventCycleStart, 2), pause(journal.EventPauseEnd, 2)}, 1, "pause_end of rest cycle 2 without its pause_start"},
		{"cycle_end of a cycle never started", []journal.Event{cyc(journal.EventCycleStart, 1), cyc(journal.EventCycleEnd, 1), cyc(journal.EventCycleEnd, 2)}, 2, "cycle_end of cycle 2 without its cycle_start"},
		{"first of several", []journal.Event{end(1, 1, 1), reset(journal.EventResetEnd, 1, 1, 1)}, 0, "attempt_end"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			loss, ok := FindLoss(c.events)
			if c.event < 0 {
				if ok {
					t.Fatalf("loss %+v in a journal that only ends early", loss)
				}
				return
			}
			if !ok || loss.Event != c.event || !strings.Contains(loss.Reason, c.reason) {
				t.Fatalf("FindLoss = %+v, %v; want event %d with %q", loss, ok, c.event, c.reason)
			}
		})
	}
	// Every prefix of a complete session is a crash, never a loss.
	for n := range complete {
		if loss, ok := FindLoss(complete[:n]); ok {
			t.Errorf("prefix of %d events: loss %+v", n, loss)
		}
	}
}

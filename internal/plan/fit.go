package plan

import (
	"fmt"
	"strings"

	"github.com/ceres-robotics/ceres-export/journal"
)

// FitViolation is one task id that a recording names and that a corrected
// specification does not fit.
type FitViolation struct {
	Task string `json:"task"`
	// Recorded is the task's type in the recorded specification; "" when it
	// lacks the task.
	Recorded string `json:"recorded"`
	// Applied is the task's type in the corrected specification; "" when it
	// lacks the task.
	Applied string `json:"applied"`
}

// String describes the violation in one phrase.
func (v FitViolation) String() string {
	if v.Applied == "" {
		return fmt.Sprintf("task %q: missing from the specification", v.Task)
	}
	return fmt.Sprintf("task %q: type changed from %s to %s", v.Task, v.Recorded, v.Applied)
}

// FitError is the error of CheckFit: every violation, in the order the
// journal first names each task.
type FitError struct {
	Violations []FitViolation
}

// Error lists every violation.
func (e *FitError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.String()
	}
	return "plan: specification does not fit the recording: " + strings.Join(parts, "; ")
}

// CheckFit reports whether the applied (corrected) specification fits a
// recording made under the recorded one: every task id that the journal's
// attempts and pauses name (attempt_start, attempt_end, retry, annotate,
// reset_start, reset_end, pause_start, pause_end) must exist in applied, with
// the type it has in recorded. It returns nil or a *FitError naming every
// violating task once. A task that recorded lacks cannot change type; it
// only has to exist in applied.
func CheckFit(recorded, applied TaskTypes, events []journal.Event) error {
	seen := map[string]bool{}
	var fe FitError
	for _, ev := range events {
		switch ev.Kind {
		case journal.EventAttemptStart, journal.EventAttemptEnd, journal.EventRetry, journal.EventAnnotate,
			journal.EventResetStart, journal.EventResetEnd, journal.EventPauseStart, journal.EventPauseEnd:
		default:
			continue
		}
		if seen[ev.Task] {
			continue
		}
		seen[ev.Task] = true
		was, known := recorded(ev.Task)
		if !known {
			was = ""
		}
		now, ok := applied(ev.Task)
		if !ok {
			now = ""
		}
		if !ok || was != "" && was != now {
			fe.Violations = append(fe.Violations, FitViolation{Task: ev.Task, Recorded: was, Applied: now})
		}
	}
	if len(fe.Violations) > 0 {
		return &fe
	}
	return nil
}

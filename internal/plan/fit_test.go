package plan

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/journal"
)

func TestCheckFit(t *testing.T) {
	t.Parallel()
	events := []journal.Event{
		{T: 0, Kind: journal.EventRunStart},
		{T: 1, Kind: journal.EventAttemptStart, Task: "wave", Cycle: 1, Repetition: 1, Attempt: 1},
		{T: 2, Kind: journal.EventAttemptEnd, Task: "wave", Cycle: 1, Repetition: 1, Attempt: 1, Cause: "duration"},
		{T: 3, Kind: journal.EventPauseStart, Task: "rest", Cycle: 1},
		{T: 4, Kind: journal.EventPauseEnd, Task: "rest", Cycle: 1},
		{T: 5, Kind: journal.EventPrompt, Task: "ignored-prompt-task", Text: "cue"},
		{T: 6, Kind: journal.EventRetry, Task: "inspect", Cycle: 1, Repetition: 1, Attempt: 1},
		{T: 7, Kind: journal.EventAttemptStart, Task: "ghost", Cycle: 1, Repetition: 1, Attempt: 1},
	}
	recorded := MapTypes(map[string]string{"wave": TypeTimed, "inspect": TypeOpen, "rest": TypePause})
	tests := []struct {
		name    string
		applied map[string]string
		want    []FitViolation
	}{
		{
			name:    "same types, ghost added",
			applied: map[string]string{"wave": TypeTimed, "inspect": TypeOpen, "rest": TypePause, "ghost": TypeOpen, "new": TypeOpen},
		},
		{
			name:    "ghost still missing",
			applied: map[string]string{"wave": TypeTimed, "inspect": TypeOpen, "rest": TypePause},
			want:    []FitViolation{{Task: "ghost"}},
		},
		{
			name:    "every kind of violation, in journal order",
			applied: map[string]string{"wave": TypeOpen, "rest": TypeTimed, "ghost": TypePause},
			want: []FitViolation{
				{Task: "wave", Recorded: TypeTimed, Applied: TypeOpen},
				{Task: "rest", Recorded: TypePause, Applied: TypeTimed},
				{Task: "inspect", Recorded: TypeOpen},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckFit(recorded, MapTypes(tt.applied), events)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("CheckFit = %v, want nil", err)
				}
				return
			}
			var fe *FitError
			if !errors.As(err, &fe) {
				t.Fatalf("CheckFit = %v, want a *FitError", err)
			}
			if !slices.Equal(fe.Violations, tt.want) {
				t.Errorf("violations %+v, want %+v", fe.Violations, tt.want)
			}
			for _, v := range tt.want {
				if !strings.Contains(err.Error(), `"`+v.Task+`"`) {
					t.Errorf("error %q does not name task %q", err, v.Task)
				}
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	t.Parallel()
	types := MapTypes(map[string]string{"wave": TypeTimed})
	for _, fps := range []int{0, -1, lerobot.MaxFPS + 1} {
		if _, err := Build(nil, types, fps); err == nil {
			t.Errorf("Build at fps %d: no error", fps)
		}
	}
	if _, err := Build(nil, nil, 10); err == nil {
		t.Error("Build without task types: no error")
	}
	p, err := Build(nil, types, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Attempts) != 0 || len(p.Episodes) != 0 || p.Attempts == nil || p.Episodes == nil {
		t.Errorf("empty journal: %+v, want empty, non-nil lists (JSON [] not null)", p)
	}
}

package campaign

import (
	"fmt"
	"maps"
	"slices"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// CampaignStatus is what a campaign's records say: one line per task.
type CampaignStatus struct {
	Out   string       `json:"out"`
	Tasks []TaskStatus `json:"tasks"`
	// States counts the tasks by their latest attempt's state.
	States map[string]int `json:"states"`
	// Damaged are the records that cannot be read: reported, and the
	// tasks listed from their other records.
	Damaged []DamagedRecord `json:"damaged_records,omitempty"`
}

// TaskStatus is one task's latest attempt and how many there were.
type TaskStatus struct {
	TaskID     string  `json:"task_id"`
	Attempts   int     `json:"attempts"`
	AttemptNo  int     `json:"attempt_no"`
	State      string  `json:"state"`
	ExitStatus *int    `json:"exit_status"`
	Error      string  `json:"error,omitempty"`
	Episodes   int     `json:"episodes"`
	Frames     int     `json:"frames"`
	DurationS  float64 `json:"duration_s"`
	StartedAt  string  `json:"started_at"`
	// Expected is whether the latest attempt met its expectation (null when
	// it has not ended).
	Expected *bool `json:"expectation_met"`
}

// Status reads every record under out.
func Status(out string) (*CampaignStatus, error) {
	all, damaged, err := ReadAllRecords(out)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 && len(damaged) == 0 {
		return nil, fmt.Errorf("%s: no attempt records under %s/", out, layout.AttemptsDir)
	}
	st := &CampaignStatus{Out: out, States: map[string]int{}, Damaged: damaged}
	for _, id := range slices.Sorted(maps.Keys(all)) {
		recs := all[id]
		r := recs[len(recs)-1]
		ts := TaskStatus{
			TaskID: id, Attempts: len(recs), AttemptNo: r.AttemptNo, State: r.State, ExitStatus: r.ExitStatus,
			Error: r.Error, Episodes: r.Episodes, Frames: r.Frames, DurationS: r.DurationS, StartedAt: r.StartedAt,
		}
		if r.Expectation != nil {
			met := r.Expectation.Met
			ts.Expected = &met
		}
		st.Tasks = append(st.Tasks, ts)
		st.States[r.State]++
	}
	return st, nil
}

package campaign

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

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
	// Pending are the tasks of the manifest, when one is given, with no
	// attempt yet (counted as StatePending in States).
	Pending []string `json:"pending,omitempty"`
}

// StatePending is a task of the manifest no attempt has started.
const StatePending = "pending"

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
	Category   string  `json:"category,omitempty"`
	// Host and PID are where the latest attempt runs or ran.
	Host string `json:"host,omitempty"`
	PID  int    `json:"pid,omitempty"`
	// Expected is whether the latest attempt met its expectation (null when
	// it has not ended).
	Expected *bool `json:"expectation_met"`
}

// Status reads every record under out; with tasks (the manifest's), those
// without a record are listed as pending. A running record of this host
// whose process is gone is reported as lost (interrupted). Records are replaced atomically,
// so a campaign whose tasks are writing them reads as it stands.
func Status(out string, tasks []Task) (*CampaignStatus, error) {
	all, damaged, err := ReadAllRecords(out)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 && len(damaged) == 0 && len(tasks) == 0 {
		return nil, fmt.Errorf("%s: no attempt records under %s/", out, layout.AttemptsDir)
	}
	st := &CampaignStatus{Out: out, States: map[string]int{}, Damaged: damaged}
	host, _ := os.Hostname()
	for _, id := range slices.Sorted(maps.Keys(all)) {
		recs := all[id]
		r := recs[len(recs)-1]
		ts := TaskStatus{
			TaskID: id, Attempts: len(recs), AttemptNo: r.AttemptNo, State: r.State, ExitStatus: r.ExitStatus,
			Error: r.Error, Episodes: r.Episodes, Frames: r.Frames, DurationS: r.DurationS, StartedAt: r.StartedAt,
			Category: r.Category, Host: r.Host, PID: r.PID,
		}
		if r.Expectation != nil {
			met := r.Expectation.Met
			ts.Expected = &met
		}
		// A running attempt of this host whose process is gone was killed
		// (the node stayed up): lost, as the next attempt will record it.
		if r.State == StateRunning && r.Host == host && !processAlive(r.PID) {
			ts.State, ts.Category = StateInterrupted, CategoryLost
			ts.Error = fmt.Sprintf("lost: its process (pid %d on %s) is gone; the next run of the task closes its record", r.PID, r.Host)
		}
		st.Tasks = append(st.Tasks, ts)
		st.States[ts.State]++
	}
	for _, t := range tasks {
		if _, ok := all[t.ID]; !ok {
			st.Pending = append(st.Pending, t.ID)
			st.States[StatePending]++
		}
	}
	return st, nil
}

// WriteText writes the status as a table, one line per task (pending ones
// from the manifest last), and a line counting the tasks by state.
func (c *CampaignStatus) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tATTEMPTS\tSTATE\tEXIT\tEPISODES\tFRAMES\tSECONDS\tERROR")
	for _, t := range c.Tasks {
		exit := "-"
		if t.ExitStatus != nil {
			exit = strconv.Itoa(*t.ExitStatus)
		}
		state, detail := t.State, firstLine(t.Error)
		if t.Category != "" {
			state += " (" + t.Category + ")"
		}
		if t.State == StateRunning {
			detail = fmt.Sprintf("pid %d on %s since %s", t.PID, t.Host, t.StartedAt)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%d\t%.1f\t%s\n", t.TaskID, t.Attempts, state, exit, t.Episodes, t.Frames, t.DurationS, detail)
	}
	for _, id := range c.Pending {
		fmt.Fprintf(tw, "%s\t0\t%s\t-\t0\t0\t0.0\t\n", id, StatePending)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var states []string
	for _, k := range slices.Sorted(maps.Keys(c.States)) {
		states = append(states, fmt.Sprintf("%d %s", c.States[k], k))
	}
	_, err := fmt.Fprintf(w, "%d tasks: %s\n", len(c.Tasks)+len(c.Pending), strings.Join(states, ", "))
	return err
}

// firstLine is an error's first line, cut to fit a table.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 100 {
		s = s[:97] + "..."
	}
	return s
}

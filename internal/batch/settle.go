package batch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/exitstatus"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/output"
)

// CheckRun refuses, before any task runs, a run that could not be made as
// asked: a merge inside an array share (the merge waits for every share:
// batch slurm --merge writes that job), or a merge destination that breaks
// the destination rules (CheckMergeDestination; inputs are the campaign's
// read paths).
func CheckRun(share *campaign.ArrayShare, dataset, out string, inputs []string) error {
	if dataset == "" {
		return nil
	}
	if share != nil {
		return errors.New("--merge in an array share: merge once every share is done (batch slurm --merge writes that job)")
	}
	return CheckMergeDestination(dataset, out, inputs)
}

// MissedError says that tasks missed their expectation: the run is not
// sound, and its settings are not merged.
type MissedError struct {
	Missed []TaskResult
}

func (e *MissedError) Error() string {
	return fmt.Sprintf("%d tasks missed their expectation", len(e.Missed))
}

// Settle decides what a finished run comes to, and so whether its
// campaign may be merged (nil). Tasks another batch runs right now did not
// fail: this run could not do them and a later one will, so the run is
// busy (output.ErrDestinationBusy) rather than unsound. Otherwise tasks
// that missed their expectation make a *MissedError.
func (s *Summary) Settle() error {
	var busy []string
	for _, r := range s.Results {
		if r.Busy {
			busy = append(busy, r.Task.ID)
		}
	}
	if len(busy) > 0 {
		return fmt.Errorf("%w: %d of %d tasks are being run by another batch (%s); run again when it is done",
			output.ErrDestinationBusy, len(busy), len(s.Results), cutList(busy, 3))
	}
	if missed := s.Missed(); len(missed) > 0 {
		return &MissedError{Missed: missed}
	}
	return nil
}

// cutList joins the first n of items, saying how many more there are.
func cutList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

// Line is the run's one-line summary: the tasks by state, what this run
// exported or skipped, and how many missed their expectation.
func (s *Summary) Line() string {
	states := s.States()
	return fmt.Sprintf("%d tasks: %d succeeded, %d failed, %d interrupted (%d exported in this run, %d skipped as done); %d missed their expectation",
		len(s.Results), states[campaign.StateSucceeded], states[campaign.StateFailed], states[campaign.StateInterrupted],
		s.Count(OutcomeExported), s.Count(OutcomeSkipped), len(s.Missed()))
}

// Describe is the task's line of progress: its outcome, attempt, figures,
// error or reason, and the expectations it missed.
func (r TaskResult) Describe() string {
	var b strings.Builder
	b.WriteString(r.Outcome)
	if rec := r.Record; rec != nil {
		fmt.Fprintf(&b, " (attempt %d", rec.AttemptNo)
		if rec.State == campaign.StateSucceeded {
			fmt.Fprintf(&b, ", %d episodes, %d frames", rec.Episodes, rec.Frames)
		}
		if r.Outcome != OutcomeSkipped {
			fmt.Fprintf(&b, ", %.1f s", r.Elapsed.Seconds())
		}
		b.WriteString(")")
		if rec.Error != "" && r.Outcome != OutcomeSkipped {
			fmt.Fprintf(&b, ": %s", rec.Error)
		}
	}
	if r.Reason != "" {
		fmt.Fprintf(&b, ": %s", r.Reason)
	}
	if !r.OK() {
		fmt.Fprintf(&b, " [missed: %s]", strings.Join(r.Misses, "; "))
	}
	return b.String()
}

// Document is batch --json's one document: the run's results, the tasks
// by state, the merged datasets and the exit status (docs/campaigns.md).
type Document struct {
	CampaignID string               `json:"campaign_id"`
	Out        string               `json:"out"`
	Array      *campaign.ArrayShare `json:"array,omitempty"`
	Results    []DocumentResult     `json:"results"`
	// States counts the tasks by their standing record's state.
	States map[string]int `json:"states"`
	// Merged are the datasets the run's merge wrote, one per setting.
	Merged []MergedDataset `json:"merged"`
	// ExitStatus is the status the command exits with.
	ExitStatus int `json:"exit_status"`
}

// DocumentResult is one task in a Document.
type DocumentResult struct {
	TaskID    string           `json:"task_id"`
	Outcome   string           `json:"outcome"`
	Reason    string           `json:"reason,omitempty"`
	AttemptNo int              `json:"attempt_no,omitempty"`
	State     string           `json:"state,omitempty"`
	Record    *campaign.Record `json:"record,omitempty"`
	Misses    []string         `json:"misses,omitempty"`
	ElapsedS  float64          `json:"elapsed_s"`
}

// NewDocument is the Document of a run into out.
func NewDocument(campaignID, out string, share *campaign.ArrayShare, s *Summary, merged []MergedDataset, exit int) Document {
	doc := Document{CampaignID: campaignID, Out: out, Array: share,
		Results: make([]DocumentResult, len(s.Results)), States: s.States(), Merged: []MergedDataset{}, ExitStatus: exit}
	for i, r := range s.Results {
		doc.Results[i] = DocumentResult{TaskID: r.Task.ID, Outcome: r.Outcome, Reason: r.Reason, Record: r.Record, Misses: r.Misses, ElapsedS: r.Elapsed.Seconds()}
		if r.Record != nil {
			doc.Results[i].AttemptNo, doc.Results[i].State = r.Record.AttemptNo, r.Record.State
		}
	}
	doc.Merged = append(doc.Merged, merged...)
	return doc
}

// Plan is batch plan's document: a manifest's selected tasks, normalised,
// those of one array share with one.
type Plan struct {
	Array      *campaign.ArrayShare `json:"array"`
	CampaignID string               `json:"campaign_id"`
	Tasks      []campaign.Task      `json:"tasks"`
}

// Finished is a finished run to settle (Finish): its manifest and tasks,
// what Run returned, where it wrote, and where to merge.
type Finished struct {
	Manifest *campaign.Manifest
	Tasks    []campaign.Task
	Summary  *Summary
	RunErr   error  // Run's error: the run could not go on
	Out      string // the campaign directory
	Merge    string // the merged datasets' directory; "" for no merge
	Version  string // the tool version the merges record
	// Human takes the summary (stdout, or stderr when stdout holds the
	// JSON document); Log the campaign page's path (stderr).
	Human, Log io.Writer
}

// Finish prints the run's summary and the tasks that missed their
// expectation, merges when the run settled (Summary.Settle) and Merge asks
// for it, and writes the campaign page, which covers every task of the
// manifest from the records under Out (other shares' too) and this run's
// merges. Its error is classed for the exit status: a run that could not
// go on or a page that could not be written failed to write, tasks that
// missed are findings (already printed), a busy task is busy.
func Finish(ctx context.Context, f Finished) ([]MergedDataset, error) {
	fmt.Fprintln(f.Human, f.Summary.Line())
	for _, r := range f.Summary.Missed() {
		fmt.Fprintf(f.Human, "  missed %s: %s\n", r.Task.ID, strings.Join(r.Misses, "; "))
	}
	err := f.Summary.Settle()
	var missed *MissedError
	var merged []MergedDataset
	switch {
	case f.RunErr != nil:
		err = exitstatus.Mark(exitstatus.WriteFailed, f.RunErr)
	case errors.As(err, &missed):
		if f.Merge != "" {
			fmt.Fprintf(f.Human, "not merged: %s\n", missed)
		}
		err = exitstatus.Printed(exitstatus.Findings)
	case err == nil && f.Merge != "":
		merged, err = Merge(ctx, f.Tasks, f.Out, f.Merge, f.Version)
		for _, d := range merged {
			fmt.Fprintf(f.Human, "merged setting %s: %d shards, %d episodes, %d frames in %s\n", d.SettingID, d.Shards, d.Episodes, d.Frames, d.Dir)
		}
	}
	if perr := WritePage(f.Manifest.CampaignID, f.Manifest.Tasks, f.Out, merged); perr != nil {
		if err == nil || exitstatus.WasPrinted(err) {
			err = exitstatus.Mark(exitstatus.WriteFailed, perr)
		}
		return merged, err
	}
	fmt.Fprintf(f.Log, "campaign page %s\n", filepath.Join(f.Out, layout.CampaignPagePath))
	return merged, err
}

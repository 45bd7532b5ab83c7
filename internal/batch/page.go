package batch

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/report"
)

// Campaign gathers the campaign page's input from the attempt records
// under out: one row per task of the manifest (a task never run is
// pending), its attempts, its shard's figures from its latest successful
// attempt, and a link to the shard's session page where there is one.
// merged are the datasets a merge wrote in this run, if any.
func Campaign(campaignID string, tasks []Task, out string, merged []MergedDataset) (*report.Campaign, error) {
	c := &report.Campaign{ID: campaignID}
	for _, t := range tasks {
		recs, damaged, err := readTaskRecords(out, t.ID)
		if err != nil {
			return nil, err
		}
		row := report.CampaignTask{TaskID: t.ID, CaseID: t.CaseID, SettingID: t.SettingID, RunID: t.RunID, State: report.StatePending}
		for _, r := range recs {
			a := report.CampaignAttempt{No: r.AttemptNo, State: r.State, Error: r.Error}
			a.Start, _ = time.Parse(time.RFC3339Nano, r.StartedAt)
			a.End, _ = time.Parse(time.RFC3339Nano, r.EndedAt)
			if r.ExitStatus != nil {
				a.ExitStatus = *r.ExitStatus
			}
			row.Attempts = append(row.Attempts, a)
			row.State, row.Error = r.State, r.Error
			if r.State == StateSucceeded {
				row.Episodes, row.Frames = r.Episodes, r.Frames
			}
		}
		// A damaged record is said on its task's row; the page goes on.
		for _, d := range damaged {
			row.Error = d.Error
		}
		page := filepath.ToSlash(filepath.Join(t.ID, layout.SessionPagePath))
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(page))); err == nil {
			row.Page = page
		}
		c.Tasks = append(c.Tasks, row)
	}
	for _, d := range merged {
		path := d.Dir
		if rel, err := filepath.Rel(out, d.Dir); err == nil {
			path = filepath.ToSlash(rel)
		}
		c.Merges = append(c.Merges, report.CampaignMerge{
			SettingID: d.SettingID, Path: path, State: report.StateSucceeded,
			Shards: d.Shards, Episodes: d.Episodes, Frames: int(d.Frames),
		})
	}
	return c, nil
}

// WritePage writes OUT/index.html, the campaign page, atomically.
func WritePage(campaignID string, tasks []Task, out string, merged []MergedDataset) error {
	c, err := Campaign(campaignID, tasks, out, merged)
	if err != nil {
		return fmt.Errorf("campaign page: %w", err)
	}
	return report.WriteFile(filepath.Join(out, layout.CampaignPagePath), func(w io.Writer) error { return report.WriteCampaign(w, c) })
}

package batch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/page"
)

// CampaignPage gathers the campaign page's input from the attempt records
// under out: one row per task of the manifest (a task never run is
// pending), its attempts, its shard's figures from its latest successful
// attempt, and a link to the shard's session page where there is one.
// merged are the datasets a merge wrote in this run, if any.
func CampaignPage(campaignID string, tasks []campaign.Task, out string, merged []MergedDataset) (*page.CampaignPage, error) {
	c := &page.CampaignPage{ID: campaignID}
	for _, t := range tasks {
		recs, err := campaign.ReadRecords(out, t.ID)
		var damaged *campaign.DamagedError
		if errors.As(err, &damaged) {
			err = nil
		}
		if err != nil {
			return nil, err
		}
		row := page.CampaignTask{TaskID: t.ID, CaseID: t.CaseID, SettingID: t.SettingID, RunID: t.RunID, State: page.StatePending}
		for _, r := range recs {
			a := page.CampaignAttempt{No: r.AttemptNo, State: r.State, Error: r.Error}
			a.Start, _ = time.Parse(time.RFC3339Nano, r.StartedAt)
			a.End, _ = time.Parse(time.RFC3339Nano, r.EndedAt)
			if r.ExitStatus != nil {
				a.ExitStatus = *r.ExitStatus
			}
			row.Attempts = append(row.Attempts, a)
			row.State, row.Error = r.State, r.Error
			if r.State == campaign.StateSucceeded {
				row.Episodes, row.Frames = r.Episodes, r.Frames
			}
		}
		// A damaged record is said on its task's row; the page goes on.
		if damaged != nil {
			for _, d := range damaged.Records {
				row.Error = d.Error
			}
		}
		pagePath := filepath.ToSlash(filepath.Join(t.ID, layout.SessionPagePath))
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(pagePath))); err == nil {
			row.Page = pagePath
		}
		c.Tasks = append(c.Tasks, row)
	}
	for _, d := range merged {
		path := d.Dir
		if rel, err := filepath.Rel(out, d.Dir); err == nil {
			path = filepath.ToSlash(rel)
		}
		c.Merges = append(c.Merges, page.CampaignMerge{
			SettingID: d.SettingID, Path: path, State: page.StateSucceeded,
			Shards: d.Shards, Episodes: d.Episodes, Frames: int(d.Frames),
		})
	}
	return c, nil
}

// WritePage writes OUT/index.html, the campaign page, atomically.
func WritePage(campaignID string, tasks []campaign.Task, out string, merged []MergedDataset) error {
	c, err := CampaignPage(campaignID, tasks, out, merged)
	if err != nil {
		return fmt.Errorf("campaign page: %w", err)
	}
	return page.WriteFile(filepath.Join(out, layout.CampaignPagePath), func(w io.Writer) error { return page.WriteCampaign(w, c) })
}

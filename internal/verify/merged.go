package verify

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// A merged dataset (written by ceres-export merge) holds many sessions. It
// has ceres/merge-report.json instead of ceres/export-report.json, every
// source shard's export report under ceres/sources/NNNN/, and per episode the
// ceres/source/* columns naming where it came from. Read here independently
// of the merge package.
const mergeReportPath = layout.MergeReportPath

// sourceReportPath is where the merged dataset keeps source i's export
// report: layout.SourcePath, or layout.LegacySourcePath in a dataset of
// that form.
func (c *checker) sourceReportPath(i int) string {
	if legacy := layout.LegacySourcePath(i, layout.ExportReportPath); slices.Contains(c.files, legacy) {
		return legacy
	}
	return layout.SourcePath(i, layout.ExportReportPath)
}

// mergeReport is the part of ceres/merge-report.json verify checks.
type mergeReport struct {
	Sources []struct {
		Name               string   `json:"name"`
		SessionID          string   `json:"sessionId"`
		ExportReportSHA256 string   `json:"exportReportSha256"`
		CampaignTaskID     string   `json:"campaignTaskId"`
		CampaignAttempt    int64    `json:"campaignAttempt"`
		FirstEpisode       int64    `json:"firstEpisode"`
		Episodes           int64    `json:"episodes"`
		FirstIndex         int64    `json:"firstIndex"`
		Frames             int64    `json:"frames"`
		Specifications     []string `json:"taskSpecifications"`
		Foreign            *struct {
			Writer string `json:"writer"`
		} `json:"foreign"`
	} `json:"sources"`
	Episodes int64 `json:"episodes"`
	Frames   int64 `json:"frames"`
	Tasks    int64 `json:"tasks"`
	Videos   map[string]struct {
		Files []string `json:"files"`
	} `json:"videos"`
}

// isMerged reports whether the dataset is a merged one.
func (c *checker) isMerged() bool { return slices.Contains(c.files, mergeReportPath) }

// episodeSourceOf returns the ceres/source/* values of an episode row
// (string, int64 or nil).
func (c *checker) episodeSourceOf(er *episodeRow) map[string]any {
	out := map[string]any{}
	for name, typ := range c.sourceColumns {
		a := er.table.col(name)
		if a == nil || !arrow.TypeEqual(a.DataType(), typ) || a.IsNull(er.tableRow) {
			out[name] = nil
			continue
		}
		switch x := a.(type) {
		case *array.String:
			out[name] = x.Value(er.tableRow)
		case *array.Int64:
			out[name] = x.Value(er.tableRow)
		}
	}
	return out
}

// checkMerged checks a merged dataset's provenance: the merge report
// against the episodes, every episode's source columns against the report,
// the stored export reports against their hashes, and the specifications
// every source stored.
func (c *checker) checkMerged() {
	b, err := input.ReadFile(filepath.Join(c.dir, mergeReportPath))
	if err != nil {
		c.errorf("merge.report", mergeReportPath, loc{}, "unreadable: %v", err)
		return
	}
	var r mergeReport
	if err := json.Unmarshal(b, &r); err != nil {
		c.errorf("merge.report", mergeReportPath, loc{}, "not a merge report: %v", err)
		return
	}
	if len(r.Sources) == 0 {
		c.errorf("merge.report", mergeReportPath, loc{}, "lists no sources")
		return
	}
	if c.info != nil {
		if r.Episodes != c.info.TotalEpisodes || r.Frames != c.info.TotalFrames || r.Tasks != c.info.TotalTasks {
			c.errorf("merge.report", mergeReportPath, loc{}, "says %d episodes, %d frames, %d tasks; info.json says %d, %d, %d",
				r.Episodes, r.Frames, r.Tasks, c.info.TotalEpisodes, c.info.TotalFrames, c.info.TotalTasks)
		}
	}
	var nextEp, nextIdx int64
	for i, s := range r.Sources {
		where := fmt.Sprintf("sources[%d] (%s)", i, s.Name)
		if s.FirstEpisode != nextEp || s.FirstIndex != nextIdx || s.Episodes <= 0 || s.Frames <= 0 {
			c.errorf("merge.report", mergeReportPath, loc{}, "%s: episodes from %d (%d), rows from %d (%d) do not follow the previous source's, which end at episode %d, row %d",
				where, s.FirstEpisode, s.Episodes, s.FirstIndex, s.Frames, nextEp, nextIdx)
		}
		nextEp, nextIdx = s.FirstEpisode+s.Episodes, s.FirstIndex+s.Frames
		if s.Foreign != nil {
			// A LeRobot dataset this tool did not write: no session, export
			// report or specification to hold it to.
			if s.SessionID != "" || s.ExportReportSHA256 != "" || len(s.Specifications) > 0 {
				c.errorf("merge.report", mergeReportPath, loc{}, "%s is a foreign source but names a session, export report or specifications", where)
			}
			continue
		}
		rel := c.sourceReportPath(i)
		if rb, err := input.ReadFile(filepath.Join(c.dir, rel)); err != nil {
			c.errorf("merge.source-report", rel, loc{}, "the export report of %s is not stored: %v", where, err)
		} else {
			sum := sha256.Sum256(rb)
			if got := hex.EncodeToString(sum[:]); got != s.ExportReportSHA256 {
				c.errorf("merge.source-report", rel, loc{}, "SHA-256 %s, but %s says %s", got, where, s.ExportReportSHA256)
			}
			var head struct {
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal(rb, &head) == nil && head.SessionID != s.SessionID {
				c.errorf("merge.source-report", rel, loc{}, "session %q, but %s says %q", head.SessionID, where, s.SessionID)
			}
		}
		for _, h := range s.Specifications {
			if c.specs[h] == nil {
				c.errorf("spec.missing", mergeReportPath, loc{}, "%s stored specification %s, which the dataset lacks", where, h)
			}
		}
	}
	if c.info != nil && (nextEp != c.info.TotalEpisodes || nextIdx != c.info.TotalFrames) {
		c.errorf("merge.report", mergeReportPath, loc{}, "the sources hold %d episodes and %d rows; info.json says %d and %d", nextEp, nextIdx, c.info.TotalEpisodes, c.info.TotalFrames)
	}
	for key, v := range r.Videos {
		for _, f := range v.Files {
			if !slices.Contains(c.files, f) {
				c.errorf("merge.report", mergeReportPath, loc{}, "video %s file %s is missing", key, f)
			}
		}
	}
	if c.episodes == nil {
		return
	}
	for _, er := range c.episodes.Rows {
		epi := er.EpisodeIndex
		src := c.episodeSourceOf(er)
		idx, ok := src[layout.ColSourceIndex].(int64)
		if !ok || idx < 0 || idx >= int64(len(r.Sources)) {
			c.errorf("ceres.source", er.File, ep(epi), "ceres/source/index is %s; want a source of %s (0..%d)", jsonText(src[layout.ColSourceIndex]), mergeReportPath, len(r.Sources)-1)
			continue
		}
		s := r.Sources[idx]
		c.checkForeignRow(er)
		if foreign := c.isForeignRow(er); foreign != (s.Foreign != nil) {
			if foreign {
				c.errorf("ceres.foreign", er.File, ep(epi), "the episode's ceres/* columns are null, as a foreign source's, but source %d (%s) is a CERES shard", idx, s.Name)
			} else {
				c.errorf("ceres.foreign", er.File, ep(epi), "source %d (%s) is a foreign dataset, but the episode has a session", idx, s.Name)
			}
			continue
		}
		if epi < s.FirstEpisode || epi >= s.FirstEpisode+s.Episodes {
			c.errorf("ceres.source", er.File, ep(epi), "names source %d (%s), which holds episodes %d..%d", idx, s.Name, s.FirstEpisode, s.FirstEpisode+s.Episodes-1)
		}
		if v, _ := src[layout.ColSourceEpisodeIndex].(int64); v != epi-s.FirstEpisode {
			c.errorf("ceres.source", er.File, ep(epi), "ceres/source/episode_index is %s, want %d (episode %d of source %d)", jsonText(src[layout.ColSourceEpisodeIndex]), epi-s.FirstEpisode, epi, idx)
		}
		if er.FromIndex-s.FirstIndex < 0 || er.ToIndex-s.FirstIndex > s.Frames {
			c.errorf("ceres.source", er.File, ep(epi), "rows [%d, %d) lie outside source %d's rows [%d, %d)", er.FromIndex, er.ToIndex, idx, s.FirstIndex, s.FirstIndex+s.Frames)
		}
		if v, _ := src[layout.ColSourceName].(string); v != s.Name {
			c.errorf("ceres.source", er.File, ep(epi), "ceres/source/name is %q, source %d is %q", v, idx, s.Name)
		}
		if s.Foreign != nil {
			continue // its ceres/* columns are null (isForeignRow)
		}
		if v, _ := src[layout.ColSourceReportSHA256].(string); v != s.ExportReportSHA256 {
			c.errorf("ceres.source", er.File, ep(epi), "ceres/source/export_report_sha256 is %q, source %d's is %s", v, idx, s.ExportReportSHA256)
		}
		if v, _ := er.Ceres[layout.ColSessionID].(string); v != s.SessionID {
			c.errorf("ceres.source", er.File, ep(epi), "ceres/session_id is %q, but source %d is session %q", v, idx, s.SessionID)
		}
		task, _ := src[layout.ColSourceCampaignTaskID].(string)
		attempt, _ := src[layout.ColSourceCampaignAttempt].(int64)
		if task != s.CampaignTaskID || attempt != s.CampaignAttempt {
			c.errorf("ceres.source", er.File, ep(epi), "campaign task %q attempt %d, but source %d says %q attempt %d", task, attempt, idx, s.CampaignTaskID, s.CampaignAttempt)
		}
		for _, h := range []string{layout.ColSpecHash, layout.ColRecordedSpecHash} {
			if v, ok := er.Ceres[h].(string); ok && !slices.Contains(s.Specifications, v) {
				c.errorf("ceres.source", er.File, ep(epi), "%s %s is not among the specifications source %d stored", h, v, idx)
			}
		}
	}
}

// sessionRows returns the episodes of a merged dataset that came from
// session id, in order, and the stored export report of their source.
func (c *checker) sessionRows(id string) ([]*episodeRow, string) {
	var rows []*episodeRow
	report := ""
	for _, er := range c.episodes.Rows {
		if s, _ := er.Ceres[layout.ColSessionID].(string); s != id {
			continue
		}
		rows = append(rows, er)
		if idx, ok := c.episodeSourceOf(er)[layout.ColSourceIndex].(int64); ok && report == "" {
			report = c.sourceReportPath(int(idx))
		}
	}
	return rows, report
}

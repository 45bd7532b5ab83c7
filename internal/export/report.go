package export

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/media"
	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/journal"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// Report is ceres/export-report.json: what was exported, what was dropped
// and why, and what the journal and camera files looked like. It holds no
// absolute paths and no clock readings, so the same inputs give the same
// bytes.
type Report struct {
	Exporter    ExporterInfo             `json:"exporter"`
	SessionID   string                   `json:"sessionId"`
	FPS         int                      `json:"fps"`
	FPSSource   string                   `json:"fpsSource"`
	Spec        SpecReport               `json:"taskSpecification"`
	Journal     journal.Report           `json:"journal"`
	Attempts    []plan.Attempt           `json:"attempts"`
	Episodes    int                      `json:"episodes"`
	Frames      int                      `json:"frames"`
	Fates       map[plan.Fate]int        `json:"fates"`
	Sensors     map[string]*SensorCounts `json:"sensors"`
	Cameras     map[string]*CameraReport `json:"cameras,omitempty"`
	Features    []string                 `json:"features"`
	Diagnostics []string                 `json:"diagnostics,omitempty"`
	Notes       []string                 `json:"notes,omitempty"`
	// VideoReused lists the cameras whose encoded video was taken over
	// from the shard this export replaced (same content key).
	VideoReused []string `json:"videoReused,omitempty"`
}

// ExporterInfo names the exporter and the options it ran with.
type ExporterInfo struct {
	Name    string         `json:"name"`
	Version string         `json:"version"`
	Options ReportedOption `json:"options"`
}

// ReportedOption is the subset of Options that shapes the shard.
type ReportedOption struct {
	FPS int `json:"fps,omitempty"`
	// ProfileHash is the SHA-256 of the applied profile's canonical form
	// (ceres/profile.json); "" when the export applied none.
	ProfileHash string       `json:"profileHash,omitempty"`
	KeepFloat64 bool         `json:"keepFloat64,omitempty"`
	RobotType   string       `json:"robotType,omitempty"`
	Salvage     bool         `json:"salvage,omitempty"`
	Strict      Strictness   `json:"strict"`
	Video       VideoOptions `json:"video"`
	Corrected   bool         `json:"correctedTaskSpecification,omitempty"`
	// License is the dataset card's licence ("" for none): merge reads it
	// back to license a merged dataset as its sources are.
	License string `json:"license,omitempty"`
}

// SpecReport records the applied and the recorded specification.
type SpecReport struct {
	Version      int                   `json:"version"`
	Hash         string                `json:"hash"`
	RecordedHash string                `json:"recordedHash"`
	Differences  []taskspec.Difference `json:"differences,omitempty"`
}

// CameraReport summarises one camera feature.
type CameraReport struct {
	Feature string               `json:"feature"`
	Frames  int                  `json:"frames"`
	Gaps    int                  `json:"gaps"`
	Width   int                  `json:"width"`
	Height  int                  `json:"height"`
	Files   []string             `json:"files"`
	Sources []media.SourceReport `json:"sources"`
}

func newReport(j *journal.Journal, p *plan.Plan, applied *taskspec.Spec, diffs []taskspec.Difference, opts Options, fps int, fpsSource string) *Report {
	rep := &Report{
		Exporter: ExporterInfo{Name: "ceres-export", Version: opts.Version, Options: ReportedOption{
			FPS: opts.FPS, KeepFloat64: opts.KeepFloat64, RobotType: opts.RobotType,
			Salvage: opts.Salvage, Strict: opts.Strict, Video: opts.Video, Corrected: opts.TaskSpec != nil,
			License: opts.License,
		}},
		SessionID: j.Info.SessionID,
		FPS:       fps,
		FPSSource: fpsSource,
		Spec: SpecReport{
			Version: applied.Version, Hash: applied.Hash(), RecordedHash: j.Spec.Hash(), Differences: diffs,
		},
		Journal:     j.Report,
		Attempts:    p.Attempts,
		Episodes:    len(p.Episodes),
		Fates:       map[plan.Fate]int{},
		Diagnostics: p.Diagnostics,
		Cameras:     map[string]*CameraReport{},
	}
	if !opts.Profile.Empty() {
		rep.Exporter.Options.ProfileHash = opts.Profile.Hash()
	}
	for _, a := range p.Attempts {
		rep.Fates[a.Fate]++
	}
	for _, ep := range p.Episodes {
		rep.Frames += ep.Length
	}
	return rep
}

func (r *Report) addCamera(stream, key string, res media.CameraResult) {
	c := &CameraReport{Feature: key, Width: res.Width, Height: res.Height}
	for _, e := range res.Episodes {
		c.Frames += e.Frames
		c.Gaps += e.Gaps
	}
	for _, f := range res.Files {
		c.Files = append(c.Files, layout.VideoPath(c.Feature, f.Chunk, f.File))
	}
	for _, s := range res.Sources {
		c.Sources = append(c.Sources, s)
		if s.Truncated {
			r.Notes = append(r.Notes, fmt.Sprintf("camera %s: file %s is cut short (%s); its frames up to the cut were used", stream, s.Path, s.Err))
		}
	}
	r.Cameras[stream] = c
}

// redact makes the report fit a metadata-only dataset: the session id as a
// salted hash and the specification differences without their texts (the
// paths say what changed).
func (r *Report) redact(salt string) {
	r.SessionID = privacy.SaltedHash(salt, r.SessionID)
	for i := range r.Spec.Differences {
		r.Spec.Differences[i].Old, r.Spec.Differences[i].New = "", ""
	}
}

// strictness returns ErrStrict naming every switch that tripped.
func (r *Report) strictness(s Strictness) error {
	var why []string
	for id, c := range r.Sensors {
		if s.BackFill && c.BackFilled > 0 {
			why = append(why, fmt.Sprintf("stream %s: %d frames back-filled", id, c.BackFilled))
		}
		if s.Stale && c.Stale > 0 {
			why = append(why, fmt.Sprintf("stream %s: %d frames stale", id, c.Stale))
		}
	}
	if s.Gaps {
		for id, c := range r.Cameras {
			if c.Gaps > 0 {
				why = append(why, fmt.Sprintf("camera %s: %d frames in gaps", id, c.Gaps))
			}
		}
	}
	if len(why) == 0 {
		return nil
	}
	slices.Sort(why)
	return fmt.Errorf("%w: %s", ErrStrict, strings.Join(why, "; "))
}

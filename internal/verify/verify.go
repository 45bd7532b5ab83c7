// Package verify checks that a LeRobot v3.0 shard written by ceres-export is
// sound: that LeRobot's loader and merge will read it as intended, that its
// metadata agrees with its data and video files, that its CERES provenance is
// complete, and, given the session it came from, that it is what the exporter
// would produce from that session.
//
// verify never uses the shard writer's code to read: Parquet is read through
// arrow-go's pqarrow (a different implementation from the parquet-go writer,
// honouring the ARROW:schema metadata as pyarrow does), JSON with
// encoding/json, videos through FFmpeg behind FrameDecoder (Options.Video,
// internal/video's reading, which the CLI passes in: the rules here build
// and are tested without cgo). The expected values are recomputed
// from the rules in docs/export-semantics.md and docs/lerobot-format.md, not
// taken from the exporter: attempt fates, episode windows and the frame clock
// come from the checker's own implementation (attempts.go), and the package
// imports neither internal/plan nor internal/export nor internal/shard.
//
// # Checks
//
//	structure   the paths LeRobot's loader and merge expect; no stray Parquet
//	            where LeRobot globs; info.json keys, types and totals
//	data        the data files' Arrow schema against the features; index,
//	            frame_index, timestamp, episode_index, task_index; one row
//	            group per episode (a warning)
//	metadata    meta/episodes against the data and video files; tasks.parquet
//	            (pandas index metadata, row i is task i)
//	stats       stats.json shapes, finiteness, order; in full mode min, max,
//	            mean, std and count recomputed from the data
//	video       (full mode) every mp4: constant rate at fps, frame k at k/fps,
//	            frame counts, no audio, even size, info block, every frame
//	            decodes
//	provenance  (full mode) every file against ceres/seal.json (its size
//	            and SHA-256 as its writer committed it) and the output
//	            marker's bytes; the stored task specifications (named by
//	            hash, canonical, valid) and the ceres/* episode columns
//	journal     (with Options.Journal) the episodes, windows, held sensor
//	            values and, for synthetic sessions, the video frames against
//	            the session
//
// A dataset without an export or merge report is a LeRobot dataset another
// program wrote (LeRobot's edit tool drops ceres/): its LeRobot parts are
// checked, the CERES ones are not asked for (Result.Foreign). A finding
// about a file another program wrote names it (Finding.Writer).
//
// Every problem is a Finding with a stable Code ("data.index-gap"), so that CI
// can tell one from another. A code's prefix names what it is about: layout,
// info (meta/info.json), data, episodes (meta/episodes), tasks, stats, video,
// spec (stored specifications), ceres (the ceres/* columns) and journal (the
// comparison with the session). Errors make a shard unsound; warnings
// (a row group holding more than one episode, an unexpected file) and notes
// (what could not be compared) do not.
package verify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/media"
	"github.com/ceres-robotics/ceres-export/internal/pqcolumns"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
)

// Severities of a finding. Only SeverityError makes a shard unsound.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityNote    = "note"
)

// Names of the check groups, as Result.Checks lists them.
const (
	CheckStructure   = "structure"
	CheckData        = "data"
	CheckMetadata    = "metadata"
	CheckStats       = "stats"
	CheckVideo       = "video"
	CheckProvenance  = "provenance"
	CheckDescriptors = "descriptors"
	CheckPrivacy     = "privacy"
	CheckJournal     = "journal"
)

// ErrUnreadable marks an error of Shard: the shard or the journal cannot be
// read at all (no directory, no meta/info.json that parses, a journal that
// does not open). Every other problem is a Finding.
var ErrUnreadable = errors.New("verify: cannot read")

// Options configures Shard. The zero value runs every check except the
// comparison with a session.
type Options struct {
	// Journal is the session directory the shard was exported from; when
	// set, the shard is also compared with what an export of that session
	// must produce. "" skips that comparison.
	Journal string
	// Quick skips the video checks (decoding every frame), the
	// recomputation of statistics from the data, and decoding the
	// per-episode statistics columns of meta/episodes (130 of a small
	// shard's 147 columns; no check reads their values, and a merge
	// recomputes a shard's from its rows and decodes a foreign or merged
	// source's itself).
	Quick bool
	// AllFrames, with Journal, compares every exported frame's content
	// with the source frames; by default a sample is (identityStride).
	AllFrames bool
	// Privacy privacy.MetadataOnly also proves that the dataset holds
	// nothing private (checkPrivacy).
	Privacy privacy.Mode
	// Salt is the salt a metadata-only dataset was made with; with it,
	// --journal checks the salted session ids too.
	Salt string
	// TaskSpecs are further specifications (JSON) whose private strings
	// the privacy check looks for: a corrected one a re-export applied.
	TaskSpecs [][]byte
	// Parquet, when set, opens the shard's Parquet files: a merge passes
	// the set its reader of the same source uses, so that each file is
	// parsed and decoded once, and verify checks the very columns the
	// merge reads. Nil: verify opens every file itself.
	Parquet *pqcolumns.Files
	// Video describes and decodes the video files, the shard's and the
	// session's cameras (video.Files, which the CLI passes). Every check
	// but Quick's needs it: Shard fails without it then.
	Video FrameDecoder
	// MaxPerCode caps how many findings of one code are listed for one file;
	// further ones are counted in a final finding of that code. 0 means 20.
	MaxPerCode int
}

// FrameDecoder is what verify needs of a video library, no more: a file's
// first video stream described (every packet read) and its frames decoded
// in presentation order. internal/video implements it with FFmpeg
// (video.Files); tests may hand in files of their own making.
type FrameDecoder interface {
	Probe(path string) (media.ProbeInfo, error)
	// DecodeEach calls fn for every frame; a file cut short ends at its
	// last whole frame and DecodeEach then returns the read error, and
	// fn's and ctx's errors come back as they are.
	DecodeEach(ctx context.Context, path string, fn func(media.Frame) error) error
}

// Finding is one problem verify found.
type Finding struct {
	// Code is stable and names the rule broken, e.g. "data.index-gap".
	Code string `json:"code"`
	// Severity is SeverityError, SeverityWarning or SeverityNote.
	Severity string `json:"severity"`
	// File is the shard-relative path the finding is about ("" for the
	// shard as a whole); for --journal findings about the session, the
	// session-relative path prefixed with "session:".
	File string `json:"file"`
	// Episode, Row and Frame locate the finding when they apply (nil
	// otherwise): the episode_index, the global row (the index column's
	// position in the shard), the frame of a video file.
	Episode *int64 `json:"episode"`
	Row     *int64 `json:"row"`
	Frame   *int64 `json:"frame"`
	// Message says exactly what is wrong: what was found and what was
	// expected.
	Message string `json:"message"`
	// Writer names the program that wrote File when it is not
	// ceres-export (a Parquet file's created_by, such as LeRobot's
	// pyarrow after lerobot-edit-dataset), so that a user knows the
	// finding is not the exporter's to fix; "" for our files and for
	// findings about no file.
	Writer string `json:"writer,omitempty"`
}

// String formats the finding as one line: "file episode 3 row 120: code: message".
func (f Finding) String() string {
	loc := f.File
	if loc == "" {
		loc = "."
	}
	if f.Episode != nil {
		loc += fmt.Sprintf(" episode %d", *f.Episode)
	}
	if f.Row != nil {
		loc += fmt.Sprintf(" row %d", *f.Row)
	}
	if f.Frame != nil {
		loc += fmt.Sprintf(" frame %d", *f.Frame)
	}
	s := fmt.Sprintf("%s: %s %s: %s", loc, f.Severity, f.Code, f.Message)
	if f.Writer != "" {
		s += " [written by " + f.Writer + ", not ceres-export]"
	}
	return s
}

// Result is what Shard found.
type Result struct {
	// Dir is the shard directory.
	Dir string `json:"dir"`
	// Sound is true when no finding is an error.
	Sound bool `json:"sound"`
	// Checks lists the check groups that ran, in order.
	Checks []string `json:"checks"`
	// Findings in the order the checks found them.
	Findings []Finding `json:"findings"`
	// Foreign: a LeRobot dataset ceres-export did not write (neither an
	// export report nor a merge report): its LeRobot structure, data,
	// metadata, statistics and video are checked, CERES provenance is not
	// asked for.
	Foreign bool `json:"foreign,omitempty"`
}

// Count returns the number of findings of severity sev.
func (r *Result) Count(sev string) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == sev {
			n++
		}
	}
	return n
}

// Codes returns the distinct codes of the findings, sorted.
func (r *Result) Codes() []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range r.Findings {
		if !seen[f.Code] {
			seen[f.Code] = true
			out = append(out, f.Code)
		}
	}
	sort.Strings(out)
	return out
}

// Shard verifies the shard in dir. The error is non-nil only when the shard
// or the journal cannot be read at all (it then matches ErrUnreadable) or ctx
// is cancelled; every problem of a readable shard is a finding of the Result.
func Shard(ctx context.Context, dir string, opts Options) (*Result, error) {
	if opts.MaxPerCode <= 0 {
		opts.MaxPerCode = 20
	}
	if opts.Video == nil && !opts.Quick {
		return nil, errors.New("verify: no Options.Video: the video checks (all but --quick) decode frames with it")
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("%w shard %s: %w", ErrUnreadable, dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w shard %s: not a directory", ErrUnreadable, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, infoPath)); err != nil {
		return nil, fmt.Errorf("%w shard %s: %w", ErrUnreadable, dir, err)
	}
	c := &checker{ctx: ctx, dir: dir, opts: opts, res: &Result{Dir: dir}, counts: map[string]int{}}
	c.ceresColumns, c.nullCeres = ceresColumnTypes(false)
	c.sourceColumns, _ = ceresColumnTypes(true)
	c.res.Foreign = !exists(filepath.Join(dir, layout.ExportReportPath)) && !exists(filepath.Join(dir, mergeReportPath))
	if c.res.Foreign {
		c.ceresColumns = map[string]arrow.DataType{}
	}
	if err := c.run(); err != nil {
		return nil, err
	}
	c.flushCounts()
	c.attributeWriters()
	c.res.Sound = c.res.Count(SeverityError) == 0
	if c.res.Findings == nil {
		c.res.Findings = []Finding{}
	}
	return c.res, nil
}

// run runs the check groups in order. Later groups use what earlier ones
// read; a group whose inputs could not be read reports that and the rest
// still run as far as they can.
func (c *checker) run() error {
	groups := []struct {
		name string
		skip bool
		fn   func() error
	}{
		{CheckStructure, false, c.checkStructure},
		{CheckData, false, c.checkData},
		{CheckMetadata, false, c.checkMetadata},
		{CheckStats, false, c.checkStats},
		{CheckVideo, c.opts.Quick, c.checkVideo},
		{CheckProvenance, c.res.Foreign, c.checkProvenance},
		{CheckDescriptors, c.res.Foreign, c.checkDescriptors},
		{CheckPrivacy, c.opts.Privacy != privacy.MetadataOnly, c.checkPrivacy},
		{CheckJournal, c.opts.Journal == "", c.checkJournal},
	}
	if c.res.Foreign {
		c.notef("foreign.dataset", "", loc{}, "a LeRobot dataset ceres-export did not write (no %s or %s): its structure, data, metadata, statistics and video are checked, CERES provenance is not asked for", layout.ExportReportPath, mergeReportPath)
	}
	for _, g := range groups {
		if g.skip {
			continue
		}
		if err := c.ctx.Err(); err != nil {
			return err
		}
		c.res.Checks = append(c.res.Checks, g.name)
		if err := g.fn(); err != nil {
			return err
		}
	}
	return nil
}

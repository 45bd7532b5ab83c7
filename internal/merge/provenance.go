package merge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/descriptor"
	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/internal/shard"
)

// This file is the one place that says what a merged dataset records of
// where its episodes came from: the ceres/source/* episode columns, the
// sources of ceres/merge-report.json, and the campaign identity read from a
// shard. Pooling of other per-source descriptors belongs here too.

// SourceReport is one entry of ceres/merge-report.json "sources": a shard
// whose episodes are in the dataset, in order.
type SourceReport struct {
	// Name is the shard's directory name when it was merged.
	Name string `json:"name"`
	// SessionID is the session the shard was exported from.
	SessionID string `json:"sessionId"`
	// ExportReportSHA256 is the SHA-256 of the shard's
	// ceres/export-report.json: with the shard's deterministic output it
	// names what the shard held.
	ExportReportSHA256 string `json:"exportReportSha256"`
	// Fingerprint is the shard's content digest (contentDigest): what
	// its files held when it was merged.
	Fingerprint string `json:"fingerprint"`
	// CampaignTaskID and CampaignAttempt come from ceres/campaign.json.
	CampaignTaskID  string `json:"campaignTaskId,omitempty"`
	CampaignAttempt int64  `json:"campaignAttempt,omitempty"`
	// FirstEpisode and Episodes give the episodes' range in the dataset;
	// FirstIndex and Frames the rows'.
	FirstEpisode int64 `json:"firstEpisode"`
	Episodes     int64 `json:"episodes"`
	FirstIndex   int64 `json:"firstIndex"`
	Frames       int64 `json:"frames"`
	// Specifications are the hashes of the specifications it stored.
	Specifications []string `json:"taskSpecifications"`
	// Run is the position in "runs" of the merge that added it.
	Run int `json:"run"`
	// Foreign is set for a LeRobot dataset this tool did not write: it has
	// no session, export report or specifications, and its episodes' CERES
	// columns are null (layout.CeresEpisode.Foreign).
	Foreign *ForeignSource `json:"foreign,omitempty"`
	// License is the source's own licence when it was merged (its export
	// report's, a foreign dataset's card's); "" for none.
	License string `json:"license,omitempty"`
}

// ForeignSource is what a merge knows of a foreign source: its writer (the
// created_by of its meta/episodes, such as pyarrow's for LeRobot) and what
// its info.json says.
type ForeignSource struct {
	Writer          string `json:"writer"`
	CodebaseVersion string `json:"codebaseVersion"`
	RobotType       any    `json:"robotType"`
	TotalEpisodes   int64  `json:"totalEpisodes"`
	TotalFrames     int64  `json:"totalFrames"`
}

// foreignSource describes the foreign dataset ds.
func foreignSource(ds *shard.Dataset) (*ForeignSource, error) {
	w, err := ds.EpisodesWriter()
	if err != nil {
		return nil, fmt.Errorf("source %w", err)
	}
	return &ForeignSource{Writer: w, CodebaseVersion: lerobot.CodebaseVersion, RobotType: ds.Info.RobotType,
		TotalEpisodes: ds.Info.TotalEpisodes, TotalFrames: ds.Info.TotalFrames}, nil
}

// RunReport is one merge run that wrote the dataset (the first, then one
// per merge --into).
type RunReport struct {
	Version string        `json:"version"`
	Options ReportOptions `json:"options"`
	// Sources are the indices (in "sources") this run added.
	Sources []int `json:"sources"`
}

// ReportOptions are the options that shaped a run's output.
type ReportOptions struct {
	NoConcat        bool   `json:"noConcat"`
	Quantiles       string `json:"quantiles"`
	ChunksSize      int    `json:"chunksSize"`
	DataFileSizeMB  int    `json:"dataFilesSizeInMb"`
	VideoFileSizeMB int    `json:"videoFilesSizeInMb"`
}

// VideoReport says how one video feature's files were made.
type VideoReport struct {
	// Files are the dataset's mp4 files of the feature.
	Files []string `json:"files"`
	// Joined lists, per file, the source files copied into it in order
	// ("<source index>:<source-relative path>"); a file carried over from
	// the dataset appended to lists "kept".
	Joined map[string][]string `json:"joined"`
	// Parts lists, per file, the shard files it holds in order, each with
	// its frames and the size of the shard file it was first joined from:
	// a later merge of this dataset plans its files from them, as a merge
	// of the shards would.
	Parts map[string][]PartReport `json:"parts,omitempty"`
}

// PartReport is one shard file inside a joined file.
type PartReport struct {
	// Part is "<source index>:<shard-relative path>", as in Joined.
	Part   string `json:"part"`
	Frames int    `json:"frames"`
	Bytes  int64  `json:"bytes"`
}

// Report is ceres/merge-report.json. It holds no absolute paths and no
// clock readings: the same inputs give the same bytes.
type Report struct {
	Merger string `json:"merger"`
	// License is the dataset's licence, what its card says ("" for none):
	// --license, or its sources' when they agree. A merge that appends to
	// the dataset, or merges it again, reads it back from here.
	License  string                 `json:"license,omitempty"`
	Runs     []RunReport            `json:"runs"`
	Sources  []SourceReport         `json:"sources"`
	Episodes int                    `json:"episodes"`
	Frames   int64                  `json:"frames"`
	Tasks    int                    `json:"tasks"`
	Data     []string               `json:"data"`
	Videos   map[string]VideoReport `json:"videos"`
}

// withoutUserStrings makes a metadata-only shard, source number index,
// carry nothing a user wrote into the dataset (docs/privacy.md): its name
// is its number (a shard's directory is usually named after its session),
// and its campaign identity and extensions are kept only when every string
// in them is a salted hash, as a metadata-only campaign task writes them.
func (s *source) withoutUserStrings(index int) {
	s.name = privacy.SourceName(index)
	s.userStrings = map[string]bool{}
	for _, rel := range []string{layout.CampaignPath, layout.ExtensionsPath} {
		b, err := input.ReadFile(s.path(rel))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil {
			if _, _, ok, err := privacy.SaltedValuesOnly(b); err == nil && ok {
				continue
			}
		}
		s.userStrings[rel] = true
	}
	if s.userStrings[layout.CampaignPath] {
		s.campaign = nil
	}
}

// sourceReport describes a shard being merged.
func sourceReport(s *source, firstEpisode, firstIndex int64, run int, fingerprint string) SourceReport {
	r := SourceReport{
		Name: s.name, SessionID: s.sessionID, ExportReportSHA256: s.reportSHA, Fingerprint: fingerprint,
		FirstEpisode: firstEpisode, Episodes: int64(s.count), FirstIndex: firstIndex, Frames: s.frames,
		Run: run,
	}
	if s.campaign != nil {
		r.CampaignTaskID, r.CampaignAttempt = s.campaign.TaskID, s.campaign.AttemptNo
	}
	r.Foreign = s.foreign
	r.License = s.license
	for h := range s.specs {
		r.Specifications = append(r.Specifications, h)
	}
	sortStrings(r.Specifications)
	return r
}

// episodeSource is the ceres/source/* value of episode e of shard s, which
// is source number index of the merged dataset.
func episodeSource(s *source, index int64, e *sourceEpisode) *layout.EpisodeSource {
	src := &layout.EpisodeSource{Index: index, Name: s.name, ReportSHA256: s.reportSHA, EpisodeIndex: e.Index}
	if s.campaign != nil {
		id, attempt := s.campaign.TaskID, s.campaign.AttemptNo
		src.CampaignTaskID, src.CampaignAttempt = &id, &attempt
	}
	return src
}

// contentDigest identifies a source by its content (the merge report's
// fingerprint of a source; not a campaign task's fingerprint, which covers
// what a shard is made from): the SHA-256 over its regular files in path
// order, each contributing "<relative path>\x00", the SHA-256 of its bytes
// and "\n". Two sources of the same bytes are the same source, whatever
// their directories or writers (a foreign dataset has no export report to
// tell it by). legacy is the digest merges before seals version 2
// recorded, which named an mp4 by "size <bytes>" instead: a copy of a
// source in a dataset made then is recognised by it.
// Files named in skip (layout paths) are left out. sums, when not nil,
// serves files hashed before in the same merge.
func contentDigest(ctx context.Context, dir string, sums *fileSums, skip ...string) (digest, legacy string, err error) {
	type entry struct {
		path string
		info fs.FileInfo
	}
	var files []entry
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if rel, _ := filepath.Rel(dir, p); slices.Contains(skip, filepath.ToSlash(rel)) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, entry{p, info})
		return nil
	})
	if err != nil {
		return "", "", fmt.Errorf("content digest of %s: %w", dir, err)
	}
	slices.SortFunc(files, func(a, b entry) int { return strings.Compare(a.path, b.path) })
	h, old := sha256.New(), sha256.New()
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return "", "", err
		}
		rel, _ := filepath.Rel(dir, f.path)
		rel = filepath.ToSlash(rel)
		sum, err := sums.sha256(f.path, f.info)
		if err != nil {
			return "", "", fmt.Errorf("content digest of %s: %w", dir, err)
		}
		fmt.Fprintf(h, "%s\x00%s\n", rel, sum)
		if strings.HasSuffix(rel, layout.VideoExt) {
			fmt.Fprintf(old, "%s\x00size %d\n", rel, f.info.Size())
		} else {
			fmt.Fprintf(old, "%s\x00%s\n", rel, sum)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), hex.EncodeToString(old.Sum(nil)), nil
}

// writeSeal seals the dataset being built (shard.Seal), once every other
// file of it is written.
func writeSeal(ctx context.Context, b *shard.Builder, sums *fileSums) error {
	return b.WriteSeal(ctx, sums.sha256)
}

// sealHolds says whether dataset dir's files are still, byte for byte,
// what its writer committed (shard.CheckSeal). A dataset without a seal
// (made before seals were written), with an older or a broken one, does
// not hold; nor does one whose files cannot be read. why says what
// differs.
func sealHolds(ctx context.Context, dir string, sums *fileSums) (ok bool, why error) {
	err := shard.CheckSeal(ctx, dir, sums.sha256)
	return err == nil, err
}

// storeSourceFiles copies what identifies source s (report index idx) into
// the dataset at layout.SourcePath(idx, ...); for a merged dataset, the
// files of each of its sources, under its number in this dataset (idx on
// from its own).
func storeSourceFiles(b *shard.Builder, s *source, idx int) error {
	if s.foreign != nil {
		return nil // it has none; the report describes it
	}
	if s.isMerged() {
		files, err := mergedSourceFiles(s)
		if err != nil {
			return fmt.Errorf("source %w", err)
		}
		for _, f := range files {
			// Linked, not rewritten: LinkOrCopy refuses what is not a
			// plain file, as input.ReadFile does.
			if err := b.LinkCeresFile(layout.SourcePath(idx+f.index, f.name), f.path); err != nil {
				return fmt.Errorf("source %w", err)
			}
		}
		return nil
	}
	// The feature profile goes with the report: verify --journal rebuilds a
	// source's features from it.
	for _, rel := range layout.PerSourceFiles() {
		if s.userStrings[rel] {
			continue // withoutUserStrings
		}
		data, err := input.ReadFile(s.path(rel))
		if errors.Is(err, fs.ErrNotExist) && rel != layout.ExportReportPath {
			continue
		}
		if err != nil {
			return fmt.Errorf("source %w", err)
		}
		if err := b.WriteCeresFile(layout.SourcePath(idx, rel), data); err != nil {
			return err
		}
	}
	return nil
}

// provenanceFile is one source's file in a merged dataset.
type provenanceFile struct {
	index int    // the source's number in that dataset
	name  string // its name in the source shard, such as "export-report.json"
	path  string
}

// mergedSourceFiles lists the files merged dataset s keeps of its sources,
// in either form (layout.SourcePath, layout.LegacySourcePath); a file of
// no source in its report is not carried over.
func mergedSourceFiles(s *source) ([]provenanceFile, error) {
	dir := s.path(layout.SourcesDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var files []provenanceFile
	add := func(rel string) {
		if n, name, ok := layout.ParseSourcePath(rel); ok && n < len(s.merged.Sources) {
			files = append(files, provenanceFile{index: n, name: name, path: s.path(rel)})
		}
	}
	for _, e := range entries {
		rel := layout.SourcesDir + "/" + e.Name()
		if !e.IsDir() {
			add(rel)
			continue
		}
		inner, err := os.ReadDir(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		for _, f := range inner {
			add(rel + "/" + f.Name())
		}
	}
	return files, nil
}

// writePooled writes what the dataset pools across its sources: the task
// descriptors (ceres/tasks.json, one per task id with summed features and
// every instruction text it was recorded under) and, for metadata-only
// sources, the privacy marker.
func (m *merger) writePooled(b *shard.Builder) error {
	// Pooled source after source as writeRows wrote them: pooling is in
	// order, so that is descriptor.Pool of all of them at once.
	if err := b.WriteCeresJSON(layout.DescriptorsPath, descriptor.File{SchemaVersion: descriptor.SchemaVersion, Tasks: m.pooled}); err != nil {
		return err
	}
	if m.sources[0].private {
		return b.WriteCeresJSON(layout.PrivacyMarkerPath, privacy.Marker{SchemaVersion: 1, Mode: privacy.MetadataOnly})
	}
	return nil
}

// checkPrivacy refuses sources that mix metadata-only and full exports, and
// full sources when the dataset must be metadata-only.
func checkPrivacy(sources []*source, mode privacy.Mode) error {
	var full, private []string
	for _, s := range sources {
		if s.private {
			private = append(private, s.dir)
		} else {
			full = append(full, s.dir)
		}
	}
	switch {
	case mode == privacy.MetadataOnly && len(full) > 0:
		return fmt.Errorf("%w: --privacy metadata-only joins metadata-only exports only; these are full (export them with --privacy metadata-only): %s", ErrMismatch, strings.Join(full, ", "))
	case len(full) > 0 && len(private) > 0:
		return fmt.Errorf("%w: metadata-only and full sources cannot be joined; metadata-only: %s; full: %s", ErrMismatch, strings.Join(private, ", "), strings.Join(full, ", "))
	}
	return nil
}

// The array of sources in a merge report as shard.MarshalCeresJSON writes
// it: what reportSourcesText cuts out and reportJSON puts back.
const (
	reportSourcesOpen  = "\n  \"sources\": [\n"
	reportSourcesClose = "\n  ],\n  \"episodes\": "
	reportSourcesSep   = "\n    },\n    {\n"
)

// reportSourcesText is the text of the n entries of "sources" in data, a
// merge report as this tool writes it, from the first entry's "{" to the
// last one's "}"; nil unless it holds n entries.
func reportSourcesText(data []byte, n int) []byte {
	_, rest, ok := bytes.Cut(data, []byte(reportSourcesOpen))
	if !ok || n == 0 {
		return nil
	}
	text, _, ok := bytes.Cut(rest, []byte(reportSourcesClose))
	if !ok || bytes.Count(text, []byte(reportSourcesSep))+1 != n {
		return nil
	}
	return text
}

// reportJSON is report as shard.MarshalCeresJSON encodes it. Its first
// kept sources, when keptText is their text in the report of the dataset
// an append goes into (reportSourcesText), are copied from there rather
// than encoded again: an append leaves them as they are, and encoding
// every source again grew with the dataset.
func reportJSON(report *Report, kept int, keptText []byte) ([]byte, error) {
	if kept == 0 || keptText == nil || kept >= len(report.Sources) {
		return shard.MarshalCeresJSON(report)
	}
	added := *report
	added.Sources = report.Sources[kept:]
	data, err := shard.MarshalCeresJSON(&added)
	if err != nil {
		return nil, err
	}
	head, tail, ok := bytes.Cut(data, []byte(reportSourcesOpen))
	if !ok {
		return shard.MarshalCeresJSON(report)
	}
	out := make([]byte, 0, len(data)+len(keptText)+2)
	out = append(append(append(out, head...), reportSourcesOpen...), keptText...)
	out = append(append(out, ",\n"...), tail...)
	return out, nil
}

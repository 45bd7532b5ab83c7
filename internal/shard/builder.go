package shard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/output"
)

// ErrNoEpisodes is returned by Finish when no episode was written: LeRobot
// cannot load a dataset with total_episodes 0.
var ErrNoEpisodes = errors.New("shard: no episodes written")

// Options configures a Builder. Zero values take LeRobot's defaults; FPS is required.
type Options struct {
	// FPS is the dataset frame rate (info.json "fps").
	FPS int
	// RobotType is info.json "robot_type"; "" writes null.
	RobotType string
	// ChunksSize is info.json "chunks_size"; 0 means 1000.
	ChunksSize int
	// DataFileSizeMB is info.json "data_files_size_in_mb" and the data file
	// rotation limit; 0 means 100.
	DataFileSizeMB int
	// DataFileSizeBytes, when positive, overrides the rotation limit in bytes
	// (tests, tiny shards); info.json still reports DataFileSizeMB.
	DataFileSizeBytes int64
	// VideoFileSizeMB is info.json "video_files_size_in_mb"; 0 means 200.
	// Video rotation itself is the video package's job.
	VideoFileSizeMB int
	// CreatedBy is the Parquet created_by; "" means "ceres-export". It must
	// be deterministic (no build time or commit of a dirty tree).
	CreatedBy string
	// Workers is the number of goroutines encoding columns and computing
	// statistics; 0 means GOMAXPROCS. The output does not depend on it.
	Workers int
	// QuantileAggregation combines per-episode quantiles into stats.json;
	// the zero value is lerobot 0.4.4's count-weighted mean.
	QuantileAggregation QuantileAggregation
	// SourceColumns adds the ceres/source/* columns to meta/episodes (a
	// merged dataset: where each episode came from, layout.EpisodeColumn
	// Merged); every episode must then carry layout.CeresEpisode.Source.
	SourceColumns bool
}

// VideoSegment places one episode in a video feature's mp4 files and
// carries that episode's image statistics (per channel, values in 0..1,
// Count = sampled frames), all computed by the video package.
type VideoSegment struct {
	ChunkIndex, FileIndex      int
	FromTimestamp, ToTimestamp float64
	Stats                      Stats
}

// EpisodeMeta is what an episode carries beside its rows.
type EpisodeMeta struct {
	// Task is the LeRobot task string (the CERES task's instructions).
	Task string
	// Videos has one segment per video feature, keyed by feature name.
	Videos map[string]VideoSegment
	// Ceres fills the ceres/* columns.
	Ceres layout.CeresEpisode
	// Stats, by feature name, are statistics the episode brings instead of
	// those its rows give (a foreign merge source's own, as its writer
	// computed them); LeRobot's default columns are always computed, as
	// their values depend on where the episode lands. Their count, min,
	// max, mean and std must be those the rows give (quantiles, which
	// writers estimate differently, must lie within min and max); where
	// the rows contradict them (LeRobot's own writer and editor leave such
	// statistics for some dtypes, and after deleting episodes), the
	// statistics the rows give are written instead, and Restated says so.
	// Either way every output verifies sound.
	Stats map[string]Stats
}

// Restated lists the statistics episodes brought that their rows
// contradicted, each an error matching ErrStatsContradictRows: those
// written are the rows' own.
func (b *Builder) Restated() []error { return b.restated }

// Builder writes a whole shard into a directory (normally a Staging.Dir):
// data files while episodes arrive, metadata on Finish.
type Builder struct {
	restated []error // statistics brought by episodes that their rows contradicted
	dir      string
	opts     Options
	features []Feature // caller features in order
	data     *DataWriter
	dataCols []Feature // caller data features (no video)
	videos   []Feature
	statsFts []Feature // features with stats, LeRobot's order: caller features then defaults
	tasks    []string
	taskIdx  map[string]int64
	episodes episodeSpool
	// kept are a continued dataset's episodes, before episodes (Continue).
	kept     keptEpisodes
	total    []Stats // running aggregate per stats feature
	workers  int
	scratch  []statsScratch // one per worker
	specs    map[string]bool
	defTS    []float64  // timestamp values for stats
	defInts  [4][]int64 // frame_index, episode_index, index, task_index values for stats
	err      error
	finished bool
}

// NewBuilder validates features and options and prepares to write under dir.
func NewBuilder(dir string, features []Feature, opts Options) (*Builder, error) {
	if opts.ChunksSize == 0 {
		opts.ChunksSize = lerobot.DefaultChunksSize
	}
	if opts.DataFileSizeMB == 0 {
		opts.DataFileSizeMB = lerobot.DefaultDataFileSizeMB
	}
	if opts.VideoFileSizeMB == 0 {
		opts.VideoFileSizeMB = lerobot.DefaultVideoFileSizeMB
	}
	if opts.CreatedBy == "" {
		opts.CreatedBy = defaultCreatedBy
	}
	if opts.ChunksSize < 0 || opts.DataFileSizeMB < 0 || opts.VideoFileSizeMB < 0 {
		return nil, fmt.Errorf("shard: chunks and file sizes must be positive")
	}
	dw, err := NewDataWriter(dir, features, DataWriterOptions{
		FPS: opts.FPS, FileSizeMB: opts.DataFileSizeMB, FileSizeBytes: opts.DataFileSizeBytes,
		ChunksSize: opts.ChunksSize, CreatedBy: opts.CreatedBy, Workers: opts.Workers,
	})
	if err != nil {
		return nil, err
	}
	b := &Builder{
		dir: dir, opts: opts, features: append([]Feature(nil), features...), data: dw,
		taskIdx: map[string]int64{}, specs: map[string]bool{}, workers: dw.workers,
		episodes: episodeSpool{dir: dir},
	}
	b.scratch = make([]statsScratch, b.workers)
	for _, f := range features {
		switch {
		case f.Dtype == lerobot.Video:
			b.videos = append(b.videos, f)
		default:
			b.dataCols = append(b.dataCols, f)
		}
	}
	b.statsFts = StatsFeatures(features)
	return b, nil
}

// StatsFeatures are the features of a dataset with these features that
// have statistics, in LeRobot's order (meta/stats.json, the stats columns
// of meta/episodes): the features' own, then the default columns.
func StatsFeatures(features []Feature) []Feature {
	var out []Feature
	for _, f := range features {
		if f.hasStats() {
			out = append(out, f)
		}
	}
	return append(out, defaultFeatures...)
}

// NewRows returns empty rows shaped for this builder's data features.
func (b *Builder) NewRows(capacity int) *EpisodeRows { return NewEpisodeRows(b.features, capacity) }

// AddTask returns the task_index of text, adding it if new. Indices are
// given in order of first appearance.
func (b *Builder) AddTask(text string) int64 {
	if i, ok := b.taskIdx[text]; ok {
		return i
	}
	i := int64(len(b.tasks))
	b.tasks = append(b.tasks, text)
	b.taskIdx[text] = i
	return i
}

// WriteEpisode writes the next episode's rows (one row group), computes its
// statistics and records its metadata row. Validation errors leave the
// builder usable; a write error breaks it.
func (b *Builder) WriteEpisode(ep EpisodeMeta, rows *EpisodeRows) error {
	if b.finished {
		return ErrClosed
	}
	if b.err != nil {
		return ErrWriterBroken
	}
	index := b.episodeCount()
	if ep.Task == "" {
		return fmt.Errorf("shard: episode %d: empty task", index)
	}
	videos := make([]VideoSegment, len(b.videos))
	for i, f := range b.videos {
		seg, ok := ep.Videos[f.Name]
		if !ok {
			return fmt.Errorf("shard: episode %d: no video segment for %q", index, f.Name)
		}
		if err := seg.Stats.validate(f.Shape[2]); err != nil {
			return fmt.Errorf("shard: episode %d video %q stats: %w", index, f.Name, err)
		}
		videos[i] = seg
		videos[i].Stats = seg.Stats.clone()
	}
	if len(ep.Videos) != len(b.videos) {
		return fmt.Errorf("shard: episode %d: %d video segments for %d video features", index, len(ep.Videos), len(b.videos))
	}
	if err := b.data.checkBatch(index, rows); err != nil {
		return err
	}
	task := b.AddTask(ep.Task)
	loc, err := b.data.WriteEpisode(index, task, rows)
	if err != nil {
		b.err = err
		return err
	}
	rec := episodeRecord{index: index, tasks: []string{ep.Task}, length: int64(rows.Len), data: loc, videos: videos, ceres: ep.Ceres}
	if o := ep.Ceres.Outcome; o != nil {
		outcome := *o
		rec.ceres.Outcome = &outcome
	}
	if b.opts.SourceColumns != (ep.Ceres.Source != nil) {
		return fmt.Errorf("shard: episode %d: a source is required exactly when Options.SourceColumns is set", index)
	}
	if src := ep.Ceres.Source; src != nil {
		c := *src
		rec.ceres.Source = &c
	}
	rec.stats = b.episodeStats(rows, index, task, loc.FromIndex, videos)
	for i, f := range b.statsFts {
		if s, ok := ep.Stats[f.Name]; ok && !isDefaultName(f.Name) {
			if err := s.agreesWith(rec.stats[i], len(rec.stats[i].Mean)); err != nil {
				// The rows' own statistics stand instead (rec.stats[i]).
				b.restated = append(b.restated, fmt.Errorf("episode %d feature %q: %w: %w", index, f.Name, ErrStatsContradictRows, err))
				continue
			}
			rec.stats[i] = s.clone()
		}
	}
	for i := range rec.stats {
		if err := rec.stats[i].validate(len(rec.stats[i].Mean)); err != nil {
			b.err = err
			return fmt.Errorf("shard: episode %d feature %q stats: %w", index, b.statsFts[i].Name, err)
		}
	}
	if b.total == nil {
		b.total = make([]Stats, len(rec.stats))
		for i := range rec.stats {
			b.total[i] = rec.stats[i].clone()
		}
	} else {
		for i := range rec.stats {
			b.total[i] = aggregateStats(b.total[i], rec.stats[i], b.opts.QuantileAggregation)
		}
	}
	if err := b.episodes.add(&rec); err != nil {
		b.err = err
		return err
	}
	return nil
}

// episodeStats computes the stats of every stats feature for one episode,
// in b.statsFts order.
func (b *Builder) episodeStats(rows *EpisodeRows, index, task, from int64, videos []VideoSegment) []Stats {
	type job struct {
		f Feature
		c *ColumnData
	}
	out := make([]Stats, len(b.statsFts))
	jobs := make([]job, len(b.statsFts)) // zero job: video stats handed in
	di, vi, si := 0, 0, 0
	for _, f := range b.features {
		switch {
		case f.Dtype == lerobot.Video:
			out[si] = videos[vi].Stats
			vi++
			si++
		case f.hasStats():
			jobs[si] = job{f, &rows.Columns[di]}
			di++
			si++
		default:
			di++
		}
	}
	n := rows.Len
	if cap(b.defTS) < n {
		b.defTS = make([]float64, n)
		for j := range b.defInts {
			b.defInts[j] = make([]int64, n)
		}
	}
	ts := b.defTS[:n]
	frameIdx, epIdx, idx, taskIdx := b.defInts[0][:n], b.defInts[1][:n], b.defInts[2][:n], b.defInts[3][:n]
	for k := 0; k < n; k++ {
		// LeRobot computes timestamp stats on the episode buffer's Python
		// floats k/fps (float64), before the column is cast to float32.
		ts[k] = float64(k) / float64(b.opts.FPS)
		frameIdx[k], epIdx[k], idx[k], taskIdx[k] = int64(k), index, from+int64(k), task
	}
	i64 := Feature{Dtype: lerobot.Int64, Shape: []int{1}}
	jobs[si] = job{Feature{Dtype: lerobot.Float64, Shape: []int{1}}, &ColumnData{v: ts}}
	for j := range b.defInts {
		jobs[si+1+j] = job{i64, &ColumnData{v: b.defInts[j][:n]}}
	}

	width := 0
	for _, j := range jobs {
		if j.c != nil {
			width += j.f.width()
		}
	}
	var next atomic.Int64
	work := func(scratch *statsScratch) {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(jobs) {
				return
			}
			if jobs[i].c != nil {
				out[i] = columnStats(jobs[i].f, jobs[i].c, n, scratch)
			}
		}
	}
	workers := episodeWorkers(b.workers, len(jobs), n*width)
	if workers <= 1 {
		work(&b.scratch[0])
		return out
	}
	var wg sync.WaitGroup
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func(scratch *statsScratch) {
			defer wg.Done()
			work(scratch)
		}(&b.scratch[g])
	}
	wg.Wait()
	return out
}

// WriteSpec stores a canonical task specification at layout.SpecPath(hash).
// hash must be the lowercase hex
// SHA-256 of canonical. Writing the same hash twice is allowed.
func (b *Builder) WriteSpec(hash string, canonical []byte) error {
	sum := sha256.Sum256(canonical)
	if want := hex.EncodeToString(sum[:]); hash != want {
		return fmt.Errorf("shard: task specification %q: sha256 of the canonical bytes is %s", hash, want)
	}
	if b.specs[hash] {
		return nil
	}
	if err := b.WriteCeresFile(layout.SpecPath(hash), canonical); err != nil {
		return err
	}
	b.specs[hash] = true
	return nil
}

// episodesPassBytes is how many bytes of spooled episode records make
// meta/episodes take one more pass over them (writeEpisodes): each pass
// decodes them all again, and builds a share of the columns.
const episodesPassBytes = 2 << 20

// Finish closes the data files and writes LeRobot's metadata
// (layout.InfoPath, StatsPath, TasksPath, the episodes' meta/episodes file:
// EpisodesPath(0, 0), or after a continued dataset's last) and the
// export report at layout.ExportReportPath (report as indented JSON; nil
// skips it). Every file is fsynced; output.Staging's Commit syncs the
// directories.
func (b *Builder) Finish(report any) error {
	if b.finished {
		return ErrClosed
	}
	b.finished = true
	defer b.episodes.close()
	if b.err != nil {
		_ = b.data.Close()
		return ErrWriterBroken
	}
	if err := b.data.Close(); err != nil {
		return err
	}
	if b.episodeCount() == 0 {
		return ErrNoEpisodes
	}
	if err := writePyJSON(b.path(layout.InfoPath), b.infoJSON()); err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	stats := make(JSONObject, len(b.statsFts))
	for i, f := range b.statsFts {
		stats[i] = JSONField{f.Name, statsJSON(f, b.total[i])}
	}
	if err := writePyJSON(b.path(layout.StatsPath), stats); err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	if err := writeTasks(b.path(layout.TasksPath), b.tasks, b.opts.CreatedBy); err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	cols := episodeColumns(b.videos, b.statsFts, b.opts.SourceColumns)
	if b.episodes.n > 0 {
		spooled, err := b.episodes.size()
		if err != nil {
			return err
		}
		passes := 1 + int(spooled/episodesPassBytes)
		// The rows go to the file after a continued dataset's last
		// (Continue), or to the first.
		metaChunk, metaFile := int64(b.kept.metaChunk), int64(b.kept.metaFile)
		each := func(fn func(*episodeRecord) error) error {
			return b.episodes.each(func(rec *episodeRecord) error {
				rec.metaChunk, rec.metaFile = metaChunk, metaFile
				return fn(rec)
			})
		}
		if err := writeEpisodes(b.path(layout.EpisodesPath(b.kept.metaChunk, b.kept.metaFile)), cols, each, passes, b.opts.CreatedBy); err != nil {
			return fmt.Errorf("shard: %w", err)
		}
	}
	if report != nil {
		return b.WriteCeresJSON(layout.ExportReportPath, report)
	}
	return nil
}

// WriteCeresJSON writes v to rel, a CERES file of layout.CeresFiles, as
// deterministic JSON (struct field order, sorted map keys, two-space
// indent, trailing newline) and syncs it: the exporter's own files beside
// LeRobot's.
func (b *Builder) WriteCeresJSON(rel string, v any) error {
	data, err := MarshalCeresJSON(v)
	if err != nil {
		return fmt.Errorf("shard: %s: %w", rel, err)
	}
	return b.WriteCeresFile(rel, data)
}

// path is the file rel (a layout path) of the dataset being built.
func (b *Builder) path(rel string) string { return filepath.Join(b.dir, filepath.FromSlash(rel)) }

// MarshalCeresJSON encodes v as WriteCeresJSON writes it, deterministically:
// struct field order, sorted map keys, two-space indent, no HTML escaping,
// trailing newline.
func MarshalCeresJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// infoJSON is meta/info.json in create_empty_dataset_info's key order.
func (b *Builder) infoJSON() JSONObject {
	var robot any
	if b.opts.RobotType != "" {
		robot = b.opts.RobotType
	}
	var videoPath any
	if len(b.videos) > 0 {
		videoPath = layout.VideoPathTemplate
	}
	feats := JSONObject{}
	for _, f := range b.features {
		feats = append(feats, JSONField{f.Name, infoFeatureJSON(f)})
	}
	for _, f := range defaultFeatures {
		feats = append(feats, JSONField{f.Name, infoFeatureJSON(f)})
	}
	n := b.episodeCount()
	return JSONObject{
		{"codebase_version", lerobot.CodebaseVersion},
		{"robot_type", robot},
		{"total_episodes", n},
		{"total_frames", b.data.Frames()},
		{"total_tasks", len(b.tasks)},
		{"chunks_size", b.opts.ChunksSize},
		{"data_files_size_in_mb", b.opts.DataFileSizeMB},
		{"video_files_size_in_mb", b.opts.VideoFileSizeMB},
		{"fps", b.opts.FPS},
		{"splits", JSONObject{{"train", fmt.Sprintf("0:%d", n)}}},
		{"data_path", layout.DataPathTemplate},
		{"video_path", videoPath},
		{"features", feats},
	}
}

// Tasks returns the task strings in task_index order.
func (b *Builder) Tasks() []string { return append([]string(nil), b.tasks...) }

// DataFiles returns the data files (relative paths) the episodes written so
// far are in, in order.
func (b *Builder) DataFiles() []string {
	out := append([]string(nil), b.kept.dataFiles...)
	for _, p := range b.episodes.files {
		if len(out) == 0 || out[len(out)-1] != p {
			out = append(out, p)
		}
	}
	return out
}

// LinkCeresFile puts the file src, of a dataset this tool wrote, at rel
// unchanged (output.LinkOrCopy); rel is checked as WriteCeresFile checks
// it. A merge carries its merged sources' provenance files so, instead of
// reading and writing again what never changes.
func (b *Builder) LinkCeresFile(rel, src string) error {
	if _, ok := layout.LookupCeresFile(rel); !ok || path.Clean(rel) != rel {
		return fmt.Errorf("shard: %s is not a CERES file of the layout (internal/layout.CeresFiles)", rel)
	}
	if err := output.LinkOrCopy(src, b.path(rel)); err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	return nil
}

// WriteCeresFile writes data verbatim to rel (the commit syncs it). rel
// must be a CERES file of layout.CeresFiles (or lie in one of its directories): a
// file the layout does not name is refused, so that every reader and
// verify know every file a dataset can hold.
func (b *Builder) WriteCeresFile(rel string, data []byte) error {
	if _, ok := layout.LookupCeresFile(rel); !ok || path.Clean(rel) != rel {
		return fmt.Errorf("shard: %s is not a CERES file of the layout (internal/layout.CeresFiles)", rel)
	}
	if err := writeStaged(b.path(rel), data); err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	return nil
}

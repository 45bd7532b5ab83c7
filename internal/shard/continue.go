package shard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/output"
)

// Continue makes the builder append to base, a dataset this tool wrote with
// the builder's features: base's data and meta/episodes files are
// hard-linked into the builder's directory unchanged, its episodes become
// the first ones, and the episodes written next go into new data files
// after base's last and into a meta/episodes file after base's last (the
// v3.0 layout lets meta/episodes span files, each row naming its own).
// Appending thus reads base's metadata, never its rows, and writes nothing
// of base again: an append's work is what it adds, not what is there.
//
// The statistics are aggregated in the same order as a merge that rewrote
// base: from total, base's aggregate as its meta/stats.json holds it
// (BaseTotal: exactly the running aggregate its writer ended with, so
// that going on from it is going on from that writer's), or, when total
// is nil, from stats, base's per-episode statistics of
// StatsFeatures(base.Info.Features) as base.EpisodesWithStats returned them.
//
// It must come before any WriteEpisode, after base's tasks were added in
// base's order (AddTask), so that the task_index values in base's rows
// still name the same tasks. eps are base's episodes (base.Episodes).
func (b *Builder) Continue(ctx context.Context, base *Dataset, eps []Episode, total []Stats, stats [][]Stats) error {
	if err := b.checkContinuable(ctx, base); err != nil {
		return err
	}
	if len(eps) == 0 {
		return fmt.Errorf("shard: continue %s: no episodes", base.Dir)
	}
	if total == nil && len(stats) != len(eps) {
		return fmt.Errorf("shard: continue %s: statistics for %d of %d episodes", base.Dir, len(stats), len(eps))
	}
	var files []string
	last := DataLocation{ChunkIndex: -1}
	var frames int64
	for i, e := range eps {
		where := fmt.Sprintf("shard: continue %s episode %d", base.Dir, e.Index)
		if len(e.Tasks) != 1 {
			return fmt.Errorf("%s: tasks %q, want one", where, e.Tasks)
		}
		if b.opts.SourceColumns != (e.Ceres.Source != nil) {
			return fmt.Errorf("%s: a source is required exactly when Options.SourceColumns is set", where)
		}
		at := e.Data
		if at.ChunkIndex != last.ChunkIndex || at.FileIndex != last.FileIndex {
			if last.ChunkIndex >= 0 && (at.ChunkIndex < last.ChunkIndex || (at.ChunkIndex == last.ChunkIndex && at.FileIndex <= last.FileIndex)) {
				return fmt.Errorf("%s: data file %s comes after %s", where,
					layout.DataPath(at.ChunkIndex, at.FileIndex), layout.DataPath(last.ChunkIndex, last.FileIndex))
			}
			files = append(files, layout.DataPath(at.ChunkIndex, at.FileIndex))
		}
		last = at
		for _, f := range b.videos {
			if _, ok := e.Videos[f.Name]; !ok {
				return fmt.Errorf("%s: no video segment for %q", where, f.Name)
			}
		}
		frames += e.Length
		if total != nil {
			continue
		}
		if len(stats[i]) != len(b.statsFts) {
			return fmt.Errorf("%s: statistics of %d features, want %d", where, len(stats[i]), len(b.statsFts))
		}
		for j := range stats[i] {
			if err := stats[i][j].validate(len(stats[i][j].Mean)); err != nil {
				return fmt.Errorf("%s feature %q stats: %w", where, b.statsFts[j].Name, err)
			}
			if b.total == nil {
				continue
			}
			b.total[j] = aggregateStats(b.total[j], stats[i][j], b.opts.QuantileAggregation)
		}
		if b.total == nil {
			b.total = make([]Stats, len(stats[i]))
			for j := range stats[i] {
				b.total[j] = stats[i][j].clone()
			}
		}
	}
	return b.continueFrom(ctx, base, KeptEpisodes{Episodes: int64(len(eps)), Frames: frames, DataFiles: files}, last, total)
}

// KeptEpisodes is what Continue needs of base's episodes when they are not
// read (ContinueKnown): their number, frames and data files in order, as
// base's info.json and merge report give them.
type KeptEpisodes struct {
	Episodes, Frames int64
	DataFiles        []string
}

// ContinueKnown is Continue from what base's metadata says of its episodes
// instead of the episodes themselves, and from total, base's aggregate
// statistics (BaseTotal): an append to a dataset whose seal holds reads
// none of its meta/episodes rows, so that its cost does not grow with
// the dataset. The rows written next go after the last of k.DataFiles.
func (b *Builder) ContinueKnown(ctx context.Context, base *Dataset, k KeptEpisodes, total []Stats) error {
	if err := b.checkContinuable(ctx, base); err != nil {
		return err
	}
	if k.Episodes <= 0 || len(k.DataFiles) == 0 || total == nil {
		return fmt.Errorf("shard: continue %s: no episodes, data files or aggregate statistics", base.Dir)
	}
	last := DataLocation{ChunkIndex: -1}
	for _, rel := range k.DataFiles {
		chunk, file, ok := layout.ChunkFile(rel, layout.DataDir, layout.ParquetExt)
		if !ok {
			return fmt.Errorf("shard: continue %s: data file %q is not %s", base.Dir, rel, layout.DataPathTemplate)
		}
		if last.ChunkIndex >= 0 && (chunk < last.ChunkIndex || (chunk == last.ChunkIndex && file <= last.FileIndex)) {
			return fmt.Errorf("shard: continue %s: data file %s comes after %s", base.Dir, rel, layout.DataPath(last.ChunkIndex, last.FileIndex))
		}
		last = DataLocation{ChunkIndex: chunk, FileIndex: file}
	}
	return b.continueFrom(ctx, base, k, last, total)
}

// continueFrom is Continue once base's episodes are known: the aggregate
// taken from total when given, base's files linked.
func (b *Builder) continueFrom(ctx context.Context, base *Dataset, k KeptEpisodes, last DataLocation, total []Stats) error {
	files := k.DataFiles
	if total != nil {
		if len(total) != len(b.statsFts) {
			return fmt.Errorf("shard: continue %s: aggregate statistics of %d features, want %d", base.Dir, len(total), len(b.statsFts))
		}
		b.total = make([]Stats, len(total))
		for j := range total {
			if err := total[j].validate(len(total[j].Mean)); err != nil {
				return fmt.Errorf("shard: continue %s: %s feature %q: %w", base.Dir, layout.StatsPath, b.statsFts[j].Name, err)
			}
			b.total[j] = total[j].clone()
		}
	}
	metaFiles, err := base.episodesFiles()
	if err != nil {
		return err
	}
	var metaRel []string
	for _, p := range metaFiles {
		rel, _ := filepath.Rel(base.Dir, p)
		metaRel = append(metaRel, filepath.ToSlash(rel))
	}
	lastMeta := metaRel[len(metaRel)-1]
	lastChunk, lastFile, ok := layout.ChunkFile(lastMeta, layout.EpisodesDir, layout.ParquetExt)
	if !ok {
		return fmt.Errorf("shard: continue %s: %s is not a %s file", base.Dir, lastMeta, layout.EpisodesDir)
	}
	for _, rel := range slices.Concat(files, metaRel) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := output.LinkOrCopy(base.Path(rel), b.path(rel)); err != nil {
			return fmt.Errorf("shard: continue %s: %w", base.Dir, err)
		}
	}
	b.kept = keptEpisodes{episodes: k.Episodes, dataFiles: files}
	b.kept.metaChunk, b.kept.metaFile = lerobot.NextChunkFile(lastChunk, lastFile, b.opts.ChunksSize)
	w := b.data
	w.written = append(w.written, files...)
	w.episodes, w.frames = k.Episodes, k.Frames
	w.chunk, w.fileIdx = lerobot.NextChunkFile(last.ChunkIndex, last.FileIndex, w.opts.ChunksSize)
	return nil
}

// keptEpisodes are the episodes a builder carries over from the dataset it
// continues (Continue), which it holds no record of.
type keptEpisodes struct {
	episodes  int64
	dataFiles []string // their data files, in order
	// metaChunk, metaFile are where the meta/episodes rows written next go.
	metaChunk, metaFile int
}

// episodeCount is the number of episodes in the dataset so far.
func (b *Builder) episodeCount() int64 { return b.kept.episodes + int64(b.episodes.n) }

// BaseTotal reads the aggregate statistics of StatsFeatures(d.Info.Features)
// from d's meta/stats.json, for Continue. It returns an error unless the
// file is, byte for byte, what the builder writes for the values read:
// then they are, exactly, the running aggregate its writer ended with
// (the shortest decimal of a float64 reads back as that float64), and
// anything else (another writer's file, one rounded or edited) is for the
// caller to replace with base's per-episode statistics.
func (d *Dataset) BaseTotal() ([]Stats, error) {
	p := d.Path(layout.StatsPath)
	data, err := input.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var byName map[string]map[string]json.RawMessage
	if err := json.Unmarshal(data, &byName); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	fts := StatsFeatures(d.Info.Features)
	total := make([]Stats, len(fts))
	again := make(JSONObject, len(fts))
	for i, f := range fts {
		o, ok := byName[f.Name]
		if !ok {
			return nil, fmt.Errorf("%s: no statistics of %q", p, f.Name)
		}
		vec := func(stat string) ([]float64, error) {
			raw := o[stat]
			var v []float64
			if f.Dtype != lerobot.Video {
				err := json.Unmarshal(raw, &v)
				return v, err
			}
			var nested [][][]float64
			if err := json.Unmarshal(raw, &nested); err != nil {
				return nil, err
			}
			for _, c := range nested {
				if len(c) != 1 || len(c[0]) != 1 {
					return nil, fmt.Errorf("want one value per channel")
				}
				v = append(v, c[0][0])
			}
			return v, nil
		}
		s := &total[i]
		for _, st := range []struct {
			name string
			to   *[]float64
		}{{"min", &s.Min}, {"max", &s.Max}, {"mean", &s.Mean}, {"std", &s.Std}, {QuantileNames[0], &s.Quantiles[0]},
			{QuantileNames[1], &s.Quantiles[1]}, {QuantileNames[2], &s.Quantiles[2]}, {QuantileNames[3], &s.Quantiles[3]}, {QuantileNames[4], &s.Quantiles[4]}} {
			if *st.to, err = vec(st.name); err != nil {
				return nil, fmt.Errorf("%s: %s.%s: %w", p, f.Name, st.name, err)
			}
		}
		var count []int64
		if err := json.Unmarshal(o["count"], &count); err != nil || len(count) != 1 {
			return nil, fmt.Errorf("%s: %s.count: want one integer", p, f.Name)
		}
		s.Count = count[0]
		again[i] = JSONField{f.Name, statsJSON(f, *s)}
	}
	want, err := marshalPyJSON(again, 4, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if !bytes.Equal(want, data) {
		return nil, fmt.Errorf("%s is not the aggregate this tool writes for the values it holds", p)
	}
	return total, nil
}

// checkContinuable refuses to continue base from a finished builder or one
// that has written episodes already, and refuses a base whose tasks are
// not the first the builder added, in its order, or whose statistics
// features are not the builder's: the episodes it keeps would name other
// tasks or columns.
func (b *Builder) checkContinuable(ctx context.Context, base *Dataset) error {
	if b.finished {
		return ErrClosed
	}
	if b.episodes.n > 0 || b.data.episodes > 0 || b.kept.episodes > 0 {
		return fmt.Errorf("shard: continue %s: episodes were written before", base.Dir)
	}
	tasks, err := base.Tasks(ctx)
	if err != nil {
		return err
	}
	if len(b.tasks) < len(tasks) || !slices.Equal(b.tasks[:len(tasks)], tasks) {
		return fmt.Errorf("shard: continue %s: its tasks must be the first ones added, in its order", base.Dir)
	}
	own := StatsFeatures(base.Info.Features)
	if !slices.EqualFunc(own, b.statsFts, func(a, b Feature) bool { return a.Name == b.Name }) {
		return fmt.Errorf("shard: continue %s: its features are not the builder's", base.Dir)
	}
	return nil
}

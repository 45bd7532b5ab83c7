package shard

import (
	"context"
	"fmt"
	"slices"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/output"
)

// Continue makes the builder append to base, a dataset this tool wrote with
// the builder's features: base's data files are hard-linked into the
// builder's directory unchanged, its episodes become the first ones with
// the rows, statistics and places its meta/episodes records, and the
// episodes written next go into new data files after base's last. Appending
// thus reads base's metadata, never its rows, and writes nothing of base
// again but its metadata rows; the statistics are aggregated over the same
// per-episode statistics in the same order as a merge that rewrote base.
//
// It must come before any WriteEpisode, after base's tasks were added in
// base's order (AddTask), so that the task_index values in base's rows
// still name the same tasks. eps and stats are base's episodes as
// base.EpisodesWithStats(ctx, StatsFeatures(base.Info.Features)) returned
// them: whoever opened base has read them already, and meta/episodes is
// most of what an append reads.
func (b *Builder) Continue(ctx context.Context, base *Dataset, eps []Episode, stats [][]Stats) error {
	if b.finished {
		return ErrClosed
	}
	if b.episodes.n > 0 || b.data.episodes > 0 {
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
	if len(stats) != len(eps) {
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
		if len(stats[i]) != len(b.statsFts) {
			return fmt.Errorf("%s: statistics of %d features, want %d", where, len(stats[i]), len(b.statsFts))
		}
		rec := episodeRecord{index: e.Index, tasks: e.Tasks, length: e.Length, data: e.Data, stats: stats[i], ceres: e.Ceres}
		for _, f := range b.videos {
			seg, ok := e.Videos[f.Name]
			if !ok {
				return fmt.Errorf("%s: no video segment for %q", where, f.Name)
			}
			rec.videos = append(rec.videos, seg)
		}
		for j := range rec.stats {
			if err := rec.stats[j].validate(len(rec.stats[j].Mean)); err != nil {
				return fmt.Errorf("%s feature %q stats: %w", where, b.statsFts[j].Name, err)
			}
			if b.total == nil {
				continue
			}
			b.total[j] = aggregateStats(b.total[j], rec.stats[j], b.opts.QuantileAggregation)
		}
		if b.total == nil {
			b.total = make([]Stats, len(rec.stats))
			for j := range rec.stats {
				b.total[j] = rec.stats[j].clone()
			}
		}
		if err := b.episodes.add(&rec); err != nil {
			return err
		}
		frames += e.Length
	}
	if len(eps) == 0 {
		return fmt.Errorf("shard: continue %s: no episodes", base.Dir)
	}
	for _, rel := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := output.LinkOrCopy(base.Path(rel), b.path(rel)); err != nil {
			return fmt.Errorf("shard: continue %s: %w", base.Dir, err)
		}
	}
	w := b.data
	w.written = append(w.written, files...)
	w.episodes, w.frames = int64(len(eps)), frames
	w.chunk, w.fileIdx = lerobot.NextChunkFile(last.ChunkIndex, last.FileIndex, w.opts.ChunksSize)
	return nil
}

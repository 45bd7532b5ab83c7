package batch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/merge"
	"github.com/ceres-robotics/ceres-export/internal/shard"
)

// MergedDataset is one dataset a campaign merge wrote.
type MergedDataset struct {
	SettingID string
	Dir       string
	Shards    int
	Episodes  int
	Frames    int64
}

// Merge merges the campaign's shards into dataset/<setting_id>, one dataset
// per setting (MergeGroups), each replaced atomically; the same merges the
// SLURM merge job runs with `ceres-export merge` (same defaults). Callers
// merge only after every task ended as expected, as afterok does.
func Merge(ctx context.Context, tasks []campaign.Task, out, dataset, version string) ([]MergedDataset, error) {
	if err := os.MkdirAll(dataset, 0o755); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	settings, shards := campaign.MergeGroups(tasks)
	var done []MergedDataset
	for _, s := range settings {
		var sources []string
		for _, id := range shards[s] {
			sources = append(sources, filepath.Join(out, id))
		}
		dir := filepath.Join(dataset, s)
		res, err := merge.Merge(ctx, merge.Options{
			Sources: sources, Output: dir, Replace: true, Quantiles: shard.QuantileWeightedMean, Version: version,
		})
		if err != nil {
			return done, fmt.Errorf("merge setting %s into %s: %w", s, dir, err)
		}
		done = append(done, MergedDataset{SettingID: s, Dir: dir, Shards: len(sources), Episodes: res.Episodes, Frames: res.Frames})
	}
	return done, nil
}

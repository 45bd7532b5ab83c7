package batch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/merge"
	"github.com/ceres-robotics/ceres-export/internal/output"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// CheckMergeDestination applies the destination rules to a campaign's
// --merge DATASET (the directory of one merged dataset per setting): it may
// not be, lie inside or contain any input of the campaign (a session, the
// manifest, a corrected specification or profile), nor OUT, whose shards
// and attempt records are inputs too (a merge inside a session changed its
// fingerprint, so every rerun exported again); and it is no symbolic link.
// An existing DATASET must be a directory; each DATASET/<setting_id> is
// then replaced only when it is a merged dataset of ours (merge.Merge).
func CheckMergeDestination(dataset, out string, inputs []string) error {
	_, err := output.CheckDestination(dataset, append(slices.Clone(inputs), out), false)
	if errors.Is(err, output.ErrDestinationExists) {
		if st, serr := os.Stat(dataset); serr != nil || !st.IsDir() {
			return fmt.Errorf("%w: --merge %s exists and is not a directory", output.ErrDestinationRefused, dataset)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("--merge: %w", err)
	}
	return nil
}

// MergedDataset is one dataset a campaign merge wrote.
type MergedDataset struct {
	SettingID string `json:"setting_id"`
	Dir       string `json:"dir"`
	Shards    int    `json:"shards"`
	Episodes  int    `json:"episodes"`
	Frames    int64  `json:"frames"`
}

// Merge merges the campaign's shards into dataset/<setting_id>, one dataset
// per setting (MergeGroups), each replaced atomically; the same merges the
// SLURM merge job runs with `ceres-export merge` (same defaults). Callers
// merge only after every task ended as expected, as afterok does.
func Merge(ctx context.Context, tasks []campaign.Task, out, dataset, version string) ([]MergedDataset, error) {
	if err := CheckMergeDestination(dataset, out, campaign.ReadPaths(tasks, nil)); err != nil {
		return nil, err
	}
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
			Video: video.Files{},
		})
		if err != nil {
			return done, fmt.Errorf("merge setting %s into %s: %w", s, dir, err)
		}
		done = append(done, MergedDataset{SettingID: s, Dir: dir, Shards: len(sources), Episodes: res.Episodes, Frames: res.Frames})
	}
	return done, nil
}

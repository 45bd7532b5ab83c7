package main

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/ceres-robotics/ceres-export/internal/exitstatus"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/merge"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/internal/version"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

var mergeExitStatus = exitstatus.Help("the dataset was written",
	exitstatus.Unsound, exitstatus.UsageError, exitstatus.Unreadable, exitstatus.MergeInput, exitstatus.SourcesDiffer,
	exitstatus.LicensesDiffer, exitstatus.DestinationExists, exitstatus.DestinationRefused,
	exitstatus.Interrupted, exitstatus.Busy, exitstatus.WriteFailed)

// MergeOptions are the flags of `ceres-export merge`.
type MergeOptions struct {
	Shards    []string
	Output    string
	Into      string
	Replace   bool
	NoConcat  bool
	Quantiles string
	Privacy   string
	License   string
	JSON      bool
	// WaitBusy is how long to wait for a destination another process
	// holds (a merge whose node froze) before giving up as busy.
	WaitBusy time.Duration
}

// AddFlags registers the options' flags on cmd.
func (o *MergeOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "merged dataset to write")
	f.StringVar(&o.Into, "into", "", "append the shards to this merged dataset (replaced atomically)")
	f.BoolVar(&o.Replace, "replace", false, "replace an existing merged dataset at -o atomically")
	f.BoolVar(&o.NoConcat, "no-concat", false, "keep each source video file as its own file (LeRobot's concatenate_videos=False)")
	f.StringVar(&o.Quantiles, "quantiles", "weighted-mean", "how per-episode quantiles combine: weighted-mean (what LeRobot 0.4.4 and 0.6.1 compute) or envelope (min for q<=50, max above: a conservative bound)")
	f.StringVar(&o.Privacy, "privacy", "full", "metadata-only: require every source to be a metadata-only export, so that the dataset may leave the lab")
	f.StringVar(&o.License, "license", "", "the dataset card's licence, a Hugging Face Hub licence id (apache-2.0, mit, cc-by-4.0, cc-by-nc-4.0, cc0-1.0, other, ...; default: the sources' licence when they all agree)")
	addJSONFlag(cmd, &o.JSON)
	f.DurationVar(&o.WaitBusy, "wait-busy", 0, "wait this long for a destination another process is writing before giving up (exit 4); batch slurm's merge jobs wait")
}

func newMergeCmd(s streams) *cobra.Command {
	return newMergeCmdWith(s, runMerge)
}

// newMergeCmdWith builds the command; tests inject runF to check flag parsing.
func newMergeCmdWith(s streams, runF func(context.Context, MergeOptions, streams) error) *cobra.Command {
	var opts MergeOptions
	cmd := &cobra.Command{
		Use:   "merge SHARD... (-o DATASET | --into DATASET)",
		Short: "Join shards into one LeRobot dataset without re-encoding",
		Long: `Join LeRobot v3.0 shards written by ceres-export into one dataset, in the
order given. The shards must agree on fps, robot type and features (names,
dtypes, shapes, names per dimension, video size, codec and pixel format);
otherwise every difference is listed and nothing is written.

Video is never decoded or re-encoded: each camera's files are joined by
stream copy onto one frame grid (frame k of a file at exactly k/fps), up to
LeRobot's 200 MB per file, index at the front. Rows are re-indexed
(episode_index, index, task_index), tasks unified by string, statistics
aggregated from the per-episode statistics. Every episode keeps its CERES
provenance and names its source (` + layout.SourcePrefix + `* columns);
` + layout.MergeReportPath + ` lists the sources and what was joined.

--into DATASET appends the shards to a dataset this command made. It is
trusted while every file is, byte for byte, what its merge sealed in
` + layout.SealPath + `; otherwise it is verified in full first. Every other source
is verified before anything is written: in full when it has no seal that
holds (a foreign dataset), and refused when unsound. The output is built
beside its destination and moved into place when complete: a failed or
killed merge leaves the old dataset as it was.

The dataset's licence (its card's license) is --license; without it, the
sources' own when they all have the same one (or none), and sources under
different licences are refused.` + mergeExitStatus,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Shards = args
			if opts.Output == "" && opts.Into == "" {
				return withCode(exitstatus.UsageError, errors.New("merge: give -o DATASET or --into DATASET"))
			}
			return runF(c.Context(), opts, s)
		},
	}
	opts.AddFlags(cmd)
	return cmd
}

// mergeGCPercent is the GC target of a merge. main's 50 keeps an export's
// streaming heap flat; a merge instead reads every source's metadata
// Parquet whole, and arrow-go's reader makes garbage per column chunk (a
// page buffer of at least 16 KiB each, hundreds per wide meta/episodes
// file): at 50, merging 256 small shards took 3.62 s, at 100 2.60 s, for a
// peak of 148 and 163 MB (the 8-shard merge's 120 and 122 MB), measured
// on the 2-core machine (docs/benchmarks.md, "Merge at scale").
const mergeGCPercent = 100

// mergeGC sets the merge's GC target for the rest of the process.
func mergeGC() { debug.SetGCPercent(mergeGCPercent) }

func runMerge(ctx context.Context, o MergeOptions, s streams) error {
	q, err := shard.ParseQuantileAggregation(o.Quantiles)
	if err != nil {
		return withCode(exitstatus.UsageError, fmt.Errorf("merge: --quantiles %w", err))
	}
	mode, err := privacy.ParseMode(o.Privacy)
	if err != nil {
		return withCode(exitstatus.UsageError, fmt.Errorf("merge: %w", err))
	}
	if err := checkLicenseFlag(o.License); err != nil {
		return withCode(exitstatus.UsageError, fmt.Errorf("merge: %w", err))
	}
	mergeGC()
	res, err := merge.Merge(ctx, merge.Options{
		Sources: o.Shards, Output: o.Output, Into: o.Into, Replace: o.Replace, NoConcat: o.NoConcat, WaitBusy: o.WaitBusy,
		Quantiles: q, Privacy: mode, License: o.License, Version: version.Tool(), Logger: s.Logger(), Video: video.Files{},
	})
	switch {
	case err != nil:
		return err
	case o.JSON:
		return writeJSON(s, "merge", res)
	}
	return withCode(exitstatus.WriteFailed, res.WriteText(s.Out))
}

// checkLicenseFlag checks a --license value ("" is none) against the Hub's
// licence ids, naming the flag, the value and the nearest id.
func checkLicenseFlag(id string) error {
	if id == "" {
		return nil
	}
	if err := shard.CheckLicense(id); err != nil {
		return fmt.Errorf("--license %q: %w", id, err)
	}
	return nil
}

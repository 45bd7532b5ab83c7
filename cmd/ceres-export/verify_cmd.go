package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/ceres-robotics/ceres-export/internal/exitstatus"
	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/internal/verify"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

var verifyExitStatus = exitstatus.Help("the shard is sound (warnings and notes do not count)",
	exitstatus.NotSound.As("the shard has findings of severity error"),
	exitstatus.UsageError, exitstatus.Unreadable.As("the shard or the journal cannot be read at all"),
	exitstatus.Interrupted)

// VerifyOptions are the flags of `ceres-export verify`.
type VerifyOptions struct {
	Shard     string
	Journal   string // --journal SESSION_DIR
	JSON      bool   // one JSON document on stdout
	Quick     bool   // skip decoding videos and per-episode stats, recomputing stats
	AllFrames bool   // --all-frames: compare every frame's content with the session
	// Privacy is --privacy; Salt and TaskSpecs go with it.
	Privacy   string
	Salt      string
	TaskSpecs []string
}

// AddFlags registers the options' flags on cmd.
func (o *VerifyOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Journal, "journal", "", "also check the shard against the session it was exported from")
	addJSONFlag(cmd, &o.JSON)
	f.BoolVar(&o.AllFrames, "all-frames", false, "with --journal, compare every exported frame's content with the session's camera frames (default: frames 0, 30, 60, … and the last of each episode)")
	f.BoolVar(&o.Quick, "quick", false, "skip the video checks, the recomputation of statistics and the decoding of meta/episodes' per-episode statistics")
	f.StringVar(&o.Privacy, "privacy", "full", "metadata-only: also prove that nothing private remains (with --journal, every private string of the session is looked for in every byte)")
	f.StringVar(&o.Salt, "salt", "", "the salt a metadata-only dataset was made with (checks its salted session ids against --journal)")
	f.StringArrayVar(&o.TaskSpecs, "task-spec", nil, "a corrected specification the export applied, whose private strings --privacy also looks for (repeatable)")
}

func newVerifyCmd(s streams) *cobra.Command {
	return newVerifyCmdWith(s, runVerify)
}

// newVerifyCmdWith builds the command; tests inject runF to check flag
// parsing.
func newVerifyCmdWith(s streams, runF func(context.Context, VerifyOptions, streams) error) *cobra.Command {
	var opts VerifyOptions
	cmd := &cobra.Command{
		Use:   "verify SHARD_DIR",
		Short: "Check that a LeRobot shard is sound",
		Long: `Check that the LeRobot v3.0 shard in SHARD_DIR is sound: the layout and
` + layout.InfoPath + ` LeRobot's loader and merge expect, the data files' schema and index
columns, the episodes metadata against the data and video files, tasks and
statistics, every video frame (unless --quick), every file's bytes against
the SHA-256 its writer sealed in ` + layout.SealPath + ` (unless --quick), and the
CERES provenance (stored task specifications, the ` + layout.CeresPrefix + `* columns, the task
descriptors).

With --privacy metadata-only it also proves that a dataset meant to leave the
lab holds nothing private: no video, no unredacted specification and, with
--journal, none of the session's private strings (session id, run title and
description, instructions) in any byte of any file or decoded Parquet value.

With --journal SESSION_DIR the shard is also compared with what an export of
that session must produce: the accepted attempts and their windows, the held
sensor values row by row and the video frames: each exported frame must look
more like the camera frame nearest to its time than like that frame's
neighbours (luma PSNR; neighbours too alike to tell apart are a tie), and be
within a fidelity bound of it (PSNR, contrast and mean levels), on frames 0,
30, 60, … and the last of each episode (--all-frames: every frame); a
synthetic session's code band also proves every frame.

Each finding prints as one line on stdout: the file, the episode, row or
frame, the severity, a stable code (e.g. data.index-gap) and the message;
a summary line follows. With --json stdout holds one JSON document
{message_type: "verify", dir, sound, checks, counts, findings: [{code,
severity, file, episode, row, frame, message}]}.` + verifyExitStatus,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Shard = args[0]
			return runF(c.Context(), opts, s)
		},
	}
	opts.AddFlags(cmd)
	return cmd
}

// runVerify verifies one shard and prints the findings.
func runVerify(ctx context.Context, opts VerifyOptions, s streams) error {
	vo := verify.Options{Journal: opts.Journal, Quick: opts.Quick, AllFrames: opts.AllFrames, Salt: opts.Salt, Video: video.Files{}}
	mode, err := privacy.ParseMode(opts.Privacy)
	if err != nil {
		return withCode(exitstatus.UsageError, err)
	}
	vo.Privacy = mode
	for _, f := range opts.TaskSpecs {
		b, err := input.ReadFile(f)
		if err != nil {
			return withCode(exitstatus.UsageError, err)
		}
		vo.TaskSpecs = append(vo.TaskSpecs, b)
	}
	res, err := verify.Shard(ctx, opts.Shard, vo)
	if err != nil {
		if ctx.Err() != nil || !errors.Is(err, verify.ErrUnreadable) {
			return withCode(exitstatus.WriteFailed, err)
		}
		if opts.JSON {
			if werr := writeJSON(s, "verify", verify.UnreadableDocument(opts.Shard, err)); werr != nil {
				return withCode(exitstatus.WriteFailed, werr)
			}
			return exitstatus.Printed(exitstatus.Usage)
		}
		return withCode(exitstatus.UsageError, err)
	}
	if opts.JSON {
		err = writeJSON(s, "verify", res.Document())
	} else {
		err = res.WriteText(s.Out)
	}
	if err != nil {
		return withCode(exitstatus.WriteFailed, err)
	}
	if !res.Sound {
		return exitstatus.Printed(exitstatus.Findings)
	}
	return nil
}

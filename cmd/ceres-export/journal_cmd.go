package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ceres-robotics/ceres-export/internal/exitstatus"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/journal"
)

var journalInspectExitStatus = exitstatus.Help("the journal is readable (a torn tail, a missing END and anomalous attempts are reported, not errors)",
	exitstatus.JournalInvalid, exitstatus.UsageError, exitstatus.Unreadable.As("DIR cannot be read"), exitstatus.JournalCorrupt,
	exitstatus.Interrupted)

func newJournalCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "journal",
		Short: "Read CERES source journals",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newJournalInspectCmd(s, nil))
	return cmd
}

// JournalInspectOptions are the options of `journal inspect`.
type JournalInspectOptions struct {
	Dir     string // the session directory
	JSON    bool   // print one JSON document instead of text
	Salvage bool   // read past corruption, reporting what was skipped
	// FPS is the dataset rate the plan's frame counts use; 0 means the
	// default of docs/export-semantics.md: the nominal fps of the first video
	// stream, else the rate of the first sensor stream, rounded.
	FPS int
}

// AddFlags registers the options' flags on cmd.
func (o *JournalInspectOptions) AddFlags(cmd *cobra.Command) {
	addJSONFlag(cmd, &o.JSON)
	cmd.Flags().BoolVar(&o.Salvage, "salvage", false, "read past corrupt records, reporting every byte range skipped")
	cmd.Flags().IntVar(&o.FPS, "fps", 0, "dataset rate for frame counts (default: first video stream's fps, else first sensor stream's rate)")
}

// newJournalInspectCmd builds `journal inspect`; runF, when not nil,
// replaces runJournalInspect so tests can check flag parsing alone.
func newJournalInspectCmd(s streams, runF func(context.Context, JournalInspectOptions, streams) error) *cobra.Command {
	var opts JournalInspectOptions
	cmd := &cobra.Command{
		Use:   "inspect DIR",
		Short: "Show what a session's journal holds and what an export would do with each attempt",
		Long: `Inspect reads the journal of the session directory DIR, validates every
record, and prints the session, its streams and segments, every attempt with
its fate (accepted as episode N, retried, incomplete, empty, anomalous), window
and outcome, the pauses and resets, and whatever was torn, skipped, unknown or
unterminated.` + journalInspectExitStatus,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			if opts.FPS < 0 || opts.FPS > lerobot.MaxFPS {
				return withCode(exitstatus.UsageError, fmt.Errorf("--fps %d outside [1, %d]", opts.FPS, lerobot.MaxFPS))
			}
			if runF != nil {
				return runF(cmd.Context(), opts, s)
			}
			return runJournalInspect(cmd.Context(), opts, s)
		},
	}
	opts.AddFlags(cmd)
	return cmd
}

// runJournalInspect is `journal inspect`.
func runJournalInspect(ctx context.Context, opts JournalInspectOptions, s streams) error {
	if st, err := os.Stat(opts.Dir); err != nil {
		return withCode(exitstatus.UsageError, err)
	} else if !st.IsDir() {
		return withCode(exitstatus.UsageError, fmt.Errorf("%s: not a directory", opts.Dir))
	}
	j, err := journal.Open(ctx, opts.Dir, journal.Options{Salvage: opts.Salvage})
	if err != nil {
		return withCode(exitstatus.UsageError, fmt.Errorf("%s: %w", opts.Dir, err)) // otherwise: DIR cannot be read
	}
	fps, source := opts.FPS, "--fps"
	if fps == 0 {
		if fps, source, err = plan.DefaultFPS(j.Info.Streams); err != nil {
			return withCode(exitstatus.UsageError, fmt.Errorf("%w; give --fps", err))
		}
	}
	in, err := plan.Inspect(j, fps, source)
	if err != nil {
		return withCode(exitstatus.WriteFailed, err)
	}
	if opts.JSON {
		return writeJSON(s, "journal_inspect", in)
	}
	return withCode(exitstatus.WriteFailed, in.WriteText(s.Out))
}

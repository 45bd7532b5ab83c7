package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/ceres-robotics/ceres-export/internal/exitstatus"
	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/page"
)

var reportExitStatus = exitstatus.Help("the page was written",
	exitstatus.UsageError, exitstatus.Unreadable.As("the session or shard cannot be read"),
	exitstatus.JournalCorrupt.As("the journal is corrupt (use --salvage to read past it)"),
	exitstatus.Interrupted, exitstatus.WriteFailed.As("writing the page failed; an existing page is untouched"))

// ReportOptions are the flags of `ceres-export report`.
type ReportOptions struct {
	Session string
	Shard   string // --shard: the shard exported from the session
	Output  string // -o
	Salvage bool   // without --shard: read past journal corruption
}

// AddFlags registers the options' flags on cmd.
func (o *ReportOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Shard, "shard", "", "the shard exported from the session (thumbnails, video and shard figures)")
	f.StringVarP(&o.Output, "output", "o", "", "HTML file to write (required)")
	f.BoolVar(&o.Salvage, "salvage", false, "without --shard: read past journal corruption (with --shard the export's own setting applies)")
}

func newReportCmd(s streams) *cobra.Command {
	var opts ReportOptions
	cmd := &cobra.Command{
		Use:   "report SESSION_DIR [--shard SHARD_DIR] -o PAGE.html",
		Short: "Write a session's page (one self-contained HTML file)",
		Long: `Write the session page: a timeline of the run (attempts coloured by fate,
outcomes, resets, pauses, camera coverage and gaps, torn or salvaged journal
ranges), the sensor traces with the episode windows, a thumbnail strip per
episode and camera decoded from the exported video, the task specification
(recorded and applied, what a re-export changed) and the numbers. The file
holds its styles, charts (SVG) and pictures inline and opens from file://
with no network. Without --shard it shows what an export would take.

export writes the same page into every shard as ` + layout.SessionPagePath + `.` + reportExitStatus,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Session = args[0]
			return runReport(c.Context(), opts, s)
		},
	}
	opts.AddFlags(cmd)
	_ = cmd.MarkFlagRequired("output")
	return cmd
}

func runReport(ctx context.Context, opts ReportOptions, s streams) error {
	if err := page.CheckDestination(opts.Output, opts.Session, opts.Shard); err != nil {
		return withCode(exitstatus.UsageError, err)
	}
	var (
		r   *export.Result
		err error
	)
	if opts.Shard != "" {
		r, err = page.LoadShard(ctx, opts.Session, opts.Shard)
	} else {
		r, err = page.LoadSession(ctx, opts.Session, opts.Salvage)
	}
	if err != nil {
		return withCode(exitstatus.UsageError, err) // otherwise: an input that cannot be read
	}
	if err := page.WriteFile(opts.Output, func(w io.Writer) error { return page.WriteSession(ctx, w, r) }); err != nil {
		return withCode(exitstatus.WriteFailed, err)
	}
	st, err := os.Stat(opts.Output)
	if err != nil {
		return withCode(exitstatus.WriteFailed, err)
	}
	fmt.Fprintf(s.Out, "report %s (%d bytes)\n", opts.Output, st.Size())
	return nil
}

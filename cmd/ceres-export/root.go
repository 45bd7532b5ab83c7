package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/ceres-robotics/ceres-export/internal/video"
)

// Exit codes, shared by every subcommand and listed in README.md.
const (
	exitOK       = 0 // success
	exitFindings = 1 // the input was read and is not sound: spec violations, verify findings, a strictness switch tripped
	exitUsage    = 2 // usage error, or an input that cannot be read at all
	exitCorrupt  = 3 // the journal is corrupt (bad CRC mid-segment, segment gap, bad header)
	exitFailed   = 4 // the operation failed for another reason (I/O, encoder); nothing was replaced
)

// streams are the standard streams a command writes to; tests substitute
// buffers.
type streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer

	verbose *bool // set by the persistent --verbose flag
}

// Logger returns the structured logger for diagnostics on stderr: warnings by
// default, debug detail with --verbose.
func (s streams) Logger() *slog.Logger {
	level := slog.LevelWarn
	if s.verbose != nil && *s.verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(s.Err, &slog.HandlerOptions{Level: level}))
}

// codeError carries the exit code a failure maps to.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string { return e.err.Error() }
func (e *codeError) Unwrap() error { return e.err }

// withCode marks err with an exit code. A nil err stays nil.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &codeError{code: code, err: err}
}

// silentError is a failure whose message was already printed; only the exit
// code remains to report.
type silentError struct{ code int }

func (e *silentError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// Main runs the command line args and returns the process exit code.
func Main(ctx context.Context, args []string, s streams) int {
	root := newRootCmd(s)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return reportError(s.Err, err)
}

// reportError prints err (unless already printed) and maps it to an exit code.
func reportError(w io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	var silent *silentError
	if errors.As(err, &silent) {
		return silent.code
	}
	fmt.Fprintf(w, "ceres-export: %v\n", err)
	var ce *codeError
	if errors.As(err, &ce) {
		return ce.code
	}
	if errors.Is(err, context.Canceled) {
		return exitFailed
	}
	// Errors cobra returns before RunE (unknown flag, wrong arg count) are
	// usage errors.
	return exitUsage
}

func newRootCmd(s streams) *cobra.Command {
	s.verbose = new(bool)
	root := &cobra.Command{
		Use:           "ceres-export",
		Short:         "Export CERES capture sessions as LeRobot datasets",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(*cobra.Command, []string) {
			video.SetLibraryLogging(*s.verbose)
		},
	}
	root.PersistentFlags().BoolVarP(s.verbose, "verbose", "v", false, "log debug detail to stderr")
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.SetIn(s.In)
	root.AddCommand(
		newSpecCmd(s),
		newJournalCmd(s),
		newSynthCmd(s),
		newExportCmd(s),
		newVerifyCmd(s),
		newMergeCmd(s),
		newReportCmd(s),
		newBatchCmd(s),
	)
	return root
}

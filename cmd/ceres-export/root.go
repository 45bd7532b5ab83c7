package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/merge"
	"github.com/ceres-robotics/ceres-export/internal/output"
	"github.com/ceres-robotics/ceres-export/internal/profile"
	"github.com/ceres-robotics/ceres-export/internal/verify"
	"github.com/ceres-robotics/ceres-export/internal/video"
	"github.com/ceres-robotics/ceres-export/journal"
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
	if !errors.As(err, &silent) {
		fmt.Fprintf(w, "ceres-export: %v\n", err)
	}
	return exitCode(err)
}

// exitCode is the one mapping from a failure to an exit status, the same
// for every command: what went wrong decides, not which command met it. A
// code a command attached (withCode) counts only for failures this switch
// does not know.
func exitCode(err error) int {
	var (
		silent *silentError
		ce     *codeError
		ran    *runError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &silent):
		return silent.code
	case errors.Is(err, output.ErrDestinationExists), errors.Is(err, output.ErrDestinationRefused),
		errors.Is(err, merge.ErrUsage), errors.Is(err, merge.ErrMismatch), errors.Is(err, verify.ErrUnreadable),
		errors.Is(err, input.ErrNotRegular), errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission),
		errors.Is(err, syscall.ELOOP), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR),
		errors.Is(err, syscall.ENAMETOOLONG):
		// The caller's to fix: a usage error, an input that cannot be
		// read (also a session without journal/), a destination that may
		// not be written.
		return exitUsage
	case errors.Is(err, export.ErrStrict), errors.Is(err, export.ErrSpecMismatch), errors.Is(err, export.ErrNoEpisodes),
		errors.Is(err, journal.ErrInvalid), errors.Is(err, journal.ErrSpec), errors.Is(err, merge.ErrUnsound),
		errors.Is(err, profile.ErrMismatch):
		return exitFindings
	case errors.Is(err, journal.ErrCorrupt), errors.Is(err, journal.ErrSegmentGap), errors.Is(err, journal.ErrBadHeader):
		return exitCorrupt
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, output.ErrDestinationBusy):
		return exitFailed
	case errors.As(err, &ce):
		return ce.code
	case errors.As(err, &ran):
		return exitFailed
	}
	// Errors cobra returns before RunE (unknown flag, wrong arg count) are
	// usage errors.
	return exitUsage
}

// runError marks an error a command's RunE returned, as opposed to one
// cobra returned before running it.
type runError struct{ err error }

func (e *runError) Error() string { return e.err.Error() }
func (e *runError) Unwrap() error { return e.err }

// markRunErrors wraps the RunE of c and its subcommands so that their
// errors are runErrors.
func markRunErrors(c *cobra.Command) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if err := run(cmd, args); err != nil {
				return &runError{err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		markRunErrors(sub)
	}
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
	markRunErrors(root)
	return root
}

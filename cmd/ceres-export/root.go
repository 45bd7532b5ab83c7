package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ceres-robotics/ceres-export/internal/exitstatus"
	"github.com/ceres-robotics/ceres-export/internal/progress"
	"github.com/ceres-robotics/ceres-export/internal/suggest"
	"github.com/ceres-robotics/ceres-export/internal/version"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// streams are the standard streams a command writes to; tests substitute
// buffers.
type streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer

	verbose *bool // set by the persistent --verbose flag
	// every is the persistent --progress-every: the pace of progress lines
	// when stderr is not a terminal.
	every *time.Duration
}

func (s streams) progressEvery() time.Duration {
	if s.every == nil {
		return progress.DefaultEvery
	}
	return *s.every
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

// writeJSON writes v to stdout as one indented JSON document and a
// newline: every command's --json output. Its keys are snake_case, and
// messageType names it: it is the first key, message_type, of the
// document, or of each entry of a document that is an array
// (docs/development.md, "JSON documents"). Only a document that stdout
// cannot take fails, as an output that cannot be written.
func writeJSON(s streams, messageType string, v any) error {
	b, err := json.Marshal(v)
	if err == nil {
		b, err = typed(messageType, b)
	}
	var out bytes.Buffer
	if err == nil {
		err = json.Indent(&out, b, "", "  ")
	}
	if err != nil {
		return err
	}
	_, err = s.Out.Write(append(out.Bytes(), '\n'))
	return withCode(exitstatus.WriteFailed, err)
}

// typed puts "message_type": messageType first in the object doc, or in
// each object of the array doc.
func typed(messageType string, doc []byte) ([]byte, error) {
	if bytes.HasPrefix(doc, []byte("[")) {
		var entries []json.RawMessage
		if err := json.Unmarshal(doc, &entries); err != nil {
			return nil, err
		}
		for i, e := range entries {
			var err error
			if entries[i], err = typed(messageType, e); err != nil {
				return nil, err
			}
		}
		return json.Marshal(entries)
	}
	if !bytes.HasPrefix(doc, []byte("{")) || bytes.HasPrefix(doc, []byte(`{"message_type":`)) {
		return nil, fmt.Errorf("%s document %.40s: want objects that do not name their type themselves", messageType, doc)
	}
	head, _ := json.Marshal(messageType)
	head = append([]byte(`{"message_type":`), head...)
	if !bytes.Equal(doc, []byte("{}")) {
		head = append(head, ',')
	}
	return append(head, doc[1:]...), nil
}

// addJSONFlag registers --json, one flag on every command that has it:
// one document on stdout (writeJSON), the human text, if any, on stderr.
func addJSONFlag(cmd *cobra.Command, json *bool) {
	cmd.Flags().BoolVar(json, "json", false, "print one machine-readable JSON document on stdout")
}

// withCode classes err as c for the exit status (exitstatus.Mark): a
// failure only the command can class. A nil err stays nil.
func withCode(c exitstatus.Class, err error) error { return exitstatus.Mark(c, err) }

// Main runs the command line args and returns the process exit status.
func Main(ctx context.Context, args []string, s streams) int {
	root := newRootCmd(s)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	var ran *runError
	if err != nil && !errors.As(err, &ran) {
		// cobra's own errors, before any command ran: an unknown flag, a
		// wrong number of arguments.
		err = exitstatus.Mark(exitstatus.UsageError, err)
	}
	return printError(s.Err, exitstatus.Stopped(ctx, err))
}

// printError prints err (unless already printed) and returns its exit
// status (exitstatus.Of: the one mapping).
func printError(w io.Writer, err error) int {
	switch {
	case err == nil || exitstatus.WasPrinted(err):
	case errors.Is(err, context.Canceled):
		// The first SIGINT or SIGTERM cancels every command's context
		// (main): what the user did is say stop, and "context canceled",
		// wrapped in whatever was running, tells them nothing more.
		var sig *exitstatus.Signal
		if errors.As(err, &sig) {
			fmt.Fprintf(w, "ceres-export: interrupted (%v)\n", sig)
		} else {
			fmt.Fprintln(w, "ceres-export: interrupted")
		}
	default:
		fmt.Fprintf(w, "ceres-export: %v\n", err)
	}
	return int(exitstatus.Of(err))
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
	s.every = new(time.Duration)
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
	root.PersistentFlags().DurationVar(s.every, "progress-every", progress.DefaultEvery, "when stderr is not a terminal, print progress lines this often (0: none)")
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
		newVersionCmd(s),
	)
	// --version prints what the version command prints.
	root.Version = version.Tool()
	root.SetVersionTemplate(`{{with .Annotations}}{{.versionText}}{{end}}`)
	root.Annotations = map[string]string{"versionText": version.NewReport().Text()}
	markRunErrors(root)
	registerCompletions(root)
	root.SetFlagErrorFunc(suggestFlag)
	return root
}

// suggestFlag adds "did you mean" to an unknown flag's error, as cobra
// does for a mistyped command: the command's flags (its own and the
// inherited ones) within two edits of the one given, or starting with it.
func suggestFlag(c *cobra.Command, err error) error {
	const prefix = "unknown flag: --"
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return err
	}
	var names []string
	visit := func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	}
	c.LocalFlags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	near := suggest.Near(strings.TrimPrefix(msg, prefix), names)
	if len(near) == 0 {
		//lint:ignore ST1005 cobra prints this usage error as it is: a hint on a line of its own
		return fmt.Errorf("%w\nRun '%s --help' for its flags.", err, c.CommandPath())
	}
	return fmt.Errorf("%w\n\nDid you mean this?\n\t--%s", err, strings.Join(near, "\n\t--"))
}

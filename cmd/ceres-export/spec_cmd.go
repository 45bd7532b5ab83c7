package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ceres-robotics/ceres-export/internal/exitstatus"
	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

var specExitStatus = exitstatus.Help("every specification is valid (warnings do not count)",
	exitstatus.NotSound.As("a specification is invalid; every violation is printed on stderr"),
	exitstatus.UsageError, exitstatus.Unreadable.As("a file cannot be read (with several files the worst status wins)"))

func newSpecCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "spec",
		Short: "Validate, canonicalise and hash task specifications (version 1)",
		Long: `Validate, canonicalise and hash CERES task specifications (version 1).

FILE may be - for standard input.` + specExitStatus,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return withCode(exitstatus.UsageError, errors.New("spec: a subcommand is required: check, hash or canon"))
		},
	}
	cmd.AddCommand(newSpecCheckCmd(s), newSpecHashCmd(s), newSpecCanonCmd(s))
	return cmd
}

// SpecCheckOptions are the flags of `spec check`.
type SpecCheckOptions struct {
	Files []string // FILE...: "-" is standard input
	JSON  bool     // one JSON document on stdout instead of text
}

func newSpecCheckCmd(s streams) *cobra.Command {
	var opts SpecCheckOptions
	cmd := &cobra.Command{
		Use:   "check FILE...",
		Short: "Validate specifications and print their hashes",
		Long: `Validate each task specification FILE against the version 1 contract.

A valid file prints "FILE: valid, hash HASH" on stdout and its warnings on
stderr; an invalid file prints every violation on stderr, each prefixed with
the file name. With --json, stdout holds one JSON array of
{message_type: "spec_check", file, valid, hash, warnings, violations} (and
error for an unreadable file), and nothing is written to stderr.` + specExitStatus,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Files = args
			return runSpecCheck(c.Context(), opts, s)
		},
	}
	addJSONFlag(cmd, &opts.JSON)
	return cmd
}

func newSpecHashCmd(s streams) *cobra.Command {
	return newSpecPrintCmd(s, "hash", "Print the SHA-256 of a specification's canonical form",
		`Validate the task specification FILE and print the lowercase hexadecimal
SHA-256 of its canonical form (RFC 8785) alone on stdout. Warnings and
violations go to stderr.`,
		func(spec *taskspec.Spec) []byte { return []byte(spec.Hash() + "\n") })
}

func newSpecCanonCmd(s streams) *cobra.Command {
	return newSpecPrintCmd(s, "canon", "Print a specification's canonical JSON",
		`Validate the task specification FILE and write its canonical form
(RFC 8785 JSON of the normalised specification, the bytes that are hashed)
to stdout, with nothing before or after it. Warnings and violations go to
stderr.`,
		(*taskspec.Spec).Canonical)
}

// newSpecPrintCmd is a command that validates one FILE and prints what
// form makes of it.
func newSpecPrintCmd(s streams, name, short, long string, form func(*taskspec.Spec) []byte) *cobra.Command {
	return &cobra.Command{
		Use:   name + " FILE",
		Short: short,
		Long:  long + specExitStatus,
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			spec, err := specLoad(c.Context(), s, args[0])
			if err != nil {
				return err
			}
			_, err = s.Out.Write(form(spec))
			return withCode(exitstatus.WriteFailed, err)
		},
	}
}

// specLoad reads and parses one file for hash and canon, printing
// violations and warnings on stderr.
func specLoad(ctx context.Context, s streams, name string) (*taskspec.Spec, error) {
	data, err := specReadFile(ctx, s, name)
	if err != nil {
		return nil, withCode(exitstatus.UsageError, err)
	}
	r, spec := taskspec.CheckFile(name, data)
	_ = r.WriteText(io.Discard, s.Err)
	switch {
	case r.Error != "":
		return nil, withCode(exitstatus.WriteFailed, errors.New(r.Error))
	case !r.Valid:
		return nil, exitstatus.Printed(exitstatus.Findings)
	}
	return spec, nil
}

// specReadFile reads a named file, or standard input for "-".
func specReadFile(ctx context.Context, s streams, name string) ([]byte, error) {
	if name == "-" {
		if s.In == nil {
			return nil, errors.New("-: no standard input")
		}
		data, err := input.ReadAllContext(ctx, s.In)
		if err != nil {
			return nil, fmt.Errorf("-: %w", err)
		}
		return data, nil
	}
	// os.ReadFile's error already names the file.
	return input.ReadFile(name)
}

// runSpecCheck validates every file, printing results as it goes (or as
// one JSON document at the end), and returns the worst exit status as
// one whose messages are printed (exitstatus.Printed).
func runSpecCheck(ctx context.Context, opts SpecCheckOptions, s streams) error {
	worst := exitstatus.OK
	results := make([]taskspec.Check, 0, len(opts.Files))
	for _, name := range opts.Files {
		if err := ctx.Err(); err != nil {
			return withCode(exitstatus.WriteFailed, err)
		}
		r, code := specCheckFile(ctx, s, name)
		worst = max(worst, code)
		results = append(results, r)
		switch {
		case opts.JSON:
		case r.Error != "":
			fmt.Fprintf(s.Err, "ceres-export: spec check: %s\n", r.Error)
		default:
			_ = r.WriteText(s.Out, s.Err)
		}
	}
	if opts.JSON {
		if err := writeJSON(s, "spec_check", results); err != nil {
			return err
		}
	}
	if worst != exitstatus.OK {
		return exitstatus.Printed(worst)
	}
	return nil
}

// specCheckFile checks one file and returns its result and exit code.
func specCheckFile(ctx context.Context, s streams, name string) (taskspec.Check, exitstatus.Status) {
	data, err := specReadFile(ctx, s, name)
	if err != nil {
		return taskspec.UnreadableCheck(name, err), exitstatus.Of(exitstatus.Stopped(ctx, err))
	}
	switch r, _ := taskspec.CheckFile(name, data); {
	case r.Error != "":
		return r, exitstatus.Failed
	case !r.Valid:
		return r, exitstatus.Findings
	default:
		return r, exitstatus.OK
	}
}

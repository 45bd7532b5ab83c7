package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ceres-robotics/ceres-export/internal/version"
)

// VersionOptions are the flags of `ceres-export version`.
type VersionOptions struct {
	JSON bool
}

func newVersionCmd(s streams) *cobra.Command {
	var opts VersionOptions
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version, the FFmpeg libraries and the encoders this binary runs with",
		Long: `Print the exporter's version (the one every report, dataset card and
campaign record carries), the Go toolchain, how the binary is linked
("static" for the release binaries, which carry FFmpeg, its codec
libraries and the C library inside; otherwise the shared libraries it
needs), the versions of the FFmpeg and codec libraries it runs with, and
which of the encoders export uses (libsvtav1 for --vcodec av1, libx264 for
h264) this FFmpeg has.
ceres-export --version prints the same.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return runVersion(opts, s) },
	}
	addJSONFlag(c, &opts.JSON)
	return c
}

func runVersion(opts VersionOptions, s streams) error {
	r := version.NewReport()
	if opts.JSON {
		return writeJSON(s, "version", r)
	}
	_, err := fmt.Fprint(s.Out, r.Text())
	return err
}

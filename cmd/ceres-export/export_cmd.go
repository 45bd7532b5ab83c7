package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// TEMPORARY placeholder until the owning issue lands; replaced wholesale.
func newExportCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:    "export",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return withCode(exitFailed, errors.New("export: not built yet"))
		},
	}
}

package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// TEMPORARY placeholder until the owning issue lands; replaced wholesale.
func newVerifyCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:    "verify",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return withCode(exitFailed, errors.New("verify: not built yet"))
		},
	}
}

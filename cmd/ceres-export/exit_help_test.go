package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every flag a command's EXIT STATUS section names (the help a user reads
// to tell why the command failed) is a flag of that command: a list built
// from the shared table (internal/exitstatus) must not promise a failure,
// or a cure, through a flag the command does not have.
func TestExitStatusNamesOnlyOwnFlags(t *testing.T) {
	root := newRootCmd(streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
	flagRe := regexp.MustCompile(`(?:^|[^\w-])--([a-z][a-z0-9-]*)`)
	var walk func(c *cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		if _, section, ok := strings.Cut(c.Long, "\nEXIT STATUS\n"); ok {
			checked++
			for _, m := range flagRe.FindAllStringSubmatch(section, -1) {
				if c.Flags().Lookup(m[1]) == nil && c.InheritedFlags().Lookup(m[1]) == nil {
					t.Errorf("%s --help: its exit status names --%s, which it has no flag of:\n%s", c.CommandPath(), m[1], section)
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if checked < 10 {
		t.Errorf("%d commands have an EXIT STATUS section; want every command's", checked)
	}
}

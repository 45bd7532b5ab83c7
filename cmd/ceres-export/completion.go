package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ceres-robotics/ceres-export/internal/shard"
)

// flagCompletions says how the shell completes each flag's value, by flag
// name, on every command that has the flag: a fixed list of values (each
// "value\tdescription"), or files of some extensions. TestFlagCompletions
// runs every listed value through the flag's own parser, so the list
// cannot drift from what the commands accept. `ceres-export completion
// bash|zsh|fish|powershell` writes the script (cobra's).
type flagCompletion struct {
	values []string
	exts   []string // file extensions, without the dot
}

func flagCompletions() map[string]flagCompletion {
	return map[string]flagCompletion{
		"vcodec":    {values: []string{"av1\tSVT-AV1, LeRobot's default", "h264\tlibx264, no B-frames"}},
		"quantiles": {values: []string{"weighted-mean\twhat LeRobot 0.4.4 and 0.6.1 compute", "envelope\tmin for q<=50, max above"}},
		"privacy":   {values: []string{"full\teverything (the default)", "metadata-only\ta dataset that may leave the lab"}},
		"profile":   {exts: []string{"yaml", "yml", "json"}},
		"task-spec": {exts: []string{"json"}},
		"license":   {values: shard.Licenses},
	}
}

// registerCompletions registers flagCompletions on c and its subcommands.
func registerCompletions(c *cobra.Command) {
	table := flagCompletions()
	c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		fc, ok := table[f.Name]
		if !ok {
			return
		}
		_ = c.RegisterFlagCompletionFunc(f.Name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			if len(fc.exts) > 0 {
				return fc.exts, cobra.ShellCompDirectiveFilterFileExt
			}
			return fc.values, cobra.ShellCompDirectiveNoFileComp
		})
	})
	for _, sub := range c.Commands() {
		registerCompletions(sub)
	}
}

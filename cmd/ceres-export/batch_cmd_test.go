package main

import (
	"bytes"
	"testing"

	"github.com/spf13/pflag"

	"github.com/ceres-robotics/ceres-export/internal/export"
)

// The export command's flags and a manifest's export options are one list:
// every export.Settings field has its flag, named as the manifest's key
// with "_" written "-".
func TestExportFlagsAreSettings(t *testing.T) {
	cmd := newExportCmd(streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
	for _, name := range export.SettingNames() {
		if cmd.Flags().Lookup(export.FlagName(name)) == nil {
			t.Errorf("setting %s has no flag --%s", name, export.FlagName(name))
		}
	}
	// salt is the command's own: a setting is recorded, a salt never is.
	own := map[string]bool{"output": true, "replace": true, "salt": true, "json": true, "quiet": true, "help": true}
	settings := map[string]bool{}
	for _, name := range export.SettingNames() {
		settings[export.FlagName(name)] = true
	}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !own[f.Name] && !settings[f.Name] {
			t.Errorf("flag --%s is neither the command's own nor a setting", f.Name)
		}
	})
}

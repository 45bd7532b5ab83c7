package main

import (
	"bytes"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/settings"
	"github.com/spf13/pflag"
)

// The export command's flags and a manifest's export options are one list:
// every settings.Settings field has its flag, named as the manifest's key
// with "_" written "-".
func TestExportFlagsAreSettings(t *testing.T) {
	cmd := newExportCmd(streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
	for _, name := range settings.SettingNames() {
		if cmd.Flags().Lookup(settings.FlagName(name)) == nil {
			t.Errorf("setting %s has no flag --%s", name, settings.FlagName(name))
		}
	}
	// salt is the command's own: a setting is recorded, a salt never is.
	own := map[string]bool{"output": true, "replace": true, "salt": true, "json": true, "quiet": true, "help": true, "follow": true, "follow-idle": true}
	setting := map[string]bool{}
	for _, name := range settings.SettingNames() {
		setting[settings.FlagName(name)] = true
	}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !own[f.Name] && !setting[f.Name] {
			t.Errorf("flag --%s is neither the command's own nor a setting", f.Name)
		}
	})
}

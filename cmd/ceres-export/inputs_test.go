package main

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// inputKinds says what each string flag ("export --profile") and each
// positional argument of every command is: "file" or "dir" (read; the
// end-to-end FIFO test, e2e.TestE2EFIFOEveryInput, plants a named pipe
// there), "output" (written) or "value" (not a path). It lives in
// testdata/inputs.json, which that test reads too.
type inputKinds struct {
	Flags      map[string]string   `json:"flags"`
	Positional map[string][]string `json:"positional"`
}

// A new flag or command that is in neither table fails this test, so the
// next new input cannot go untested; an entry naming no flag or command
// fails it too.
func TestEveryInputHasAKind(t *testing.T) {
	b, err := os.ReadFile("testdata/inputs.json")
	if err != nil {
		t.Fatal(err)
	}
	var kinds inputKinds
	if err := json.Unmarshal(b, &kinds); err != nil {
		t.Fatalf("testdata/inputs.json: %v", err)
	}
	known := []string{"file", "dir", "output", "value"}
	seen := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), "ceres-export ")
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			key := path + " --" + fl.Name
			seen[key] = true
			switch fl.Value.Type() {
			case "string", "stringArray", "stringSlice":
			default:
				return
			}
			if kind, ok := kinds.Flags[key]; !ok {
				t.Errorf("flag %s: say in testdata/inputs.json (flags) whether it is a file, a directory, an output or a value", key)
			} else if !slices.Contains(known, kind) {
				t.Errorf("flag %s: kind %q, want one of %v", key, kind, known)
			}
		})
		if c.Runnable() && c != c.Root() {
			seen[path] = true
			if _, ok := kinds.Positional[path]; !ok {
				t.Errorf("command %s: say in testdata/inputs.json (positional) what its arguments are", path)
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRootCmd(streams{}))
	for key := range kinds.Flags {
		if !seen[key] {
			t.Errorf("testdata/inputs.json names flag %s, which no command has", key)
		}
	}
	for path, args := range kinds.Positional {
		if !seen[path] {
			t.Errorf("testdata/inputs.json names command %s, which is not a runnable command", path)
		}
		for _, kind := range args {
			if !slices.Contains(known, kind) {
				t.Errorf("command %s: argument kind %q, want one of %v", path, kind, known)
			}
		}
	}
}

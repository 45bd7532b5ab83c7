package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitStatusOfCLIErrors: cobra's own errors, before any command runs,
// are usage errors; a command's error goes through exitstatus.Of.
func TestExitStatusOfCLIErrors(t *testing.T) {
	var out, errb bytes.Buffer
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"export", "--nope"}, exitUsage},
		{[]string{"verify"}, exitUsage},
		{[]string{"journal", "inspect", filepath.Join(t.TempDir(), "missing")}, exitUsage},
	} {
		if got := Main(context.Background(), c.args, streams{In: strings.NewReader(""), Out: &out, Err: &errb}); got != c.want {
			t.Errorf("%v: exit %d, want %d (%s)", c.args, got, c.want, errb.String())
		}
	}
}

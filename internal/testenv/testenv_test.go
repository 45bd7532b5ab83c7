package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// TestNoSkipFails runs a test that misses a tool in a child process, with
// and without CERES_TEST_NO_SKIP=1: skipped without, failed with.
func TestNoSkipFails(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		Tool(t, "ceres-no-such-program", "", "it does not exist")
		return
	}
	for _, c := range []struct {
		noSkip string
		fail   bool
	}{{"", false}, {"1", true}} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestNoSkipFails$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", NoSkipVar+"="+c.noSkip)
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != c.fail {
			t.Errorf("%s=%q: failed %v, want %v\n%s", NoSkipVar, c.noSkip, failed, c.fail, out)
		}
	}
}

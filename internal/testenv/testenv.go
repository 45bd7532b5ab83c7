// Package testenv says, in one place, what a test needs of the machine
// beyond Go: an external program (chromium, node, the ffmpeg command line,
// a SLURM cluster), the FFmpeg libraries, a LeRobot venv. A test whose need
// is not met is skipped with the reason, and fails instead when
// CERES_TEST_NO_SKIP=1 (set by .ci/run), as restic's
// RESTIC_TEST_DISALLOW_SKIP does: a CI run that lost its browser or its
// cluster is red, not silently green. -short (make check) skips the tests
// that need a tool, even one that is there: that lane is for the tests
// that need nothing.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// NoSkipVar is the environment variable that turns a missing tool into a
// failure.
const NoSkipVar = "CERES_TEST_NO_SKIP"

// NoSkip reports whether a missing tool fails the test.
func NoSkip() bool { return os.Getenv(NoSkipVar) == "1" }

// Missing ends tb because what it needs is missing: a skip, or with
// CERES_TEST_NO_SKIP=1 a failure.
func Missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if NoSkip() {
		tb.Fatalf("%s=1, and this test cannot run: %s", NoSkipVar, msg)
	}
	tb.Skip(msg)
}

// Tool returns the path of program on PATH (or of the value of env, when
// env names a set variable), ending tb with Missing when there is none.
// install says how to get it. In -short mode tb is skipped even when the
// program is there (make check runs no external tool).
func Tool(tb testing.TB, program, env, install string) string {
	tb.Helper()
	if testing.Short() {
		tb.Skipf("-short: needs %s", program)
	}
	if env != "" {
		if p := os.Getenv(env); p != "" {
			return p
		}
	}
	p, err := exec.LookPath(program)
	if err != nil {
		Missing(tb, "%s is not installed (%s)", program, install)
	}
	return p
}

// Short skips tb in -short mode, the make check lane, saying what it needs
// (the encoder, a long run): a test that make test runs in full.
func Short(tb testing.TB, needs string) {
	tb.Helper()
	if testing.Short() {
		tb.Skipf("-short: needs %s", needs)
	}
}

// Sampled reports whether an exhaustive test over byte offsets tries off:
// every offset in make test; in -short mode (make check) every n-th, and
// those at and just before each of keep (the boundaries where the expected
// outcome changes), so the fast lane still meets every kind of place the
// full run covers.
func Sampled(off int64, n int, keep []int64) bool {
	if !testing.Short() || off%int64(n) == 0 {
		return true
	}
	for _, k := range keep {
		if off == k || off == k-1 {
			return true
		}
	}
	return false
}

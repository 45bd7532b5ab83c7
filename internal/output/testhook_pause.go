//go:build ceres_testhooks

package output

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// With CERES_TEST_PAUSE_STAGED=1, a binary built with the ceres_testhooks
// tag (the end-to-end tests' build, never a release) waits, once a staging
// directory is ready, for SIGTERM or SIGINT (or a minute): a test that
// signals a command at work then knows the work was not done before the
// signal arrived. The channel is registered at start-up, so a signal that
// comes before the staging directory is kept, not lost; the command's own
// handler receives it as well and stops the work.
func init() {
	if os.Getenv("CERES_TEST_PAUSE_STAGED") != "1" {
		return
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	testHookStaged = func() {
		select {
		case <-sig:
		case <-time.After(time.Minute):
		}
	}
}

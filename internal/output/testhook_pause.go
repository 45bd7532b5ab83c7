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
// directory is ready, for SIGTERM or SIGINT (or a minute from its start): a test that
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
	// One signal ends every pause: a command that stages again while it
	// stops (a campaign's attempt record) must not wait a minute more.
	stopped := make(chan struct{})
	go func() {
		select {
		case <-sig:
		case <-time.After(time.Minute):
		}
		close(stopped)
	}()
	testHookStaged = func() { <-stopped }
}

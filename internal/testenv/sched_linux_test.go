//go:build linux

package testenv

import (
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRealtimeThreadsSeesARealtimeProcess proves the probe can fail the
// tests that use it: a child moved to SCHED_FIFO is reported, one left
// normal is not.
func TestRealtimeThreadsSeesARealtimeProcess(t *testing.T) {
	if !MayRaisePriority() {
		t.Skip("this process may not raise priorities (not root): no realtime process to look at")
	}
	for _, c := range []struct {
		name     string
		realtime bool
	}{{"normal", false}, {"fifo", true}} {
		t.Run(c.name, func(t *testing.T) {
			child := exec.Command("sleep", "30")
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
			pid := child.Process.Pid
			if c.realtime {
				if err := unix.SchedSetAttr(pid, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: 1}, 0); err != nil {
					t.Fatalf("SCHED_FIFO for pid %d: %v", pid, err)
				}
			}
			rt, err := RealtimeThreads(pid)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(rt) > 0; got != c.realtime {
				t.Errorf("pid %d: realtime threads %v (%s), want realtime %v", pid, got, DescribeThreads(rt), c.realtime)
			}
			if c.realtime && rt[pid] != unix.SCHED_FIFO {
				t.Errorf("pid %d: policy %d, want SCHED_FIFO (%d)", pid, rt[pid], unix.SCHED_FIFO)
			}
		})
	}
}

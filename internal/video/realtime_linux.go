//go:build linux

package video

import (
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// SVT-AV1 asks for realtime scheduling whenever the kernel grants it (as
// root): its encoder init sets the thread that opens it to SCHED_FIFO
// priority 99, and it creates its worker threads SCHED_FIFO 99, falling
// back to normal threads only when that fails with EPERM. The opening
// thread is a Go runtime thread: back from the call it runs any goroutine,
// and threads it starts inherit the policy. A realtime thread spinning in
// the runtime (the background sweeper yielding to itself while the GC
// waits for a normal thread) is never preempted by the thread it waits
// for, and two such processes on two cores stalled each other for minutes
// (realtime throttling leaves the rest 5 % of each second); an encoder at
// priority 99 also starves every other job of a shared machine. So encoders
// open on a thread that may not raise priorities: CAP_SYS_NICE out of its
// effective set for the call (a per-thread set, restored after), and the
// process's RLIMIT_RTPRIO at 0 (the unprivileged way to realtime).

var rtprioOnce sync.Once

// withNormalScheduling runs open, the call that opens an encoder, so that
// neither the calling thread nor any thread the encoder creates comes out
// with a realtime policy.
func withNormalScheduling(open func() error) error {
	rtprioOnce.Do(func() {
		var lim unix.Rlimit
		if unix.Getrlimit(unix.RLIMIT_RTPRIO, &lim) == nil && lim.Cur != 0 {
			lim.Cur = 0
			_ = unix.Setrlimit(unix.RLIMIT_RTPRIO, &lim)
		}
	})
	runtime.LockOSThread()
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var held [2]unix.CapUserData
	dropped := false
	if unix.Capget(&hdr, &held[0]) == nil && held[0].Effective&(1<<unix.CAP_SYS_NICE) != 0 {
		without := held
		without[0].Effective &^= 1 << unix.CAP_SYS_NICE
		dropped = unix.Capset(&hdr, &without[0]) == nil
	}
	err := open()
	// Whatever way it got there, this thread does not stay realtime.
	if attr, gerr := unix.SchedGetAttr(0, 0); gerr == nil && attr.Policy != unix.SCHED_NORMAL &&
		attr.Policy != unix.SCHED_BATCH && attr.Policy != unix.SCHED_IDLE {
		_ = unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_NORMAL, Nice: attr.Nice}, 0)
	}
	if dropped && unix.Capset(&hdr, &held[0]) != nil {
		// The thread keeps the reduced set: leave it locked, so that it
		// ends with this goroutine instead of serving others.
		return err
	}
	runtime.UnlockOSThread()
	return err
}

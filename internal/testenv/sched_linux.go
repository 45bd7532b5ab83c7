//go:build linux

package testenv

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// RealtimeThreads lists the threads of process pid that run under a
// realtime scheduling policy (SCHED_FIFO, SCHED_RR, SCHED_DEADLINE), by
// thread id. SVT-AV1 asks for SCHED_FIFO whenever the kernel grants it, and
// a Go runtime thread left realtime stalls the process and its neighbours
// (docs/video.md): the tests of that guard look for such threads, in the
// test's own process and in the binaries they run.
func RealtimeThreads(pid int) (map[int]uint32, error) {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, err
	}
	rt := map[int]uint32{}
	for _, e := range entries {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		attr, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			continue // the thread has ended since the listing
		}
		switch attr.Policy {
		case unix.SCHED_FIFO, unix.SCHED_RR, unix.SCHED_DEADLINE:
			rt[tid] = attr.Policy
		}
	}
	return rt, nil
}

// DescribeThreads names up to four of the threads, with their policies,
// for a failure message.
func DescribeThreads(rt map[int]uint32) string {
	var b strings.Builder
	for _, tid := range slices.Sorted(maps.Keys(rt))[:min(4, len(rt))] {
		fmt.Fprintf(&b, "tid %d policy %d, ", tid, rt[tid])
	}
	return strings.TrimSuffix(b.String(), ", ")
}

// MayRaisePriority reports whether the calling thread may raise scheduling
// priorities (CAP_SYS_NICE in its effective set, as root): the condition
// under which realtime requests succeed, and so under which a test of the
// guard against them can fail.
func MayRaisePriority() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var caps [2]unix.CapUserData
	if unix.Capget(&hdr, &caps[0]) != nil {
		return false
	}
	return caps[0].Effective&(1<<unix.CAP_SYS_NICE) != 0
}

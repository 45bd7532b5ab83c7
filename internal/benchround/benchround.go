// Package benchround holds what the project's benchmarks share to compare a
// stage with its reference in the same run: the rounds' times and the
// process's CPU time.
package benchround

import (
	"syscall"
	"testing"
	"time"
)

// ProcessCPU returns the CPU time (user and system) this process has used.
func ProcessCPU(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Times accumulates the durations of benchmark rounds: the fastest, the
// total and the count.
type Times struct {
	Min, Total time.Duration
	N          int
}

// Add records one round.
func (r *Times) Add(d time.Duration) {
	if r.N == 0 || d < r.Min {
		r.Min = d
	}
	r.Total += d
	r.N++
}

// Package benchround holds what the project's benchmarks share to compare a
// stage with its reference in the same run: the rounds' times, the
// process's CPU time, and the reference writer itself.
package benchround

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
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

// WriteParquetGo is the rows stages' reference: parquet-go's GenericWriter
// (its fastest generic path, compiled struct deconstruction) writes each
// group of rows as one row group with opts, then the file is fsynced, as the
// DataWriter does.
func WriteParquetGo[T any](tb testing.TB, path string, groups [][]T, opts ...parquet.WriterOption) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := parquet.NewGenericWriter[T](f, opts...)
	for _, rows := range groups {
		if _, err := w.Write(rows); err != nil {
			tb.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

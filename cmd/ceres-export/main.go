// Command ceres-export turns CERES demonstration-capture sessions into
// LeRobot datasets. It is a thin CLI: one file per subcommand parses its
// flags, calls the library packages (export wires journal → plan → shard
// and video; batch, merge, verify and page sit above it) and prints; the
// exit status of a failure is internal/exitstatus's, and every dataset path
// internal/layout's.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/ceres-robotics/ceres-export/internal/exitstatus"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// largeAllocation is the size from which C allocations get a mapping of
// their own: glibc's default starting threshold, held fixed.
const largeAllocation = 128 << 10

func main() {
	// The exporter streams: its live heap stays small (a few MB) whatever
	// the session's length, and a tighter GC target keeps the process's
	// footprint flat instead of letting the heap double between cycles.
	debug.SetGCPercent(50)
	// Likewise for the C heap: FFmpeg's growing MP4 index must not leave
	// holes behind in it (see video.MapLargeAllocations).
	video.MapLargeAllocations(largeAllocation)
	// The first SIGINT or SIGTERM cancels ctx with the signal as its
	// cause: every command stops, removes its staging and exits 128 + the
	// signal's number (exitstatus.Stopped). A second one kills at once
	// (the next run removes what that leaves behind).
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		signal.Stop(sigs)
		cancel(&exitstatus.Signal{Signal: sig.(syscall.Signal)})
	}()
	code := Main(ctx, os.Args[1:], streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	signal.Stop(sigs)
	os.Exit(code)
}

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
	// The first SIGINT or SIGTERM cancels ctx: every command stops, removes
	// its staging and exits 4. A second one kills at once (the next run
	// removes what that leaves behind).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := Main(ctx, os.Args[1:], streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}

//go:build linux

package video

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/asticode/go-astiav"

	"github.com/ceres-robotics/ceres-export/internal/testenv"
)

// realtimeThreads lists this process's realtime threads.
func realtimeThreads(t *testing.T) map[int]uint32 {
	t.Helper()
	rt, err := testenv.RealtimeThreads(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// SVT-AV1 sets the thread that opens it, and the worker threads it creates,
// to SCHED_FIFO priority 99 whenever the kernel lets it (root). The opening
// thread is a Go runtime thread that goes back to running goroutines: a
// realtime thread spinning in the runtime starves the normal threads it
// waits for (two batches at once stalled each other for minutes). No thread of the process may come out realtime, while the
// encoder runs (its workers) or after (the opener), with libx264 too, and
// opening restores the opener's right to raise priorities.
func TestEncoderThreadsStayNormal(t *testing.T) {
	if !testenv.MayRaisePriority() {
		t.Log("this process may not raise priorities (not root): the check below holds trivially")
	}
	before := testenv.MayRaisePriority()
	for _, c := range []struct {
		encoder string
		options map[string]string
	}{
		{EncoderSVTAV1, mustCodecOptions(t, EncoderOptions{})},
		{EncoderSVTAV1, mustCodecOptions(t, EncoderOptions{Threads: 2})},
		{EncoderX264, mustCodecOptions(t, EncoderOptions{Codec: EncoderX264})},
	} {
		t.Run(c.encoder, func(t *testing.T) {
			spec := encoderSpec{
				encoder: c.encoder, format: "mp4", width: 64, height: 64,
				timeBase: astiav.NewRational(1, 30), frameRate: astiav.NewRational(30, 1),
				options: c.options, packetDuration: 1,
			}
			// Several encoders at once, as camera jobs open them.
			var outs []*outputFile
			for i := range 3 {
				o, err := openOutput(filepath.Join(t.TempDir(), strconv.Itoa(i)+".mp4"), spec)
				if err != nil {
					t.Fatal(err)
				}
				outs = append(outs, o)
			}
			if rt := realtimeThreads(t); len(rt) > 0 {
				t.Errorf("with %d %s encoders open, %d realtime threads: %s", len(outs), c.encoder, len(rt), testenv.DescribeThreads(rt))
			}
			for _, o := range outs {
				o.free()
			}
			if rt := realtimeThreads(t); len(rt) > 0 {
				t.Errorf("after the %s encoders closed, %d realtime threads: %s", c.encoder, len(rt), testenv.DescribeThreads(rt))
			}
		})
	}
	if after := testenv.MayRaisePriority(); after != before {
		t.Errorf("CAP_SYS_NICE on the test's thread: %v before, %v after", before, after)
	}
}

func mustCodecOptions(t *testing.T, o EncoderOptions) map[string]string {
	t.Helper()
	n, err := o.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	return codecOptions(n)
}

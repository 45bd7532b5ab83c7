package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ceres-robotics/ceres-export/internal/testenv"
	"github.com/ceres-robotics/ceres-export/internal/testtree"
)

// TestE2EExportBytesIndependentOfCPUs exports one session on one CPU
// (taskset), with GOMAXPROCS=1, on every CPU, and on every CPU while each
// is kept busy, and wants the same shard byte for byte every time: a
// campaign's tasks land on nodes with any number of CPUs allowed to them,
// and a shard must not say which. An encoder or decoder that sizes its
// thread pool from the CPUs it may run on (x264's and FFmpeg's "auto")
// fails it: x264 codes frames differently with another thread count, and a
// frame-threaded decoder reports the damage of a file cut short elsewhere
// (and, while its drain stopped there, yielded fewer of its frames).
func TestE2EExportBytesIndependentOfCPUs(t *testing.T) {
	taskset := testenv.Tool(t, "taskset", "", "util-linux")
	var cpus unix.CPUSet
	if err := unix.SchedGetaffinity(0, &cpus); err != nil {
		t.Fatal(err)
	}
	if cpus.Count() < 2 {
		testenv.Missing(t, "needs at least 2 CPUs to compare with 1, has %d", cpus.Count())
	}
	first := -1
	for i := 0; first < 0; i++ {
		if cpus.IsSet(i) {
			first = i
		}
	}
	cases := []struct {
		name   string
		synth  []string
		vcodec string
	}{
		// The encoders' threads: sources every decoder reads alike.
		{"h264 from vp8", nil, "h264"},
		{"av1 from vp8", nil, "av1"},
		// The decoder's threads: an H.264 camera file (B-frames, so frame
		// threads hold frames back) whose last packet is cut short.
		{"h264 from a cut h264 camera", []string{"--camera-codec", "h264", "--fault", "cut-camera"}, "h264"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			session := filepath.Join(t.TempDir(), "session")
			mustRun(t, append([]string{"synth", "-o", session, "--time-scale", "0.1", "--width", "128", "--height", "96"}, c.synth...)...)
			export := func(name string, wrap []string, env []string, load bool) map[string][]byte {
				t.Helper()
				out := filepath.Join(t.TempDir(), name)
				args := append(wrap, ceresBinary, "export", session, "-o", out, "-q", "--vcodec", c.vcodec)
				ctx, cancel := context.WithTimeout(context.Background(), commandLimit)
				defer cancel()
				cmd := exec.CommandContext(ctx, args[0], args[1:]...)
				cmd.Env = append(os.Environ(), env...)
				var stop atomic.Bool
				var wg sync.WaitGroup
				if load {
					// Keep every CPU busy for the whole export: each
					// goroutine spins until the export has ended.
					for range runtime.NumCPU() {
						wg.Go(func() {
							for spins := 0; !stop.Load(); spins++ {
							}
						})
					}
				}
				b, err := cmd.CombinedOutput()
				stop.Store(true)
				wg.Wait()
				if err != nil {
					t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, b)
				}
				return testtree.Files(t, out)
			}
			all := export("all-cpus", nil, nil, false)
			for _, v := range []struct {
				name string
				wrap []string
				env  []string
				load bool
			}{
				{"one CPU (taskset)", []string{taskset, "-c", strconv.Itoa(first)}, nil, false},
				{"GOMAXPROCS=1", nil, []string{"GOMAXPROCS=1"}, false},
				{"every CPU busy", nil, nil, true},
			} {
				got := export(strings.NewReplacer(" ", "-", "(", "", ")", "", "=", "-").Replace(v.name), v.wrap, v.env, v.load)
				if files := testtree.Differing(got, all); len(files) > 0 {
					t.Errorf("exported with %s: %s differ from the export on all %d CPUs", v.name, strings.Join(files, ", "), cpus.Count())
				}
			}
		})
	}
}

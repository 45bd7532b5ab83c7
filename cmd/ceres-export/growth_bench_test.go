package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// timedPeak runs the binary under GNU time and returns its wall time and
// peak resident set (the merge's FFmpeg memory is C memory, which Go's
// own statistics do not see).
func timedPeak(b *testing.B, args ...string) (time.Duration, int64) {
	b.Helper()
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", ceresBinary}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("ceres-export %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	took := time.Since(start)
	lines := strings.Fields(stderr.String())
	kib, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	if err != nil {
		b.Fatalf("/usr/bin/time printed %q", stderr.String())
	}
	return took, kib << 10
}

// growthShards exports n small shards (one camera, a few seconds, as a
// short take of a lab's week is), two at a time, under dir.
func growthShards(b *testing.B, dir string, n int) []string {
	b.Helper()
	shards := make([]string, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			session := filepath.Join(dir, fmt.Sprintf("session-%03d", i))
			shards[i] = filepath.Join(dir, fmt.Sprintf("shard-%03d", i))
			if _, stderr, err := runCmd("synth", "-o", session, "--seed", strconv.Itoa(1000+i), "--time-scale", "0.05", "--cycles", "1",
				"--cameras", "1", "--width", "64", "--height", "48"); err != nil {
				errs[i] = fmt.Errorf("synth: %v\n%s", err, stderr)
				return
			}
			if _, stderr, err := runCmd("export", session, "-o", shards[i], "--vcodec", "h264", "--no-report", "--quiet"); err != nil {
				errs[i] = fmt.Errorf("export: %v\n%s", err, stderr)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return shards
}

// BenchmarkMergeGrowth: a merge's cost as the shard count grows to a lab's
// week. Goals (docs/benchmarks.md, "Merge at scale"), each a ratio in one
// run: per-shard time of merging 256 shards at most 1.25 × that of 8; the
// 256-shard merge at most 5 × cp -r + sync of the same bytes; its peak
// memory at most 1.5 × the 8-shard merge's; appending one shard to the
// 256-shard dataset (merge --into) at most 2 × merging two shards.
func BenchmarkMergeGrowth(b *testing.B) {
	const small, large = 8, 256
	dir := b.TempDir()
	shards := growthShards(b, dir, large+1)
	extra, shards := shards[large], shards[:large]
	var bytes int64
	for _, s := range shards {
		bytes += dirBytes(b, s)
	}
	merge := func(out string, srcs []string, extraArgs ...string) (time.Duration, int64) {
		_ = os.RemoveAll(out)
		args := append(append([]string{"merge"}, srcs...), "-o", out)
		return timedPeak(b, append(args, extraArgs...)...)
	}
	best := func(rounds int, f func() (time.Duration, int64)) (time.Duration, int64) {
		var t time.Duration
		var peak int64
		for r := range rounds {
			d, p := f()
			if r == 0 || d < t {
				t = d
			}
			peak = max(peak, p)
		}
		return t, peak
	}
	b.ResetTimer()
	for range b.N {
		t2, _ := best(3, func() (time.Duration, int64) { return merge(filepath.Join(dir, "m2"), shards[:2]) })
		t8, peak8 := best(3, func() (time.Duration, int64) { return merge(filepath.Join(dir, "m8"), shards[:small]) })
		largeDir := filepath.Join(dir, "m256")
		t256, peak256 := best(2, func() (time.Duration, int64) { return merge(largeDir, shards) })
		cp, _ := best(2, func() (time.Duration, int64) {
			dst := filepath.Join(dir, "cp")
			_ = os.RemoveAll(dst)
			if err := os.MkdirAll(dst, 0o755); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			args := append(append([]string{"-c", `cp -r "$@" && sync -f "$0"`, dst}, shards...), dst)
			if out, err := exec.Command("sh", args...).CombinedOutput(); err != nil {
				b.Fatalf("cp+sync: %v %s", err, out)
			}
			return time.Since(start), 0
		})
		into, _ := best(2, func() (time.Duration, int64) {
			out := filepath.Join(dir, "into")
			_ = os.RemoveAll(out)
			if out, err := exec.Command("cp", "-a", largeDir, out).CombinedOutput(); err != nil {
				b.Fatalf("cp: %v %s", err, out)
			}
			return timedPeak(b, "merge", extra, "--into", out)
		})
		b.ReportMetric(float64(bytes)/(1<<20), "MiB_256_shards")
		b.ReportMetric(t2.Seconds(), "s_merge_2")
		b.ReportMetric(t8.Seconds(), "s_merge_8")
		b.ReportMetric(t256.Seconds(), "s_merge_256")
		b.ReportMetric(cp.Seconds(), "s_cp_sync_256")
		b.ReportMetric(into.Seconds(), "s_merge_into_256")
		b.ReportMetric(float64(peak8)/(1<<20), "MiB_peak_merge_8")
		b.ReportMetric(float64(peak256)/(1<<20), "MiB_peak_merge_256")
		b.ReportMetric((t256.Seconds()/large)/(t8.Seconds()/small), "ratio_merge_per_shard_256_vs_8")
		b.ReportMetric(t256.Seconds()/cp.Seconds(), "ratio_merge_256_vs_cp_sync")
		b.ReportMetric(float64(peak256)/float64(peak8), "ratio_peak_mem_merge_256_vs_8")
		b.ReportMetric(into.Seconds()/t2.Seconds(), "ratio_merge_into_256_vs_merge_2")
	}
}

func dirBytes(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

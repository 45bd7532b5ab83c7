package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// runMeasured runs the binary and returns its wall time and peak resident
// memory (bytes).
func runMeasured(b *testing.B, args ...string) (time.Duration, int64) {
	b.Helper()
	start := time.Now()
	peak := peakRSS(b, ceresBinary, args...)
	return time.Since(start), peak
}

// peakRSS runs name with args under GNU time and returns the command's peak
// resident memory (bytes). The rusage this process would get for a child
// it starts itself counts this process's own resident set (the child's
// memory until exec, about 90 MiB for this test binary), not the command's
// alone.
func peakRSS(b testing.TB, name string, args ...string) int64 {
	b.Helper()
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", name}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s %v: %v\n%s", name, args, err, stderr.String())
	}
	lines := strings.Fields(stderr.String())
	kib, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	if err != nil {
		b.Fatalf("/usr/bin/time printed %q", stderr.String())
	}
	return kib << 10
}

func benchSession(b *testing.B, dir string, cycles int, extra ...string) string {
	b.Helper()
	session := filepath.Join(dir, "session-"+strconv.Itoa(cycles))
	args := append([]string{"synth", "-o", session, "--seed", "9", "--cycles", strconv.Itoa(cycles)}, extra...)
	if _, _, err := runCmd(args...); err != nil {
		b.Fatal(err)
	}
	return session
}

func runCmd(args ...string) (string, string, error) {
	cmd, ctx, cancel := binaryCommand(args...)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("still running after %v, stopped with SIGQUIT: %w", commandLimit, err)
	}
	if err != nil {
		err = fmt.Errorf("ceres-export %v: %w\n%s", args, err, errOut.String())
	}
	return out.String(), errOut.String(), err
}

// BenchmarkExportMemory compares the peak memory of exporting a one-hour
// session with that of a one-minute one. The example specification's cycle
// lasts about 66 s; 55 cycles make an hour. Small pictures keep the
// encoding time reasonable; memory per frame does not depend on the
// session's length either way.
//
// One thing must grow with the length: FFmpeg's mp4 muxer keeps an index
// entry per packet until it writes the file's moov (about 80 bytes per AV1
// packet), and LeRobot's format needs that index. The goal
// (ratio_peak_mem_1h_less_mux_index_vs_1min ≤ 1.05) therefore takes off
// the one-hour peak what the ffmpeg command line's own muxer needs for the
// same packets, measured in the same run: the peak of stream-copying each
// shard's video into an mp4 less that of stream-copying it to the null
// muxer (the demuxer's share), one hour against one minute.
func BenchmarkExportMemory(b *testing.B) {
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		b.Fatalf("the ffmpeg command line measures the muxer's index: %v", err)
	}
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		camera := []string{"--cameras", "1", "--width", "96", "--height", "64"}
		short := benchSession(b, dir, 1, camera...)
		long := benchSession(b, dir, 55, camera...)
		shortOut, longOut := filepath.Join(dir, "shard-short"), filepath.Join(dir, "shard-long")
		tShort, memShort := runMeasured(b, "export", short, "-o", shortOut, "-q")
		tLong, memLong := runMeasured(b, "export", long, "-o", longOut, "-q")
		muxIndex := muxerIndexBytes(b, ffmpeg, dir, longOut) - muxerIndexBytes(b, ffmpeg, dir, shortOut)
		b.ReportMetric(float64(memShort)/(1<<20), "MiB_peak_1min")
		b.ReportMetric(float64(memLong)/(1<<20), "MiB_peak_1h")
		b.ReportMetric(float64(muxIndex)/(1<<20), "MiB_ffmpeg_mux_index_1h_vs_1min")
		b.ReportMetric(float64(memLong)/float64(memShort), "ratio_peak_mem_1h_vs_1min")
		b.ReportMetric(float64(memLong-muxIndex)/float64(memShort), "ratio_peak_mem_1h_less_mux_index_vs_1min")
		b.ReportMetric(tLong.Seconds(), "s_export_1h")
		b.ReportMetric(tShort.Seconds(), "s_export_1min")
	}
}

// muxerIndexBytes is the peak memory the ffmpeg command line's mp4 muxer
// adds when it stream-copies the largest video file of shard: its peak
// writing an mp4 (moov at the front, as the exporter writes) less its peak
// writing to the null muxer.
func muxerIndexBytes(b *testing.B, ffmpeg, dir, shard string) int64 {
	b.Helper()
	files, err := filepath.Glob(filepath.Join(shard, layout.VideosDir, "*", "*", "*"+layout.VideoExt))
	if err != nil || len(files) == 0 {
		b.Fatalf("%s: no video files (%v)", shard, err)
	}
	largest, size := "", int64(-1)
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.Size() > size {
			largest, size = f, st.Size()
		}
	}
	peak := func(args ...string) int64 {
		return peakRSS(b, ffmpeg, append([]string{"-v", "error", "-y", "-i", largest, "-c", "copy"}, args...)...)
	}
	toMP4 := peak("-movflags", "+faststart", "-f", "mp4", filepath.Join(dir, "mux-index.mp4"))
	toNull := peak("-f", "null", "-")
	return toMP4 - toNull
}

// BenchmarkReexportTextOnly measures a re-export after a text-only
// specification fix as a fraction of a full export of the same session
// (goal: under 0.05). The session is the demo's: the example specification
// with two 320×240 cameras, exported with the default AV1 encoder.
func BenchmarkReexportTextOnly(b *testing.B) {
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		session := benchSession(b, dir, 2, "--cameras", "2")
		spec, err := os.ReadFile(filepath.Join("..", "..", "..", "taskspec", "testdata", "example.json"))
		if err != nil {
			b.Fatal(err)
		}
		fixed := filepath.Join(dir, "fixed.json")
		if err := os.WriteFile(fixed, bytes.Replace(spec, []byte("Inspect until complete"), []byte("Inspect the sample until complete"), 1), 0o644); err != nil {
			b.Fatal(err)
		}
		shard := filepath.Join(dir, "shard")
		full, _ := runMeasured(b, "export", session, "-o", shard, "-q")
		re, _ := runMeasured(b, "export", session, "-o", shard, "-q", "--task-spec", fixed, "--replace")
		b.ReportMetric(full.Seconds(), "s_full_export")
		b.ReportMetric(re.Seconds(), "s_text_reexport")
		b.ReportMetric(re.Seconds()/full.Seconds(), "fraction_reexport_vs_full")
	}
}

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// runMeasured runs the binary and returns its wall time and peak resident
// memory (bytes).
func runMeasured(b *testing.B, args ...string) (time.Duration, int64) {
	b.Helper()
	cmd := exec.Command(ceresBinary, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("ceres-export %v: %v\n%s", args, err, stderr.String())
	}
	took := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return took, ru.Maxrss * 1024
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
	cmd := exec.Command(ceresBinary, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("ceres-export %v: %w\n%s", args, err, errOut.String())
	}
	return out.String(), errOut.String(), err
}

// BenchmarkExportMemory compares the peak memory of exporting a one-hour
// session with that of a one-minute one (goal: at most 1.05). The example
// specification's cycle lasts about 66 s; 55 cycles make an hour. Small
// pictures keep the encoding time reasonable; memory per frame does not
// depend on the session's length either way.
func BenchmarkExportMemory(b *testing.B) {
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		camera := []string{"--cameras", "1", "--width", "96", "--height", "64"}
		short := benchSession(b, dir, 1, camera...)
		long := benchSession(b, dir, 55, camera...)
		tShort, memShort := runMeasured(b, "export", short, "-o", filepath.Join(dir, "shard-short"), "-q")
		tLong, memLong := runMeasured(b, "export", long, "-o", filepath.Join(dir, "shard-long"), "-q")
		b.ReportMetric(float64(memShort)/(1<<20), "MiB_peak_1min")
		b.ReportMetric(float64(memLong)/(1<<20), "MiB_peak_1h")
		b.ReportMetric(float64(memLong)/float64(memShort), "ratio_peak_mem_1h_vs_1min")
		b.ReportMetric(tLong.Seconds(), "s_export_1h")
		b.ReportMetric(tShort.Seconds(), "s_export_1min")
	}
}

// BenchmarkReexportTextOnly measures a re-export after a text-only
// specification fix as a fraction of a full export of the same session
// (goal: under 0.05). The session is the demo's: the example specification
// with two 320×240 cameras, exported with the default AV1 encoder.
func BenchmarkReexportTextOnly(b *testing.B) {
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		session := benchSession(b, dir, 2, "--cameras", "2")
		spec, err := os.ReadFile(filepath.Join("..", "..", "taskspec", "testdata", "example.json"))
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

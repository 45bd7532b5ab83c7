package shard

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkZZParts(b *testing.B) {
	d := makeBenchData()
	_, opts, _ := dataFileLayout(dataColumns(benchFeatures), dataColumns(benchFeatures), defaultCreatedBy)
	dir := b.TempDir()
	var wall, cpu [3]time.Duration
	for i := 0; i < b.N; i++ {
		for k := 0; k < 3; k++ {
			t0, c0 := time.Now(), cpuNow()
			switch k {
			case 0:
				writeReference(b, filepath.Join(dir, fmt.Sprintf("ref-%d.parquet", i)), d, nil, opts)
			case 1, 2:
				w, _ := NewDataWriter(filepath.Join(dir, fmt.Sprintf("o%d-%d", k, i)), benchFeatures, DataWriterOptions{FPS: benchFPS, Workers: k})
				for e, bb := range d.batches {
					if _, err := w.WriteEpisode(int64(e), 0, bb); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			wall[k] += time.Since(t0)
			cpu[k] += cpuNow() - c0
		}
	}
	n := float64(b.N)
	for k, name := range []string{"ref", "seq", "par"} {
		b.ReportMetric(wall[k].Seconds()*1e3/n, name+"_wall_ms")
		b.ReportMetric(cpu[k].Seconds()*1e3/n, name+"_cpu_ms")
	}
}

func BenchmarkZZOurs(b *testing.B) {
	d := makeBenchData()
	dir := b.TempDir()
	for i := 0; i < b.N; i++ {
		w, _ := NewDataWriter(filepath.Join(dir, fmt.Sprintf("o-%d", i)), benchFeatures, DataWriterOptions{FPS: benchFPS, Workers: 1})
		for e, bb := range d.batches {
			if _, err := w.WriteEpisode(int64(e), 0, bb); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
func BenchmarkZZRef(b *testing.B) {
	d := makeBenchData()
	_, opts, _ := dataFileLayout(dataColumns(benchFeatures), dataColumns(benchFeatures), defaultCreatedBy)
	dir := b.TempDir()
	for i := 0; i < b.N; i++ {
		writeReference(b, filepath.Join(dir, fmt.Sprintf("ref-%d.parquet", i)), d, nil, opts)
	}
}

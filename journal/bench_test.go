package journal

import (
	"context"
	"os"
	"testing"
	"time"
)

// benchSession writes a session of n imu samples (24 bytes each with their
// time) in batches of 1000.
func benchSession(b *testing.B, n int, compress bool) string {
	b.Helper()
	steps := []step{func(w *Writer) error { return w.WriteSession(testSession()) }}
	for first := 0; first < n; first += 1000 {
		steps = append(steps, func(w *Writer) error {
			tm, f := imuFields(first, 1000)
			return w.WriteSamples(0, tm, f, compress)
		})
	}
	return writeSession(b, WriterOptions{}, steps)
}

// BenchmarkSampleCursor reads every sample of a 500,000-sample stream through
// a cursor. It reports samples/s and MB/s of raw body, and ratio_to_read: the
// cursor's byte rate over the rate of reading the same segment files whole
// with os.ReadFile, measured in the same run.
func BenchmarkSampleCursor(b *testing.B) {
	const n = 500_000
	for _, c := range []struct {
		name     string
		compress bool
	}{{"raw", false}, {"zstd", true}} {
		b.Run(c.name, func(b *testing.B) {
			dir := benchSession(b, n, c.compress)
			j, err := Open(context.Background(), dir, Options{})
			if err != nil {
				b.Fatal(err)
			}
			rawBytes := float64(n * 24)
			var readTime time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				start := time.Now()
				for _, p := range j.Segments() {
					if _, err := os.ReadFile(p); err != nil {
						b.Fatal(err)
					}
				}
				readTime += time.Since(start)
				b.StartTimer()
				cur, err := j.Samples("imu")
				if err != nil {
					b.Fatal(err)
				}
				got := 0
				for cur.Next() {
					got += cur.Batch().Len()
				}
				if err := cur.Err(); err != nil || got != n {
					b.Fatalf("read %d samples: %v", got, err)
				}
				cur.Close()
			}
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(n/sec, "samples/s")
			b.ReportMetric(rawBytes/sec/1e6, "MB/s")
			var fileBytes int64
			for _, s := range j.Report.Segments {
				fileBytes += s.Size
			}
			readRate := float64(fileBytes) / (readTime.Seconds() / float64(b.N))
			b.ReportMetric((float64(fileBytes)/sec)/readRate, "ratio_to_read")
		})
	}
}

// BenchmarkOpen measures the validating pass over a 500,000-sample session
// (raw bodies) and reports MB/s of segment bytes.
func BenchmarkOpen(b *testing.B) {
	dir := benchSession(b, 500_000, false)
	var size int64
	for b.Loop() {
		j, err := Open(context.Background(), dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		size = j.Report.Segments[0].Size
	}
	b.ReportMetric(float64(size)/(b.Elapsed().Seconds()/float64(b.N))/1e6, "MB/s")
}

package batch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/benchround"
	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/synth"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// BenchmarkCampaign compares a campaign with its reference measured in the
// same run: the same sessions' single exports (export.Export, as the export
// command calls it) at the same parallelism (DefaultJobs at a time, in
// manifest order). Rounds alternate between the two; the fastest of each
// counts. Goals: ratio_campaign_vs_exports <= 1.05 (no per-task overhead
// worth naming: fingerprint, records, identity files); a skipped task's
// cost, fraction_skip_vs_export, under 1% of its export.
func BenchmarkCampaign(b *testing.B) {
	const sessions, rounds = 6, 3
	video.SetLibraryLogging(false)
	dir := b.TempDir()
	var cases []string
	for i := range sessions {
		s := filepath.Join(dir, fmt.Sprintf("s%02d", i))
		if _, err := synth.Write(context.Background(), s, synth.Options{
			Seed: uint64(i + 1), Cameras: 1 + i%2, TimeScale: 0.5, Width: 320, Height: 240,
		}); err != nil {
			b.Fatal(err)
		}
		cases = append(cases, fmt.Sprintf(`{"case_id": "s%02d", "setting_id": "h264", "run_id": "1", "session": "s%02d"}`, i, i))
	}
	doc := `{"schema_version": 1, "campaign_id": "bench", "settings": {"h264": {"export": {"vcodec": "h264"}}}, "cases": [` + strings.Join(cases, ",") + `]}`
	m, err := campaign.Parse(filepath.Join(dir, "c.json"), []byte(doc), false)
	if err != nil {
		b.Fatal(err)
	}
	tasks := m.Tasks
	jobs := DefaultJobs()

	// reference: every session's single export, jobs at a time; returns
	// the wall time and the sum of the exports' own times.
	reference := func(out string) (time.Duration, time.Duration) {
		start := time.Now()
		var mu sync.Mutex
		var sum time.Duration
		sem := make(chan struct{}, jobs)
		var wg sync.WaitGroup
		for i := range tasks {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				o, err := taskOptions(&tasks[i])
				if err != nil {
					b.Error(err)
					return
				}
				o.Version = "bench"
				t0 := time.Now()
				if _, err := export.Export(context.Background(), tasks[i].SessionDir, filepath.Join(out, tasks[i].ID), o); err != nil {
					b.Error(err)
				}
				mu.Lock()
				sum += time.Since(t0)
				mu.Unlock()
			}()
		}
		wg.Wait()
		return time.Since(start), sum
	}
	campaign := func(out string) time.Duration {
		start := time.Now()
		sum, err := Run(context.Background(), tasks, Options{Out: out, Jobs: jobs, ToolVersion: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if got := sum.Count(OutcomeExported); got != len(tasks) {
			b.Fatalf("%d of %d tasks exported: %+v", got, len(tasks), sum.Results)
		}
		return time.Since(start)
	}

	b.ResetTimer()
	for range b.N {
		var ref, camp, skip benchround.Times
		var exportSum time.Duration
		for r := range rounds {
			refOut := filepath.Join(dir, fmt.Sprintf("ref-%d", r))
			if err := os.MkdirAll(refOut, 0o755); err != nil {
				b.Fatal(err)
			}
			wall, sum := reference(refOut)
			ref.Add(wall)
			exportSum += sum
			out := filepath.Join(dir, fmt.Sprintf("campaign-%d", r))
			camp.Add(campaign(out))
			// Every task of a finished campaign is skipped.
			start := time.Now()
			sum2, err := Run(context.Background(), tasks, Options{Out: out, Jobs: jobs, ToolVersion: "bench"})
			if err != nil || sum2.Count(OutcomeSkipped) != len(tasks) {
				b.Fatalf("rerun: %v %+v", err, sum2)
			}
			skip.Add(time.Since(start))
			_ = os.RemoveAll(refOut)
		}
		meanExport := exportSum / time.Duration(rounds*len(tasks))
		// A skip costs its share of the rerun's wall time times the jobs
		// that ran side by side.
		skipPerTask := skip.Min * time.Duration(jobs) / time.Duration(len(tasks))
		b.ReportMetric(float64(camp.Min)/float64(ref.Min), "ratio_campaign_vs_exports")
		b.ReportMetric(float64(skipPerTask)/float64(meanExport), "fraction_skip_vs_export")
		b.ReportMetric(ref.Min.Seconds(), "exports_s")
		b.ReportMetric(camp.Min.Seconds(), "campaign_s")
		b.ReportMetric(skipPerTask.Seconds()*1000, "skip_ms/task")
		b.ReportMetric(meanExport.Seconds()*1000, "export_ms/task")
	}
}

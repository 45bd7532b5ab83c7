//go:build cgo

package export

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
	"github.com/ceres-robotics/ceres-export/internal/synth"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// exportStageRounds is how many times each side runs per benchmark
// iteration, alternating, so that one iteration (make bench runs
// -benchtime 1x) already spreads over the machine's changing load.
const exportStageRounds = 5

// BenchmarkExportVsVideoStage measures what a user waits for: a whole
// export (open the journal, plan, encode every camera, assemble and write
// the rows, statistics and metadata, commit) against its video stage alone
// (exportCameras on the same journal and plan, as Export runs it), in
// alternating rounds. The session is the demo's shape: one cycle of the
// example specification with two 320×240 cameras, the default encoder.
//
// ratio_export_vs_its_video_stage (the goal: at most 1.05, everything
// besides encoding costs at most 5 % on top of it) divides each export's
// time by the span of its own camera stages (first camera started to last
// camera done, from its progress reports), fastest round: measured under
// the same load, which a shared machine cannot skew. The export runs its
// camera stages as the video stage alone does, so the span is that stage.
// ratio_export_vs_video_stage compares with exportCameras run separately
// (fastest round of each), mean_ratio_export_vs_video_stage the total
// times; on a loaded machine these measure mostly the neighbours. export_s
// and video_stage_s are the fastest rounds.
func BenchmarkExportVsVideoStage(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	session := filepath.Join(dir, "session")
	if _, err := synth.Write(ctx, session, synth.Options{Seed: 1, Cycles: 1, Cameras: 2}); err != nil {
		b.Fatal(err)
	}
	in := openRowsStageInput(b, session)
	enc, err := VideoOptions{}.encoder()
	if err != nil {
		b.Fatal(err)
	}
	var export, stage benchround.Times
	var inRun float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for r := 0; r < exportStageRounds; r++ {
			t0 := time.Now()
			span := &cameraSpan{}
			if _, err := exportWithVideo(ctx, session, filepath.Join(dir, fmt.Sprintf("shard-%d-%d", i, r)), Options{Progress: span}); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if ratio := t1.Sub(t0).Seconds() / span.end.Sub(span.start).Seconds(); inRun == 0 || ratio < inRun {
				inRun = ratio
			}
			stageDir := filepath.Join(dir, fmt.Sprintf("stage-%d-%d", i, r))
			if err := os.MkdirAll(stageDir, 0o755); err != nil {
				b.Fatal(err)
			}
			cams, _, err := exportCameras(ctx, in.j, in.p, in.resolved, stageDir, filepath.Join(dir, "no-previous-shard"), enc, Options{Progress: noProgress{}, VideoFiles: video.Files{}}, &Report{Cameras: map[string]*CameraReport{}})
			if err != nil {
				b.Fatal(err)
			}
			t2 := time.Now()
			if len(cams) != 2 {
				b.Fatalf("video stage encoded %d cameras, want 2", len(cams))
			}
			export.Add(t1.Sub(t0))
			stage.Add(t2.Sub(t1))
		}
	}
	b.ReportMetric(export.Min.Seconds()/stage.Min.Seconds(), "ratio_export_vs_video_stage")
	b.ReportMetric(export.Total.Seconds()/stage.Total.Seconds(), "mean_ratio_export_vs_video_stage")
	b.ReportMetric(inRun, "ratio_export_vs_its_video_stage")
	b.ReportMetric(export.Min.Seconds(), "export_s")
	b.ReportMetric(stage.Min.Seconds(), "video_stage_s")
}

// cameraSpan is a Progress that records when the first camera stage
// started and the last one finished.
type cameraSpan struct {
	mu         sync.Mutex
	start, end time.Time
}

func (c *cameraSpan) Stage(name string, _ int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.HasPrefix(name, "camera ") && c.start.IsZero() {
		c.start = time.Now()
	}
}

func (c *cameraSpan) Set(string, int) {}

func (c *cameraSpan) Done(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.HasPrefix(name, "camera ") {
		c.end = time.Now()
	}
}

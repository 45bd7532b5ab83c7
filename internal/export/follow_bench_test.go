//go:build cgo

package export_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/benchround"
	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/page"
	"github.com/ceres-robotics/ceres-export/internal/synth"
	"github.com/ceres-robotics/ceres-export/internal/testtree"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// followBenchSpeed is how much faster than real time the benchmark's
// session is recorded: on two cores the encoder keeps up with two
// 320×240 cameras at about 7× real time, so at 4× it does, with room.
const followBenchSpeed = 4

// BenchmarkFollow measures what an operator waits for at the end of a
// followed session: the time from END (the recorder has written and
// fsynced it, its camera files complete) to the committed shard, against a
// batch export of the same finished session, both with the session page.
// The session is recorded live at followBenchSpeed: the example
// specification at 0.3 of its durations (about 51 s of session, 13 s of
// wall clock), two 320×240 VP8 cameras streaming WebM as browsers write it,
// retries during and after attempts.
//
// fraction_follow_end_to_commit_vs_batch is END-to-commit over the batch
// export's time, fastest of two batch rounds (the goal: at most 0.05).
// end_to_commit_ms and batch_export_ms are the two times. The followed
// shard is checked against the batch's, byte for byte.
func BenchmarkFollow(b *testing.B) {
	ctx := context.Background()
	opts := export.Options{Version: "bench", Page: page.ShardPage, VideoFiles: video.Files{}}
	sopts := synth.Options{Seed: 1, TimeScale: 0.3, Cameras: 2}
	var endToCommit, batch benchround.Times
	for i := 0; i < b.N; i++ {
		root := b.TempDir()
		session := filepath.Join(root, "session")
		var wg sync.WaitGroup
		var liveErr error
		var ended time.Time
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, liveErr = synth.WriteLive(ctx, session, sopts, followBenchSpeed)
			ended = time.Now()
		}()
		followed := filepath.Join(root, "followed")
		_, err := export.Follow(ctx, session, followed, opts, export.FollowOptions{})
		committed := time.Now()
		wg.Wait()
		if err != nil || liveErr != nil {
			b.Fatalf("follow: %v; recorder: %v", err, liveErr)
		}
		endToCommit.Add(committed.Sub(ended))
		for r := range 2 {
			out := filepath.Join(root, "batch")
			if r > 0 {
				opts := opts
				opts.Replace, opts.NoVideoReuse = true, true
				start := time.Now()
				if _, err := export.Export(ctx, session, out, opts); err != nil {
					b.Fatal(err)
				}
				batch.Add(time.Since(start))
				continue
			}
			start := time.Now()
			if _, err := export.Export(ctx, session, out, opts); err != nil {
				b.Fatal(err)
			}
			batch.Add(time.Since(start))
			sameShard(b, followed, out)
		}
	}
	b.ReportMetric(endToCommit.Min.Seconds()/batch.Min.Seconds(), "fraction_follow_end_to_commit_vs_batch")
	b.ReportMetric(float64(endToCommit.Min.Milliseconds()), "end_to_commit_ms")
	b.ReportMetric(float64(batch.Min.Milliseconds()), "batch_export_ms")
}

// sameShard fails unless the shards at a and b hold the same bytes.
func sameShard(tb testing.TB, a, b string) {
	tb.Helper()
	if diff := testtree.Differing(testtree.Files(tb, a), testtree.Files(tb, b)); len(diff) > 0 {
		tb.Fatalf("the followed shard differs from the batch export's in %q", diff)
	}
}

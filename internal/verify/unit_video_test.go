//go:build cgo

package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
)

// TestQuickSkipsVideoAndStats: --quick neither decodes videos nor
// recomputes statistics, but still checks everything else.
func TestQuickSkipsVideoAndStats(t *testing.T) {
	shard := copyShard(t)
	reencodeCamera(t, shard, 15, func(w []episodeWindow) []videoTimes { return frameTimes(w, 30, nil) })
	mutateJSON(t, filepath.Join(shard, statsPath), func(d map[string]any) {
		d["observation.gripper.force"].(map[string]any)["max"] = []any{1e6}
	})
	mutateJSON(t, filepath.Join(shard, infoPath), func(d map[string]any) { d["total_frames"] = 1 })
	res, err := shardVideo(context.Background(), shard, Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	codes := res.Codes()
	for _, c := range codes {
		if c == "video.fps" || c == "stats.mismatch" {
			t.Errorf("--quick reported %s", c)
		}
	}
	// total_frames 1 also contradicts every stats count, and the card's
	// copy of info.json; the re-encoded camera no longer has the bytes
	// ceres/videos.json records (hashing is not decoding: --quick checks it).
	if !slices.Equal(codes, []string{"card.info", "ceres.videos", "info.total-frames", "stats.count"}) {
		t.Errorf("codes %v, want [card.info ceres.videos info.total-frames stats.count]", codes)
	}
	for _, c := range res.Checks {
		if c == CheckVideo {
			t.Errorf("--quick ran the video check")
		}
	}
}

// TestDeterministicFindings: the same shard gives the same findings, in
// the same order, every run.
func TestDeterministicFindings(t *testing.T) {
	fx := goodShard(t)
	shard := copyShard(t)
	mutateParquet(t, filepath.Join(shard, "data/chunk-000/file-000.parquet"), func(m *mtable) {
		m.dropRow(3)
		m.mapInt64("task_index", func(i int, v int64) int64 { return v + int64(i%2) })
	})
	var first []byte
	for i := 0; i < 3; i++ {
		res, err := shardVideo(context.Background(), shard, Options{Journal: fx.session})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if res.Sound {
			t.Fatal("a damaged shard is sound")
		}
		if i == 0 {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Fatalf("run %d differs:\n%s\nfirst:\n%s", i, b, first)
		}
	}
}

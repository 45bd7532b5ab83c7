package shard

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// retainedWhileWriting writes episodes small episodes of the fixture's
// features through a Builder and returns the heap in use, after a
// collection, once the last one is written: what the builder holds until
// Finish.
func retainedWhileWriting(t *testing.T, episodes int) uint64 {
	t.Helper()
	dir := t.TempDir()
	b, err := NewBuilder(dir, fixtureFeatures, Options{FPS: 10, Workers: 1, SourceColumns: true})
	if err != nil {
		t.Fatal(err)
	}
	batch := b.NewRows(16)
	stats := fixtureVideoStats(0)
	hash := strings.Repeat("ab", 32)
	var from float64
	for e := range episodes {
		n := 4 + e%5
		fillFixtureBatch(batch, e, n)
		to := from + float64(n)/10
		err := b.WriteEpisode(EpisodeMeta{
			Task:   "Pick the red cube",
			Videos: map[string]VideoSegment{"observation.images.front": {FromTimestamp: from, ToTimestamp: to, Stats: stats}},
			Ceres: layout.CeresEpisode{SessionID: fmt.Sprintf("session-%d", e/4), TaskID: "task", SpecHash: hash, RecordedSpecHash: hash,
				Source: &layout.EpisodeSource{Index: int64(e / 4), Name: fmt.Sprintf("shard-%d", e/4), ReportSHA256: hash, EpisodeIndex: int64(e % 4)}},
		}, batch)
		if err != nil {
			t.Fatal(err)
		}
		from = to
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if err := b.Finish(nil); err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(b)
	return ms.HeapAlloc
}

// TestBuilderMemoryDoesNotGrowWithEpisodes: what a Builder keeps while
// it writes does not grow with the episodes written. It used to keep every
// row group's Parquet metadata (parquet-go's writer, until the data file's
// footer) and every episode's statistics (until meta/episodes), 18 KB an
// episode of the fixture's features here; a merge of a thousand small
// shards (4,000 episodes) held about 55 MB for them. Now both wait in temporary
// files (dataFile, episodeSpool). The bound, 1 KB an episode, leaves room
// for what does grow a little: the data file's names and the heap's noise.
func TestBuilderMemoryDoesNotGrowWithEpisodes(t *testing.T) {
	// Not parallel: it reads the process's heap.
	const small, large = 200, 1000
	retainedWhileWriting(t, small) // warm-up: pools and caches
	a := retainedWhileWriting(t, small)
	b := retainedWhileWriting(t, large)
	perEpisode := (float64(b) - float64(a)) / (large - small)
	t.Logf("heap in use writing %d episodes: %.1f MiB; %d: %.1f MiB; %.0f bytes an episode", small, float64(a)/(1<<20), large, float64(b)/(1<<20), perEpisode)
	if perEpisode > 1024 {
		t.Errorf("the builder keeps %.0f bytes for each episode written (%d episodes: %.1f MiB, %d: %.1f MiB), want at most 1024",
			perEpisode, small, float64(a)/(1<<20), large, float64(b)/(1<<20))
	}
}

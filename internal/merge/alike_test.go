package merge

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/shard"
)

// openedAlike is a source as openSource leaves one of a rig's shards:
// features, specification and episode strings equal to every other
// source's, each read into memory of its own.
func openedAlike(i int) *source {
	var features []shard.Feature
	for j := range 12 {
		names := make([]string, 7)
		for k := range names {
			names[k] = fmt.Sprintf("joint_%d_%d", j, k)
		}
		features = append(features, shard.Feature{Name: fmt.Sprintf("observation.sensor_%d", j), Dtype: lerobot.Float32, Shape: []int{7}, Names: names,
			Info: shard.JSONObject{{Key: "unit", Value: strings.Repeat("rad", 2)}, {Key: "rate", Value: int64(100)}}})
	}
	hash := strings.Repeat("ab", 32)
	s := &source{ds: &shard.Dataset{Info: shard.Info{Features: features}}, dir: fmt.Sprintf("shard-%d", i), features: features,
		specs: map[string][]byte{hash: []byte(strings.Repeat(`{"task": "pick"}`, 100))}}
	for e := range 4 {
		s.episodes = append(s.episodes, sourceEpisode{Episode: shard.Episode{Index: int64(e), Tasks: []string{strings.Repeat("Pick the red cube", 1)},
			Ceres: layout.CeresEpisode{SessionID: fmt.Sprint("session-", i), TaskID: strings.Repeat("t", 8), SpecHash: strings.Repeat("ab", 32), RecordedSpecHash: strings.Repeat("ab", 32)}}})
	}
	return s
}

// retainedOpening opens n alike sources as Merge does (shared between
// them) and returns the heap in use once they are all open.
func retainedOpening(n int) uint64 {
	shared := newAlike()
	sources := make([]*source, n)
	for i := range sources {
		sources[i] = openedAlike(i)
		shared.share(sources[i])
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	runtime.KeepAlive(sources)
	return ms.HeapAlloc
}

// TestOpenSourcesHoldWhatIsAlikeOnce: a merge holds every source from its
// opening to its writing, and the sources of one rig hold the same
// features (meta/info.json parsed), specifications and task strings. Held
// once, what each source adds is its own (here its 4 episodes, their
// session string, its structs and maps), 2.2 KB; a copy of everything was
// 10.5 KB here.
func TestOpenSourcesHoldWhatIsAlikeOnce(t *testing.T) {
	// Not parallel: it reads the process's heap.
	const few, many = 100, 500
	retainedOpening(few)
	a, b := retainedOpening(few), retainedOpening(many)
	perSource := (float64(b) - float64(a)) / (many - few)
	t.Logf("%d sources open: %.2f MiB; %d: %.2f MiB; %.0f bytes a source", few, float64(a)/(1<<20), many, float64(b)/(1<<20), perSource)
	if perSource > 4096 {
		t.Errorf("each source open holds %.0f bytes, want at most 4096: what sources hold alike must be held once", perSource)
	}
	s1, s2 := openedAlike(1), openedAlike(2)
	shared := newAlike()
	shared.share(s1)
	shared.share(s2)
	if &s2.features[0] != &s1.features[0] || &s2.ds.Info.Features[0] != &s1.features[0] {
		t.Error("the second source keeps features of its own")
	}
	for i := range s1.features {
		if s1.features[i].Name != s2.features[i].Name {
			t.Fatalf("feature %d: %q, want %q", i, s2.features[i].Name, s1.features[i].Name)
		}
	}
	if s2.episodes[0].Ceres.SessionID != "session-2" || s2.episodes[0].Tasks[0] != "Pick the red cube" {
		t.Errorf("episode 0 of the second source: %+v", s2.episodes[0].Episode)
	}
	different := openedAlike(3)
	different.features = append([]shard.Feature(nil), different.features[1:]...)
	different.ds.Info.Features = different.features
	shared.share(different)
	if len(different.features) != len(s1.features)-1 {
		t.Error("a source with other features was given the first one's")
	}
}

package shard

import (
	"os"
	"testing"
)

func TestScratchShard(t *testing.T) {
	out := "/tmp/dw/shard"
	os.RemoveAll(out)
	feats := []Feature{
		{Name: "observation.state", Dtype: "float32", Shape: []int{3}, Names: []string{"x", "y", "zé"}},
		{Name: "grip", Dtype: "bool", Shape: []int{1}},
		{Name: "observation.images.front", Dtype: "video", Shape: []int{48, 64, 3}, Names: []string{"height", "width", "channels"},
			Info: JSONObject{{"video.height", 48}, {"video.width", 64}, {"video.codec", "h264"}, {"video.pix_fmt", "yuv420p"}, {"video.fps", 10}, {"video.channels", 3}, {"has_audio", false}}},
	}
	st, err := Stage(out, StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBuilder(st.Dir(), feats, Options{FPS: 10, RobotType: "so100"})
	if err != nil {
		t.Fatal(err)
	}
	vs := Stats{Min: []float64{0, 0, 0}, Max: []float64{1, 1, 1}, Mean: []float64{.5, .5, .5}, Std: []float64{.1, .1, .1}, Count: 10}
	for j := range vs.Quantiles {
		vs.Quantiles[j] = []float64{.5, .5, .5}
	}
	pass := "pass"
	for e := 0; e < 3; e++ {
		n := 5 + e
		batch := b.NewBatch(n)
		for k := 0; k < n; k++ {
			batch.Columns[0].Float32 = append(batch.Columns[0].Float32, float32(k), float32(e), float32(k*e)/3)
			batch.Columns[1].Bool = append(batch.Columns[1].Bool, k%2 == 0)
		}
		batch.Len = n
		var outcome *string
		if e == 1 {
			outcome = &pass
		}
		err := b.WriteEpisode(EpisodeMeta{Task: []string{"pick the cube", "place it"}[e%2],
			Videos: map[string]VideoSegment{"observation.images.front": {FromTimestamp: float64(e), ToTimestamp: float64(e + 1), Stats: vs}},
			Ceres:  CeresEpisode{SessionID: "s1", TaskID: "t", Outcome: outcome, SpecVersion: 1}}, batch)
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Finish(map[string]any{"b": 1, "a": []int{1, 2}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
}

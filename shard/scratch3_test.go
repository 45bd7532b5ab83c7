package shard

import (
	"math/rand"
	"os"
	"testing"
)

func TestScratchNoVideo(t *testing.T) {
	out := "/tmp/dw/shard2"
	os.RemoveAll(out)
	feats := []Feature{
		{Name: "observation.state", Dtype: "float32", Shape: []int{4}, Names: []string{"a", "b", "c", "d"}},
		{Name: "action", Dtype: "float64", Shape: []int{2}, Names: []string{"a", "b"}},
		{Name: "observation.count", Dtype: "int32", Shape: []int{1}},
		{Name: "observation.raw", Dtype: "uint8", Shape: []int{2}, Names: []string{"p", "q"}},
		{Name: "observation.flag", Dtype: "bool", Shape: []int{1}},
	}
	st, err := Stage(out, StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBuilder(st.Dir(), feats, Options{FPS: 30})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	for e := 0; e < 4; e++ {
		n := 50 + 37*e
		if e == 3 {
			n = 1
		}
		batch := b.NewBatch(n)
		for k := 0; k < n; k++ {
			for d := 0; d < 4; d++ {
				batch.Columns[0].Float32 = append(batch.Columns[0].Float32, float32(rng.NormFloat64()*float64(d+1)+float64(e)))
			}
			batch.Columns[1].Float64 = append(batch.Columns[1].Float64, rng.Float64(), rng.ExpFloat64())
			batch.Columns[2].Int32 = append(batch.Columns[2].Int32, int32(rng.Intn(100)))
			batch.Columns[3].Uint8 = append(batch.Columns[3].Uint8, uint8(rng.Intn(256)), uint8(k))
			batch.Columns[4].Bool = append(batch.Columns[4].Bool, rng.Intn(3) == 0)
		}
		batch.Len = n
		err := b.WriteEpisode(EpisodeMeta{Task: []string{"pick the cube", "place it"}[e%2], Ceres: CeresEpisode{SessionID: "s1"}}, batch)
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Finish(nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
}

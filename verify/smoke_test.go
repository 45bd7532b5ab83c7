package verify

import (
	"context"
	"testing"
)

func TestSmoke(t *testing.T) {
	f := goodShard(t)
	for _, quick := range []bool{true, false} {
		res, err := Shard(context.Background(), f.shard, Options{Journal: f.session, Quick: quick})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range res.Findings {
			t.Log(x)
		}
		t.Logf("quick=%v sound=%v checks=%v", quick, res.Sound, res.Checks)
	}
}

package export

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/ceres-robotics/ceres-export/shard"
	"github.com/ceres-robotics/ceres-export/synth"
)

// cloneBatch copies a batch's rows (the assembler reuses its batches).
func cloneBatch(b *shard.EpisodeBatch) *shard.EpisodeBatch {
	out := &shard.EpisodeBatch{Len: b.Len}
	for _, c := range b.Columns {
		out.Columns = append(out.Columns, shard.ColumnData{
			Float32: append([]float32(nil), c.Float32...),
			Float64: append([]float64(nil), c.Float64...),
			Int32:   append([]int32(nil), c.Int32...),
			Int64:   append([]int64(nil), c.Int64...),
			Uint8:   append([]uint8(nil), c.Uint8...),
			Bool:    append([]bool(nil), c.Bool...),
		})
	}
	return out
}

// TestAssembleEpisodesMatchesSequential checks that the pipelined assembly
// hands write, in order, the same rows and counts as assembling one
// episode after the other, though it alternates two reused batches.
func TestAssembleEpisodesMatchesSequential(t *testing.T) {
	for _, o := range []synth.Options{{Seed: 21}, {Seed: 22, Faults: synth.Faults{Crash: true}}} {
		in := openRowsStageInput(t, smallSession(t, o))
		if len(in.p.Episodes) < 3 {
			t.Fatalf("seed %d: %d episodes, want at least 3 to alternate batches", o.Seed, len(in.p.Episodes))
		}
		want := assembleAll(t, in)
		wantCounts := sequentialCounts(t, in)

		ra, err := newRowAssembler(in.j, in.features)
		if err != nil {
			t.Fatal(err)
		}
		maxLen := 0
		for _, ep := range in.p.Episodes {
			maxLen = max(maxLen, ep.Length)
		}
		var got []*shard.EpisodeBatch
		err = ra.assembleEpisodes(context.Background(), in.p.Episodes, in.p.FPS,
			func() *shard.EpisodeBatch { return shard.NewEpisodeBatch(in.shard, maxLen) },
			func(i int, b *shard.EpisodeBatch) error {
				if i != len(got) {
					t.Errorf("write got episode %d, want %d", i, len(got))
				}
				got = append(got, cloneBatch(b))
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		if err := ra.close(); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d episodes written, want %d", o.Seed, len(got), len(want))
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], cloneBatch(want[i])) {
				t.Errorf("seed %d episode %d: rows differ from sequential assembly", o.Seed, i)
			}
		}
		if !reflect.DeepEqual(ra.counts, wantCounts) {
			t.Errorf("seed %d: counts %v, want %v", o.Seed, ra.counts, wantCounts)
		}
	}
}

func sequentialCounts(t *testing.T, in *rowsStageInput) map[string]*SensorCounts {
	ra, err := newRowAssembler(in.j, in.features)
	if err != nil {
		t.Fatal(err)
	}
	defer ra.close()
	for _, ep := range in.p.Episodes {
		b := shard.NewEpisodeBatch(in.shard, ep.Length)
		if err := ra.episode(ep, in.p.FPS, b); err != nil {
			t.Fatal(err)
		}
	}
	return ra.counts
}

// TestAssembleEpisodesStops checks that a write error or a cancelled context
// ends the assembly with that error, without further writes.
func TestAssembleEpisodesStops(t *testing.T) {
	in := openRowsStageInput(t, smallSession(t, synth.Options{Seed: 23}))
	boom := errors.New("boom")
	cases := []struct {
		name       string
		cancel     bool
		failAt     int // write fails at this episode; -1 never
		wantErr    error
		wantWrites int
	}{
		{"write error", false, 1, boom, 2},
		{"cancelled", true, -1, context.Canceled, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ra, err := newRowAssembler(in.j, in.features)
			if err != nil {
				t.Fatal(err)
			}
			defer ra.close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			writes := 0
			err = ra.assembleEpisodes(ctx, in.p.Episodes, in.p.FPS,
				func() *shard.EpisodeBatch { return shard.NewEpisodeBatch(in.shard, 1) },
				func(i int, b *shard.EpisodeBatch) error {
					writes++
					if i == tc.failAt {
						return boom
					}
					return nil
				})
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("error %v, want %v", err, tc.wantErr)
			}
			if writes != tc.wantWrites {
				t.Errorf("%d writes, want %d", writes, tc.wantWrites)
			}
		})
	}
}

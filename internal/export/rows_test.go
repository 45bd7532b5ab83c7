package export

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	synthsession "github.com/ceres-robotics/ceres-export/internal/synth/session"
)

// cloneBatch copies a batch's rows of features (the assembler reuses its
// batches).
func cloneBatch(b *shard.EpisodeRows, features []shard.Feature) *shard.EpisodeRows {
	out := &shard.EpisodeRows{Len: b.Len}
	for i := range b.Columns {
		out.Columns = append(out.Columns, b.Columns[i].Clone(features[i].Dtype))
	}
	return out
}

// TestAssembleEpisodesMatchesSequential checks that the pipelined assembly
// hands write, in order, the same rows and counts as assembling one
// episode after the other, though it alternates two reused batches.
func TestAssembleEpisodesMatchesSequential(t *testing.T) {
	for _, o := range []synthsession.Options{{Seed: 21}, {Seed: 22, Faults: synthsession.Faults{Crash: true}}} {
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
		var got []*shard.EpisodeRows
		err = ra.assembleEpisodes(context.Background(), in.p.Episodes, in.p.FPS,
			func() *shard.EpisodeRows { return shard.NewEpisodeRows(in.shard, maxLen) },
			func(i int, b *shard.EpisodeRows) error {
				if i != len(got) {
					t.Errorf("write got episode %d, want %d", i, len(got))
				}
				got = append(got, cloneBatch(b, in.shard))
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
			if !reflect.DeepEqual(got[i], cloneBatch(want[i], in.shard)) {
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
		b := shard.NewEpisodeRows(in.shard, ep.Length)
		if err := ra.episode(ep, in.p.FPS, b); err != nil {
			t.Fatal(err)
		}
	}
	return ra.counts
}

// TestAssembleEpisodesStops checks that a write error or a cancelled context
// ends the assembly with that error, without further writes.
func TestAssembleEpisodesStops(t *testing.T) {
	in := openRowsStageInput(t, smallSession(t, synthsession.Options{Seed: 23}))
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
				func() *shard.EpisodeRows { return shard.NewEpisodeRows(in.shard, 1) },
				func(i int, b *shard.EpisodeRows) error {
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

// TestSkipTo checks that a holder skipping ahead to an episode's start holds
// exactly the sample reading every batch would (the latest at or before
// the time, or the stream's first for a time before it), reading fewer
// batches when the time lies far ahead, and going back when the skipped
// batches hold the answer (a time before the stream's first sample or far
// after its last).
func TestSkipTo(t *testing.T) {
	in := openRowsStageInput(t, smallSession(t, synthsession.Options{Seed: 24, TimeScale: 1, NoRetries: true}))
	stream := in.j.StreamIndex("imu")
	times, ids := sampleIDs(t, in.j, "imu", 0, 0)
	first, last := times[0], times[len(times)-1]
	mid := times[len(times)/2] + 3 // between two samples
	cases := []struct {
		name      string
		at        int64
		want      sampleState
		wantID    float64
		fewerRead bool // skipping reads fewer batches than reading all
	}{
		{"mid-session", mid, sampleHeld, ids[heldIndex(times, mid)], true},
		{"on a sample", times[len(times)*3/4], sampleHeld, ids[len(times)*3/4], true},
		{"before the first", first - 1e9, sampleBackFilled, ids[0], false},
		{"after the last", last + 1e12, sampleStale, ids[len(ids)-1], false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var reads [2]int
			for k, skip := range []bool{false, true} {
				h, err := newHolder(in.j, stream)
				if err != nil {
					t.Fatal(err)
				}
				defer h.close()
				// Hold an early sample first, as the previous episode left it.
				if _, err := h.advance(first); err != nil {
					t.Fatal(err)
				}
				if skip && tc.at > first {
					if err := h.skipTo(tc.at); err != nil {
						t.Fatal(err)
					}
				}
				st, err := h.advance(tc.at)
				if err != nil {
					t.Fatal(err)
				}
				if tc.want == sampleBackFilled {
					// A fresh holder: nothing held yet.
					h2, err := newHolder(in.j, stream)
					if err != nil {
						t.Fatal(err)
					}
					defer h2.close()
					if skip {
						if err := h2.skipTo(tc.at); err != nil {
							t.Fatal(err)
						}
					}
					if st, err = h2.advance(tc.at); err != nil {
						t.Fatal(err)
					}
					h = h2
				}
				got := float64(math.Float32frombits(binary.LittleEndian.Uint32(h.value(0, st))))
				if st != tc.want || got != tc.wantID {
					t.Errorf("skip %v: state %d sample %v, want state %d sample %v", skip, st, got, tc.want, tc.wantID)
				}
				reads[k] = h.reads
			}
			if tc.fewerRead && reads[1] >= reads[0] {
				t.Errorf("skipping read %d batches, reading all %d", reads[1], reads[0])
			}
		})
	}
}

// TestEpisodesSkipGaps checks the assembled rows of a full-length session,
// whose resets and pauses the holders skip, frame by frame against the
// journal's samples: every value is the latest sample at or before its frame.
func TestEpisodesSkipGaps(t *testing.T) {
	in := openRowsStageInput(t, smallSession(t, synthsession.Options{Seed: 25, TimeScale: 1}))
	imuTimes, imuIDs := sampleIDs(t, in.j, "imu", 0, 0)
	gripTimes, gripIDs := sampleIDs(t, in.j, "gripper", 1, 0)
	accel, counter := -1, -1
	for i, f := range in.features {
		switch f.Name {
		case "observation.imu.accel":
			accel = i
		case "observation.gripper.counter":
			counter = i
		}
	}
	ra, err := newRowAssembler(in.j, in.features)
	if err != nil {
		t.Fatal(err)
	}
	defer ra.close()
	for e, ep := range in.p.Episodes {
		b := shard.NewEpisodeRows(in.shard, ep.Length)
		if err := ra.episode(ep, in.p.FPS, b); err != nil {
			t.Fatal(err)
		}
		for k := 0; k < ep.Length; k++ {
			at := lerobot.FrameTime(ep.Start, k, in.p.FPS)
			if got, want := float64(shard.Values[float32](&b.Columns[accel])[3*k]), imuIDs[heldIndex(imuTimes, at)]; got != want {
				t.Fatalf("episode %d frame %d: imu sample %v, want %v", e, k, got, want)
			}
			if got, want := float64(shard.Values[int32](&b.Columns[counter])[k]), gripIDs[heldIndex(gripTimes, at)]; got != want {
				t.Fatalf("episode %d frame %d: gripper sample %v, want %v", e, k, got, want)
			}
		}
	}
	var read, all int
	for _, h := range ra.holders {
		read += h.reads
		c, err := in.j.Samples(h.id)
		if err != nil {
			t.Fatal(err)
		}
		for c.Next() {
			all++
		}
		c.Close()
	}
	if read >= all {
		t.Errorf("the holders read %d of %d batches: nothing skipped", read, all)
	}
}

// value returns the raw bytes of field f of the value a frame takes in
// state (see values).
func (h *holder) value(f int, state sampleState) []byte { return h.values(state)[f] }

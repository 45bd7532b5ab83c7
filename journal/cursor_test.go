package journal

import (
	"math"
	"testing"
)

func TestGroupEnd(t *testing.T) {
	t.Parallel()
	// refs of 1000-byte frames (payload 984) every 2000 bytes, as two
	// interleaved streams lay them out.
	spacedBy := func(n int, seg int32, stride int64) []batchRef {
		refs := make([]batchRef, n)
		for i := range refs {
			refs[i] = batchRef{seg: seg, off: int64(i) * stride, length: 1000 - FrameHeaderSize, n: 1}
		}
		return refs
	}
	spaced := func(n int, seg int32) []batchRef { return spacedBy(n, seg, 2000) }
	twoSegments := append(spaced(3, 0), spaced(3, 1)...)
	huge := []batchRef{
		{off: 0, length: 3 << 20},
		{off: 3<<20 + FrameHeaderSize, length: 10},
	}
	rawLimited := make([]batchRef, 10)
	for i := range rawLimited {
		rawLimited[i] = batchRef{off: int64(i) * (groupRaw / 4), length: groupRaw/4 - FrameHeaderSize, n: groupRaw/4 - FrameHeaderSize}
	}
	// Small frames whose bodies decode to a lot: the group is bounded by
	// the decoded size, not the frames' (the frames here take 200 bytes).
	compressed := func(decoded ...uint32) []batchRef {
		refs := make([]batchRef, len(decoded))
		for i, n := range decoded {
			refs[i] = batchRef{off: int64(i) * 200, length: 200 - FrameHeaderSize, n: n}
		}
		return refs
	}
	const big = 300 << 20
	tests := []struct {
		name    string
		refs    []batchRef
		start   int
		wantEnd int
		limit   int64
	}{
		{"count limit", spaced(200, 0), 0, groupBatches, math.MaxInt64},
		{"rest of the stream", spaced(200, 0), 190, 200, math.MaxInt64},
		{"one ref", spaced(1, 0), 0, 1, math.MaxInt64},
		{"segment boundary", twoSegments, 1, 3, math.MaxInt64},
		{"next segment", twoSegments, 3, 6, math.MaxInt64},
		{"a frame over the span limit is a group of its own", huge, 0, 1, math.MaxInt64},
		{"span limit", spacedBy(100, 0, 100_000), 50, 50 + 11, math.MaxInt64}, // 10·100 kB + 1000 ≤ 1 MiB
		{"sample bytes limit", rawLimited, 0, 4, math.MaxInt64},
		{"huge decoded batches go one at a time", compressed(big, big, big, big, big, big, big, big), 0, 1, math.MaxInt64},
		{"huge decoded batch after a small one", compressed(1000, big, big), 0, 1, math.MaxInt64},
		{"the huge one alone", compressed(1000, big, big), 1, 2, math.MaxInt64},
		{"small ones up to the limit", compressed(groupRaw/2, groupRaw/2, 1, big), 0, 2, math.MaxInt64},
		{"exactly the limit", compressed(groupRaw/4, groupRaw/4, groupRaw/4, groupRaw/4, 1), 0, 4, math.MaxInt64},
	}
	// Batches of samples at [10i, 10i+9].
	timed := make([]batchRef, 20)
	for i := range timed {
		timed[i] = batchRef{off: int64(i) * 100, length: 50, first: int64(10 * i), last: int64(10*i + 9)}
	}
	tests = append(tests, []struct {
		name    string
		refs    []batchRef
		start   int
		wantEnd int
		limit   int64
	}{
		{"read ahead to the batch after the limit", timed, 0, 6, 50},
		{"limit within a batch", timed, 0, 6, 55},
		{"limit before the start: one batch", timed, 3, 4, 5},
		{"limit at the last sample of a batch", timed, 2, 6, 49},
	}...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := groupEnd(tc.refs, tc.start, tc.limit, func(r batchRef) int64 { return int64(r.n) }); got != tc.wantEnd {
				t.Errorf("groupEnd(%d) = %d, want %d", tc.start, got, tc.wantEnd)
			}
		})
	}
}

// TestCursorSeekAndReadAhead reads a stream of 300 batches of 4 samples
// (sample i at i·100 ms) over several segments through every mix of seeks
// and read-ahead bounds, and checks each batch the cursor returns against
// the one that holds the sample it should start with.
func TestCursorSeekAndReadAhead(t *testing.T) {
	t.Parallel()
	const batches, per = 300, 4
	steps := []step{func(w *Writer) error { return w.WriteSession(testSession()) }}
	for k := range batches {
		steps = append(steps, func(w *Writer) error {
			tm, f := imuFields(k*per, per)
			return w.WriteSamples(0, tm, f, k%3 == 0)
		})
	}
	dir := writeSession(t, WriterOptions{SegmentSize: 8_000}, steps)
	j, err := open(t, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Report.Segments) < 3 {
		t.Fatalf("%d segments, want several", len(j.Report.Segments))
	}
	const ms = int64(1_000_000)
	type op struct {
		seek      int64 // sample time to seek to, or -1
		readAhead int64 // bound to set before, or 0 for none
		reads     int   // batches to read after
	}
	tests := []struct {
		name string
		ops  []op
	}{
		{"read all", []op{{-1, 0, batches}}},
		{"seek forward within a group", []op{{-1, 0, 2}, {20 * 100 * ms, 0, 3}, {30 * 100 * ms, 0, 1}}},
		{"seek to the next group", []op{{-1, 0, 1}, {int64(groupBatches*per) * 100 * ms, 0, 2}}},
		{"seek backward", []op{{-1, 0, 50}, {8 * 100 * ms, 0, 5}}},
		{"seek to the current batch", []op{{-1, 0, 10}, {9 * per * 100 * ms, 0, 2}}},
		{"bounded read ahead then seek beyond", []op{{-1, 40 * 100 * ms, 3}, {900 * 100 * ms, 1000 * 100 * ms, 40}, {1100 * 100 * ms, 0, 10}}},
		{"bound before the position", []op{{500 * 100 * ms, 10 * 100 * ms, 20}}},
		{"seek past the end", []op{{-1, 0, 3}, {int64(batches*per+5) * 100 * ms, 0, 0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := j.Samples("imu")
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			next := 0 // batch index the next Next must return
			for _, o := range tc.ops {
				if o.readAhead != 0 {
					c.ReadAhead(o.readAhead)
				}
				if o.seek >= 0 {
					c.SeekTime(o.seek)
					next = int(o.seek / (100 * ms) / per)
				}
				for range o.reads {
					if !c.Next() {
						t.Fatalf("batch %d: Next = false (%v)", next, c.Err())
					}
					b := c.Batch()
					if want := int64(next*per) * 100 * ms; b.Times[0] != want || b.Len() != per {
						t.Fatalf("batch starts at %d with %d samples, want batch %d at %d", b.Times[0], b.Len(), next, want)
					}
					if want := int64((batches - next - 1) * per); c.remains != want {
						t.Fatalf("batch %d: remains = %d, want %d", next, c.remains, want)
					}
					next++
				}
			}
			if next == batches && c.Next() {
				t.Error("Next after the last batch = true")
			}
			if err := c.Err(); err != nil {
				t.Error(err)
			}
		})
	}
}

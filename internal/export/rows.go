package export

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/journal"
)

// SensorCounts are the per-stream frame counts the report carries.
type SensorCounts struct {
	BackFilled int64 `json:"backFilled"`
	Stale      int64 `json:"stale"`
	Missing    int64 `json:"missing"`
	// Runs locate the stale and back-filled frames (so a report page can
	// mark them): consecutive frames of one episode in one state, in
	// export order, at most maxFrameRuns of them; frames past that are
	// counted in Unlocated.
	Runs      []FrameRun `json:"runs,omitempty"`
	Unlocated int64      `json:"unlocated,omitempty"`
}

// FrameRun is a run of consecutive frames of one episode whose value is
// stale or back-filled.
type FrameRun struct {
	State   string `json:"state"` // "stale" or "backFilled"
	Episode int    `json:"episode"`
	From    int    `json:"from"` // frame index in the episode
	Frames  int    `json:"frames"`
}

// Frame run states.
const (
	RunStale      = "stale"
	RunBackFilled = "backFilled"
)

// maxFrameRuns bounds the runs a stream records: a pathological stream
// (stale every other frame) must not grow the report without bound.
const maxFrameRuns = 1000

// mark counts frame k of episode ep in state (RunStale or RunBackFilled).
func (c *SensorCounts) mark(state string, ep, k int) {
	if state == RunStale {
		c.Stale++
	} else {
		c.BackFilled++
	}
	if n := len(c.Runs); n > 0 {
		r := &c.Runs[n-1]
		if r.State == state && r.Episode == ep && r.From+r.Frames == k {
			r.Frames++
			return
		}
	}
	if len(c.Runs) >= maxFrameRuns {
		c.Unlocated++
		return
	}
	c.Runs = append(c.Runs, FrameRun{State: state, Episode: ep, From: k, Frames: 1})
}

// rowAssembler fills episodes' rows from the journal's sensor streams.
type rowAssembler struct {
	features []rowFeature
	holders  []*holder       // in SESSION order of their streams' first use
	sensors  []*SensorCounts // per holder
	counts   map[string]*SensorCounts
	dests    [][]partDest // per holder, the parts its stream feeds
	colBytes [][]byte     // per feature, its column's memory for raw copies
	times    []int64      // the frame times of the episode being assembled
}

// partSource is one part of a feature with its holder and its place in the
// feature's row: elements [offset, offset+elems) of every frame's row.
type partSource struct {
	fieldRef
	holder int // index in rowAssembler.holders
	offset int
	// raw says the journal's bytes are the column's bytes: same dtype (not
	// bool, whose nonzero bytes must become true) on a little-endian host,
	// so a value is copied, not decoded.
	raw      bool
	elemSize int  // bytes per element of the column when raw
	size     int  // bytes per value in the journal
	skip     int  // bytes of the value before the elements taken
	span     int  // bytes of the elements taken
	narrow   bool // float64 in the journal, float32 in the column
}

// partDest is a feature part seen from its holder: where its values go.
type partDest struct {
	feature int // index in rowAssembler.features
	width   int // elements per row of the feature
	part    *partSource
}

func newRowAssembler(j *journal.Journal, features []rowFeature) (*rowAssembler, error) {
	ra := &rowAssembler{features: features, counts: map[string]*SensorCounts{}}
	byStream := map[int]int{}
	var featureParts [][]partSource // per feature, its parts resolved to holders
	for _, f := range features {
		var parts []partSource
		offset := 0
		for _, p := range f.parts {
			hi, ok := byStream[p.stream]
			if !ok {
				h, err := newHolder(j, p.stream)
				if err != nil {
					ra.close()
					return nil, err
				}
				hi = len(ra.holders)
				byStream[p.stream] = hi
				ra.holders = append(ra.holders, h)
				c := &SensorCounts{}
				ra.sensors = append(ra.sensors, c)
				ra.counts[h.id] = c
			}
			esize := p.dtype.Size()
			ps := partSource{fieldRef: p, holder: hi, offset: offset, size: p.fieldElems * esize, skip: p.from * esize, span: p.elems * esize}
			if lerobot.FromJournal(p.dtype) == f.Dtype && p.dtype != journal.DtypeBool && hostLittleEndian() {
				ps.raw, ps.elemSize = true, esize
			}
			ps.narrow = p.dtype == journal.DtypeFloat64 && f.Dtype == lerobot.Float32
			parts = append(parts, ps)
			offset += p.elems
		}
		featureParts = append(featureParts, parts)
	}
	ra.dests = make([][]partDest, len(ra.holders))
	for i, parts := range featureParts {
		for j := range parts {
			p := &parts[j]
			ra.dests[p.holder] = append(ra.dests[p.holder], partDest{feature: i, width: features[i].Shape[0], part: p})
		}
	}
	return ra, nil
}

func (ra *rowAssembler) close() error {
	var first error
	for _, h := range ra.holders {
		if err := h.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// episode fills b with the rows of episode ep at fps. Every column is sized
// to the episode first; then each stream in turn is followed through the
// episode's frames and its values copied or decoded in place.
func (ra *rowAssembler) episode(ep plan.Episode, fps int, b *shard.EpisodeRows) error {
	n := ep.Length
	b.Len = n
	if cap(ra.colBytes) < len(ra.features) {
		ra.colBytes = make([][]byte, len(ra.features))
	}
	colBytes := ra.colBytes[:len(ra.features)]
	for i, f := range ra.features {
		b.Columns[i].Resize(f.Dtype, n*f.Shape[0])
		colBytes[i] = b.Columns[i].Bytes(f.Dtype)
	}
	if n == 0 {
		return nil
	}
	times := resize(ra.times, n)
	ra.times = times
	for k := range times {
		times[k] = lerobot.FrameTime(ep.Start, k, fps)
	}
	for hi, h := range ra.holders {
		h.needUntil(times[n-1])
		if err := h.skipTo(times[0]); err != nil {
			return err
		}
		if err := ra.follow(hi, ep, times, b); err != nil {
			return err
		}
	}
	fillNext(ra.features, b)
	return nil
}

// follow advances holder hi through the frame times and stores, for each
// frame, its value in every feature part that the holder's stream feeds.
func (ra *rowAssembler) follow(hi int, ep plan.Episode, times []int64, b *shard.EpisodeRows) error {
	h, counts, dests := ra.holders[hi], ra.sensors[hi], ra.dests[hi]
	for k := 0; k < len(times); k++ {
		t := times[k]
		// Fast path: the held sample and the next one are in the current
		// batch, so the held sample for t is found there. It leaves the
		// holder as advance would.
		if h.have && h.heldIdx >= 0 && t >= h.heldT {
			bt := h.batch.Times
			next := h.next
			for next < len(bt) && bt[next] <= t {
				next++
			}
			if next < len(bt) {
				if next != h.next {
					h.next, h.heldIdx, h.heldT = next, next-1, bt[next-1]
				}
				if h.period > 0 && t-h.heldT > 2*h.period {
					counts.mark(RunStale, ep.Index, k)
				}
				ra.store(dests, k, b, h.batch.Fields, h.heldIdx)
				continue
			}
		}
		st, err := h.advance(t)
		if err != nil {
			return err
		}
		switch st {
		case sampleMissing:
			return fmt.Errorf("stream %s has no samples: episode %d frame %d has no value", h.id, ep.Index, k)
		case sampleStale:
			counts.mark(RunStale, ep.Index, k)
		case sampleBackFilled:
			counts.mark(RunBackFilled, ep.Index, k)
		}
		ra.store(dests, k, b, h.values(st), 0)
	}
	return nil
}

// store puts frame k's value of every part in dests into its column: the
// idx-th value of each field's raw bytes in fields.
func (ra *rowAssembler) store(dests []partDest, k int, b *shard.EpisodeRows, fields [][]byte, idx int) {
	for _, d := range dests {
		p := d.part
		v := fields[p.field][idx*p.size+p.skip : idx*p.size+p.skip+p.span]
		at := k*d.width + p.offset
		switch {
		case p.raw:
			copy(ra.colBytes[d.feature][at*p.elemSize:], v)
			continue
		case p.narrow:
			dst := shard.Values[float32](&b.Columns[d.feature])[at : at+p.elems]
			for e := range dst {
				dst[e] = float32(math.Float64frombits(binary.LittleEndian.Uint64(v[8*e:])))
			}
			continue
		}
		decodeValue(&b.Columns[d.feature], ra.features[d.feature].Dtype, at, p.fieldRef, v)
	}
}

// assembleEpisodes assembles the rows of every episode, in order, and hands
// each to write with its index. Assembling episode i+1 (reading and
// decoding the journal, holding samples per frame) runs in its own
// goroutine while write handles episode i, on two sets of rows from newRows used
// in turn: write must be done with its rows when it returns. The first error,
// or ctx's, stops both sides.
func (ra *rowAssembler) assembleEpisodes(ctx context.Context, episodes []plan.Episode, fps int,
	newRows func() *shard.EpisodeRows, write func(i int, b *shard.EpisodeRows) error) error {
	type assembled struct {
		b   *shard.EpisodeRows
		err error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	free := make(chan *shard.EpisodeRows, 2)
	free <- newRows()
	free <- newRows()
	ready := make(chan assembled)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i, ep := range episodes {
			var b *shard.EpisodeRows
			select {
			case b = <-free:
			case <-ctx.Done():
				return
			}
			err := ctx.Err()
			if err == nil {
				if err = ra.episode(ep, fps, b); err != nil {
					err = fmt.Errorf("export: episode %d: %w", i, err)
				}
			}
			select {
			case ready <- assembled{b, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	defer func() { cancel(); <-done }()
	for i := range episodes {
		var a assembled
		select {
		case a = <-ready:
		case <-ctx.Done():
			return ctx.Err()
		}
		if a.err != nil {
			return a.err
		}
		if err := write(i, a.b); err != nil {
			return err
		}
		free <- a.b
	}
	return nil
}

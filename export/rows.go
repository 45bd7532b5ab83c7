package export

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ceres-robotics/ceres-export/journal"
	"github.com/ceres-robotics/ceres-export/plan"
	"github.com/ceres-robotics/ceres-export/shard"
)

// holder follows one sensor stream through the frame clock and holds, for
// each frame time T, the latest sample with t ≤ T (export-semantics, "Sensor
// values"). It reads the stream's batches on demand, so memory does not grow
// with the session.
type holder struct {
	j      *journal.Journal
	id     string
	period int64 // nominal sample period, ns; 0 when unknown
	cursor *journal.SampleCursor

	batch *journal.Batch // current batch, nil before the first and after the last
	next  int            // index in batch of the first sample not yet held
	eof   bool

	// The held sample: either in batch at heldIdx, or copied into heldVals
	// (heldIdx < 0) when its batch was left behind.
	have     bool
	heldT    int64
	heldIdx  int
	heldVals [][]byte
}

func newHolder(j *journal.Journal, stream int) (*holder, error) {
	s := j.Info.Streams[stream]
	h := &holder{j: j, id: s.ID}
	if s.RateHz > 0 {
		h.period = int64(math.Round(1e9 / s.RateHz))
	}
	if err := h.open(); err != nil {
		return nil, err
	}
	return h, nil
}

func (h *holder) open() error {
	c, err := h.j.Samples(h.id)
	if err != nil {
		return err
	}
	h.cursor, h.batch, h.next, h.eof, h.have = c, nil, 0, false, false
	return nil
}

func (h *holder) close() error {
	if h.cursor == nil {
		return nil
	}
	return h.cursor.Close()
}

// load makes h.batch hold the next unconsumed sample, reading batches as
// needed. It reports false at the end of the stream.
func (h *holder) load() (bool, error) {
	for h.batch == nil || h.next >= h.batch.Len() {
		if h.eof {
			return false, nil
		}
		if h.have && h.heldIdx >= 0 {
			// The held sample's batch is about to be reused: keep a copy.
			h.copyHeld()
		}
		if !h.cursor.Next() {
			h.eof, h.batch = true, nil
			if err := h.cursor.Err(); err != nil {
				return false, fmt.Errorf("stream %s: %w", h.id, err)
			}
			return false, nil
		}
		h.batch, h.next = h.cursor.Batch(), 0
	}
	return true, nil
}

func (h *holder) copyHeld() {
	if len(h.heldVals) != len(h.batch.Fields) {
		h.heldVals = make([][]byte, len(h.batch.Fields))
	}
	for f := range h.batch.Fields {
		size := h.batch.FieldSize(f)
		h.heldVals[f] = append(h.heldVals[f][:0], h.batch.Fields[f][h.heldIdx*size:(h.heldIdx+1)*size]...)
	}
	h.heldIdx = -1
}

// sampleState says how a frame's value was obtained.
type sampleState int

const (
	sampleHeld       sampleState = iota
	sampleStale                  // held sample older than two nominal periods
	sampleBackFilled             // no sample at or before T: the stream's first
	sampleMissing                // the stream has no samples at all
)

// advance moves the held sample to the latest one at or before t.
func (h *holder) advance(t int64) (sampleState, error) {
	if h.have && t < h.heldT {
		// Frames go back in time only across overlapping episodes, which
		// accepted attempts never are; start the stream over to stay exact.
		if err := h.close(); err != nil {
			return 0, err
		}
		if err := h.open(); err != nil {
			return 0, err
		}
	}
	for {
		ok, err := h.load()
		if err != nil {
			return 0, err
		}
		if !ok || h.batch.Times[h.next] > t {
			break
		}
		h.have, h.heldT, h.heldIdx = true, h.batch.Times[h.next], h.next
		h.next++
	}
	switch {
	case h.have:
		if h.period > 0 && t-h.heldT > 2*h.period {
			return sampleStale, nil
		}
		return sampleHeld, nil
	case h.batch != nil:
		return sampleBackFilled, nil
	default:
		return sampleMissing, nil
	}
}

// value returns the raw bytes of field f of the sample a frame takes: the held
// one, or for a back-filled frame the stream's first.
func (h *holder) value(f int, state sampleState) []byte {
	if state == sampleBackFilled {
		size := h.batch.FieldSize(f)
		return h.batch.Fields[f][h.next*size : (h.next+1)*size]
	}
	if h.heldIdx < 0 {
		return h.heldVals[f]
	}
	size := h.batch.FieldSize(f)
	return h.batch.Fields[f][h.heldIdx*size : (h.heldIdx+1)*size]
}

// SensorCounts are the per-stream frame counts the report carries.
type SensorCounts struct {
	BackFilled int64 `json:"backFilled"`
	Stale      int64 `json:"stale"`
	Missing    int64 `json:"missing"`
}

// rowAssembler fills episode batches from the journal's sensor streams.
type rowAssembler struct {
	features []rowFeature
	holders  map[int]*holder // by stream index
	order    []int           // stream indices in SESSION order
	states   map[int]sampleState
	counts   map[string]*SensorCounts
}

func newRowAssembler(j *journal.Journal, features []rowFeature) (*rowAssembler, error) {
	ra := &rowAssembler{features: features, holders: map[int]*holder{}, states: map[int]sampleState{}, counts: map[string]*SensorCounts{}}
	for _, f := range features {
		for _, p := range f.parts {
			if _, ok := ra.holders[p.stream]; ok {
				continue
			}
			h, err := newHolder(j, p.stream)
			if err != nil {
				ra.close()
				return nil, err
			}
			ra.holders[p.stream] = h
			ra.order = append(ra.order, p.stream)
			ra.counts[h.id] = &SensorCounts{}
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

// episode fills b with the rows of episode ep at fps.
func (ra *rowAssembler) episode(ep plan.Episode, fps int, b *shard.EpisodeBatch) error {
	b.Len = ep.Length
	for i := range b.Columns {
		c := &b.Columns[i]
		c.Float32, c.Float64, c.Int32, c.Int64, c.Uint8, c.Bool = c.Float32[:0], c.Float64[:0], c.Int32[:0], c.Int64[:0], c.Uint8[:0], c.Bool[:0]
	}
	for k := 0; k < ep.Length; k++ {
		t := plan.FrameTime(ep.Start, k, fps)
		for _, si := range ra.order {
			h := ra.holders[si]
			st, err := h.advance(t)
			if err != nil {
				return err
			}
			if st == sampleMissing {
				return fmt.Errorf("stream %s has no samples: episode %d frame %d has no value", h.id, ep.Index, k)
			}
			ra.states[si] = st
			switch st {
			case sampleStale:
				ra.counts[h.id].Stale++
			case sampleBackFilled:
				ra.counts[h.id].BackFilled++
			}
		}
		for i, f := range ra.features {
			c := &b.Columns[i]
			for _, p := range f.parts {
				h := ra.holders[p.stream]
				appendValue(c, f.Dtype, p, h.value(p.field, ra.states[p.stream]))
			}
		}
	}
	return nil
}

// appendValue converts one raw little-endian value of field p to the feature
// dtype and appends it to c.
func appendValue(c *shard.ColumnData, dtype string, p fieldRef, raw []byte) {
	if dtype == p.dtype {
		// Same type: decode straight into the column.
		switch dtype {
		case shard.DtypeFloat32:
			for e := 0; e < p.elems; e++ {
				c.Float32 = append(c.Float32, math.Float32frombits(binary.LittleEndian.Uint32(raw[4*e:])))
			}
			return
		case shard.DtypeFloat64:
			for e := 0; e < p.elems; e++ {
				c.Float64 = append(c.Float64, math.Float64frombits(binary.LittleEndian.Uint64(raw[8*e:])))
			}
			return
		case shard.DtypeInt32:
			for e := 0; e < p.elems; e++ {
				c.Int32 = append(c.Int32, int32(binary.LittleEndian.Uint32(raw[4*e:])))
			}
			return
		case shard.DtypeInt64:
			for e := 0; e < p.elems; e++ {
				c.Int64 = append(c.Int64, int64(binary.LittleEndian.Uint64(raw[8*e:])))
			}
			return
		case shard.DtypeUint8:
			c.Uint8 = append(c.Uint8, raw[:p.elems]...)
			return
		case shard.DtypeBool:
			for e := 0; e < p.elems; e++ {
				c.Bool = append(c.Bool, raw[e] != 0)
			}
			return
		}
	}
	for e := 0; e < p.elems; e++ {
		v := rawFloat64(p.dtype, raw, e)
		switch dtype {
		case shard.DtypeFloat32:
			c.Float32 = append(c.Float32, float32(v))
		case shard.DtypeFloat64:
			c.Float64 = append(c.Float64, v)
		case shard.DtypeInt32:
			c.Int32 = append(c.Int32, int32(v))
		case shard.DtypeInt64:
			c.Int64 = append(c.Int64, int64(v))
		case shard.DtypeUint8:
			c.Uint8 = append(c.Uint8, uint8(v))
		case shard.DtypeBool:
			c.Bool = append(c.Bool, v != 0)
		}
	}
}

// rawFloat64 reads element e of a raw value of dtype as float64.
func rawFloat64(dtype string, raw []byte, e int) float64 {
	switch dtype {
	case journal.DtypeFloat32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*e:])))
	case journal.DtypeFloat64:
		return math.Float64frombits(binary.LittleEndian.Uint64(raw[8*e:]))
	case journal.DtypeInt32:
		return float64(int32(binary.LittleEndian.Uint32(raw[4*e:])))
	case journal.DtypeInt64:
		return float64(int64(binary.LittleEndian.Uint64(raw[8*e:])))
	case journal.DtypeUint8:
		return float64(raw[e])
	case journal.DtypeBool:
		if raw[e] != 0 {
			return 1
		}
		return 0
	}
	return math.NaN()
}

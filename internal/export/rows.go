package export

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/journal"
)

// holder follows one sensor stream through the frame clock and holds, for
// each frame time T, the latest sample with t ≤ T (docs/export-semantics.md,
// "Sensor values"). It reads the stream's batches on demand, so memory does not grow
// with the session.
type holder struct {
	j      *journal.Journal
	id     string
	period int64 // nominal sample period, ns; 0 when unknown
	cursor *journal.SampleCursor

	batch *journal.Batch // current batch, nil before the first and after the last
	next  int            // index in batch of the first sample not yet held
	eof   bool
	reads int   // batches read, for tests of skipTo
	until int64 // the cursor's read-ahead bound: the last frame time needed

	// The held sample: either in batch at heldIdx, or copied into heldVals
	// (heldIdx < 0) when its batch was left behind.
	have     bool
	heldT    int64
	heldIdx  int
	heldVals [][]byte

	vals [][]byte // values' result, reused
}

func newHolder(j *journal.Journal, stream int) (*holder, error) {
	s := j.Info.Streams[stream]
	h := &holder{j: j, id: s.ID, vals: make([][]byte, len(s.Fields)), until: math.MaxInt64}
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
	c.ReadAhead(h.until)
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
		h.reads++
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

// needUntil says that no frame after time t is coming before the next
// needUntil: the cursor need not read ahead beyond the batch that holds
// the latest sample at or before t (and the one after it).
func (h *holder) needUntil(t int64) {
	h.until = t
	h.cursor.ReadAhead(t)
}

// skipTo moves the cursor over the batches whose samples are all older
// than two nominal periods before t, unread, when there are at least two
// batches' worth of them (an episode starting after a reset or a pause): the
// held sample for t is then among the samples the cursor reads next. When
// it turns out not to be (the stream has no sample in those two periods),
// the cursor goes back to where it was and reads on as before, so the
// result is the same either way.
func (h *holder) skipTo(t int64) error {
	if h.period <= 0 || h.eof {
		return nil
	}
	from := t - 2*h.period
	resume := int64(math.MinInt64) // time of the first sample not yet read
	switch {
	case h.batch != nil && h.next < h.batch.Len():
		first, last := h.batch.Times[h.next], h.batch.Times[h.batch.Len()-1]
		span := last - h.batch.Times[0] + h.period
		if from-last <= 2*span {
			return nil
		}
		resume = first
	case h.batch != nil || h.have:
		return nil // between batches: the next one is read anyway
	}
	if h.have && h.heldIdx >= 0 {
		h.copyHeld() // the seek invalidates the batch
	}
	h.cursor.SeekTime(from)
	h.batch, h.next = nil, 0
	ok, err := h.load()
	if err != nil {
		return err
	}
	if ok && h.batch.Times[0] <= t {
		return nil
	}
	// The latest sample at or before t was in the skipped batches (or the
	// stream ended before them): read them after all.
	h.cursor.SeekTime(resume)
	h.batch, h.next, h.eof = nil, 0, false
	return nil
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

// values returns, per field, the raw bytes of the value a frame takes in
// state: the held sample's, or for a back-filled frame the stream's first.
// They are valid until the next advance.
func (h *holder) values(state sampleState) [][]byte {
	for f := range h.vals {
		switch {
		case state == sampleBackFilled:
			size := h.batch.FieldSize(f)
			h.vals[f] = h.batch.Fields[f][h.next*size : (h.next+1)*size]
		case h.heldIdx < 0:
			h.vals[f] = h.heldVals[f]
		default:
			size := h.batch.FieldSize(f)
			h.vals[f] = h.batch.Fields[f][h.heldIdx*size : (h.heldIdx+1)*size]
		}
	}
	return h.vals
}

// value returns the raw bytes of field f of the value a frame takes in
// state (see values).
func (h *holder) value(f int, state sampleState) []byte { return h.values(state)[f] }

// SensorCounts are the per-stream frame counts the report carries.
type SensorCounts struct {
	BackFilled int64 `json:"backFilled"`
	Stale      int64 `json:"stale"`
	Missing    int64 `json:"missing"`
}

// rowAssembler fills episode batches from the journal's sensor streams.
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
			ps := partSource{fieldRef: p, holder: hi, offset: offset, size: p.elems * journal.DtypeSize(p.dtype)}
			if p.dtype == f.Dtype && p.dtype != journal.DtypeBool && hostLittleEndian() {
				ps.raw, ps.elemSize = true, journal.DtypeSize(p.dtype)
			}
			ps.narrow = p.dtype == journal.DtypeFloat64 && f.Dtype == shard.DtypeFloat32
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
func (ra *rowAssembler) episode(ep plan.Episode, fps int, b *shard.EpisodeBatch) error {
	n := ep.Length
	b.Len = n
	if cap(ra.colBytes) < len(ra.features) {
		ra.colBytes = make([][]byte, len(ra.features))
	}
	colBytes := ra.colBytes[:len(ra.features)]
	for i, f := range ra.features {
		sizeColumn(&b.Columns[i], f.Dtype, n*f.Shape[0])
		colBytes[i] = columnBytes(&b.Columns[i], f.Dtype)
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
	return nil
}

// follow advances holder hi through the frame times and stores, for each
// frame, its value in every feature part that the holder's stream feeds.
func (ra *rowAssembler) follow(hi int, ep plan.Episode, times []int64, b *shard.EpisodeBatch) error {
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
					counts.Stale++
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
			counts.Stale++
		case sampleBackFilled:
			counts.BackFilled++
		}
		ra.store(dests, k, b, h.values(st), 0)
	}
	return nil
}

// store puts frame k's value of every part in dests into its column: the
// idx-th value of each field's raw bytes in fields.
func (ra *rowAssembler) store(dests []partDest, k int, b *shard.EpisodeBatch, fields [][]byte, idx int) {
	for _, d := range dests {
		p := d.part
		v := fields[p.field][idx*p.size : (idx+1)*p.size]
		at := k*d.width + p.offset
		switch {
		case p.raw:
			copy(ra.colBytes[d.feature][at*p.elemSize:], v)
			continue
		case p.narrow:
			dst := b.Columns[d.feature].Float32[at : at+p.elems]
			for e := range dst {
				dst[e] = float32(math.Float64frombits(binary.LittleEndian.Uint64(v[8*e:])))
			}
			continue
		}
		decodeValue(&b.Columns[d.feature], ra.features[d.feature].Dtype, at, p.fieldRef, v)
	}
}

// hostLittleEndian reports whether this machine stores numbers
// little-endian, as the journal does.
func hostLittleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// columnBytes views the memory of c's slice for a numeric dtype other than
// bool as bytes (nil for the others).
func columnBytes(c *shard.ColumnData, dtype string) []byte {
	switch dtype {
	case shard.DtypeFloat32:
		return sliceBytes(c.Float32)
	case shard.DtypeFloat64:
		return sliceBytes(c.Float64)
	case shard.DtypeInt32:
		return sliceBytes(c.Int32)
	case shard.DtypeInt64:
		return sliceBytes(c.Int64)
	case shard.DtypeUint8:
		return c.Uint8
	}
	return nil
}

func sliceBytes[T float32 | float64 | int32 | int64](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// sizeColumn makes the slice of c for dtype n long (reusing its storage).
func sizeColumn(c *shard.ColumnData, dtype string, n int) {
	switch dtype {
	case shard.DtypeFloat32:
		c.Float32 = resize(c.Float32, n)
	case shard.DtypeFloat64:
		c.Float64 = resize(c.Float64, n)
	case shard.DtypeInt32:
		c.Int32 = resize(c.Int32, n)
	case shard.DtypeInt64:
		c.Int64 = resize(c.Int64, n)
	case shard.DtypeUint8:
		c.Uint8 = resize(c.Uint8, n)
	case shard.DtypeBool:
		c.Bool = resize(c.Bool, n)
	}
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// decodeValue converts one raw little-endian value of field p to the feature
// dtype and stores its elements in c from index at.
func decodeValue(c *shard.ColumnData, dtype string, at int, p fieldRef, raw []byte) {
	if dtype == p.dtype {
		// Same type: decode straight into the column.
		switch dtype {
		case shard.DtypeFloat32:
			dst := c.Float32[at : at+p.elems]
			for e := range dst {
				dst[e] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*e:]))
			}
			return
		case shard.DtypeFloat64:
			dst := c.Float64[at : at+p.elems]
			for e := range dst {
				dst[e] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*e:]))
			}
			return
		case shard.DtypeInt32:
			dst := c.Int32[at : at+p.elems]
			for e := range dst {
				dst[e] = int32(binary.LittleEndian.Uint32(raw[4*e:]))
			}
			return
		case shard.DtypeInt64:
			dst := c.Int64[at : at+p.elems]
			for e := range dst {
				dst[e] = int64(binary.LittleEndian.Uint64(raw[8*e:]))
			}
			return
		case shard.DtypeUint8:
			copy(c.Uint8[at:at+p.elems], raw[:p.elems])
			return
		case shard.DtypeBool:
			dst := c.Bool[at : at+p.elems]
			for e := range dst {
				dst[e] = raw[e] != 0
			}
			return
		}
	}
	for e := 0; e < p.elems; e++ {
		v := rawFloat64(p.dtype, raw, e)
		switch dtype {
		case shard.DtypeFloat32:
			c.Float32[at+e] = float32(v)
		case shard.DtypeFloat64:
			c.Float64[at+e] = v
		case shard.DtypeInt32:
			c.Int32[at+e] = int32(v)
		case shard.DtypeInt64:
			c.Int64[at+e] = int64(v)
		case shard.DtypeUint8:
			c.Uint8[at+e] = uint8(v)
		case shard.DtypeBool:
			c.Bool[at+e] = v != 0
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

// assembleEpisodes assembles the rows of every episode, in order, and hands
// each to write with its index. Assembling episode i+1 (reading and
// decoding the journal, holding samples per frame) runs in its own
// goroutine while write handles episode i, on two batches from newBatch used
// in turn: write must be done with a batch when it returns. The first error,
// or ctx's, stops both sides.
func (ra *rowAssembler) assembleEpisodes(ctx context.Context, episodes []plan.Episode, fps int,
	newBatch func() *shard.EpisodeBatch, write func(i int, b *shard.EpisodeBatch) error) error {
	type assembled struct {
		b   *shard.EpisodeBatch
		err error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	free := make(chan *shard.EpisodeBatch, 2)
	free <- newBatch()
	free <- newBatch()
	ready := make(chan assembled)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i, ep := range episodes {
			var b *shard.EpisodeBatch
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

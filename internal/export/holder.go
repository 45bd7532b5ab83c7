package export

import (
	"fmt"
	"math"

	"github.com/ceres-robotics/ceres-export/journal"
)

// holder follows one sensor stream through the frame clock and holds, for
// each frame time T, the latest sample with t ≤ T (docs/export-semantics.md,
// "Sensor values"). It reads the stream's batches on demand, so memory does
// not grow with the session.
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
		// Nothing may point into the batch the cursor is about to reuse or
		// free: values' slices would keep a huge decoded batch alive while
		// the next one is decoded.
		clear(h.vals)
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

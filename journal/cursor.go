package journal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"sort"
	"sync/atomic"
)

// SampleCursor reads one sensor stream's SAMPLES records in journal order,
// which is time order (Open checked that times never go backwards). A
// goroutine reads and decodes the next batches while the caller works on the
// current ones, so decompression overlaps the caller's work. It reads
// consecutive records of a segment with one read and hands them over in
// groups, so that neither system calls nor goroutine hand-offs are paid per
// batch (a 100 Hz stream recorded in half-second batches has thousands);
// the cursor holds two groups at a time and reuses their buffers. Close
// must be called.
//
//	c, err := j.Samples("imu")
//	...
//	defer c.Close()
//	for c.Next() {
//		b := c.Batch() // valid until the next Next, SeekTime or Close
//		...
//	}
//	if err := c.Err(); err != nil { ... }
type SampleCursor struct {
	j      *Journal
	stream int
	refs   []batchRef
	pos    int // index in refs of the batch the next Next returns

	slots   [2]*cursorSlot
	cur     *cursorSlot // the slot whose batches the caller holds
	curIdx  int         // index in cur of the batch the caller holds
	running bool
	free    chan *cursorSlot
	ready   chan *cursorSlot
	stop    chan struct{}
	done    chan struct{}

	batch   *Batch
	err     error
	closed  bool
	remains int64

	// readAhead bounds the groups: see ReadAhead. The reading goroutine
	// loads it for each group.
	readAhead atomic.Int64
}

// Limits of one group of batches: the reading goroutine reads at most
// groupSpan bytes of a segment at once and decodes at most groupBatches
// batches or groupRaw bytes of decoded sample bodies ahead; a batch larger
// than groupRaw is a group of its own, decoded only when the caller holds
// no other group. A cursor's decoded samples thus take at most 2·groupRaw
// or one batch, whichever is more, whatever the batches' compression ratio.
const (
	groupSpan    = 1 << 20
	groupBatches = 64
	groupRaw     = 1 << 20
)

// cursorSlot is a group of consecutive batches and their buffers; the
// reading goroutine and the caller hand slots to each other over channels,
// so a slot has one owner at a time.
type cursorSlot struct {
	decs    []samplesDecoder // one per batch of the group
	batches []*Batch         // the group's batches, refs [first, first+len)
	buf     []byte           // the segment bytes the group was read from
	first   int              // index in refs of batches[0]
	err     error            // the error reading refs[first+len(batches)], if any
}

// Samples returns a cursor over the samples of sensor stream streamID.
func (j *Journal) Samples(streamID string) (*SampleCursor, error) {
	i := j.StreamIndex(streamID)
	if i < 0 {
		return nil, fmt.Errorf("journal: no stream %q in the session", streamID)
	}
	if j.layouts[i] == nil {
		return nil, fmt.Errorf("journal: stream %q is a %s stream, not a sensor stream", streamID, j.Info.Streams[i].Kind)
	}
	c := &SampleCursor{j: j, stream: i, refs: j.index[i]}
	c.readAhead.Store(math.MaxInt64)
	for k := range c.slots {
		c.slots[k] = &cursorSlot{}
	}
	c.countRemaining()
	return c, nil
}

func (c *SampleCursor) countRemaining() {
	c.remains = 0
	for _, r := range c.refs[c.pos:] {
		c.remains += int64(r.n)
	}
}

// Next reads the next batch and reports whether there is one. It returns
// false at the end and after an error (see Err).
func (c *SampleCursor) Next() bool {
	c.batch = nil
	if c.err != nil || c.closed {
		return false
	}
	if c.cur != nil {
		c.curIdx++
		if c.curIdx < len(c.cur.batches) {
			c.take()
			return true
		}
		s := c.cur
		c.cur = nil
		if s.err != nil {
			c.fail(s.first+len(s.batches), s.err)
			c.free <- s
			return false
		}
		c.free <- s // never blocks: free holds every slot
	}
	if c.pos >= len(c.refs) {
		return false
	}
	if !c.running {
		c.start()
	}
	s, ok := <-c.ready
	if !ok {
		return false
	}
	if len(s.batches) == 0 {
		c.fail(s.first, s.err)
		c.free <- s
		return false
	}
	c.cur, c.curIdx = s, 0
	c.take()
	return true
}

// take makes the batch at curIdx of the current group the cursor's.
func (c *SampleCursor) take() {
	i := c.cur.first + c.curIdx
	c.batch = c.cur.batches[c.curIdx]
	c.pos = i + 1
	c.remains -= int64(c.refs[i].n)
}

// fail records err, met reading refs[i].
func (c *SampleCursor) fail(i int, err error) {
	r := c.refs[i]
	c.err = &Error{Segment: SegmentName(uint32(r.seg + 1)), Offset: r.off, Err: err}
}

// start starts the reading goroutine at c.pos.
func (c *SampleCursor) start() {
	c.free = make(chan *cursorSlot, len(c.slots))
	for _, s := range c.slots {
		c.free <- s
	}
	c.ready = make(chan *cursorSlot, 1)
	c.stop = make(chan struct{})
	c.done = make(chan struct{})
	c.running = true
	go c.run(c.pos, c.free, c.ready, c.stop, c.done)
}

// halt stops the reading goroutine and takes every slot back.
func (c *SampleCursor) halt() {
	if !c.running {
		return
	}
	close(c.stop)
	<-c.done
	c.running = false
	c.cur = nil
	c.batch = nil
}

// run reads refs[start:] in groups into free slots and hands them over on
// ready, until the end, an error or stop.
func (c *SampleCursor) run(start int, free chan *cursorSlot, ready chan<- *cursorSlot, stop, done chan struct{}) {
	defer close(done)
	defer close(ready)
	var f segmentReader
	seg := int32(-1)
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	for i := start; i < len(c.refs); {
		var s *cursorSlot
		select {
		case s = <-free:
		case <-stop:
			return
		}
		s.release()
		s.first, s.batches, s.err = i, s.batches[:0], nil
		if r := c.refs[i]; seg != r.seg {
			if f != nil {
				f.Close()
				f = nil
			}
			var err error
			if f, err = c.j.openSegment(c.j.segments[r.seg]); err != nil {
				f = nil
				s.err = err
			}
			seg = r.seg
		}
		if f != nil {
			var other *cursorSlot
			if c.bodySize(c.refs[i]) > groupRaw {
				// A batch larger than a group is decoded only once the
				// caller has given back the other slot: one such batch in
				// memory at a time, at the cost of no overlap for it.
				select {
				case other = <-free:
					other.release()
				case <-stop:
					return
				}
			}
			s.fill(f, c.refs, i, groupEnd(c.refs, i, c.readAhead.Load(), c.bodySize), c.j.layouts)
			if other != nil {
				free <- other // never blocks: free holds every slot
			}
		}
		i += len(s.batches)
		select {
		case ready <- s:
		case <-stop:
			return
		}
		if s.err != nil {
			return
		}
	}
}

// groupEnd returns the end (exclusive) of the group of refs starting at i:
// refs of the same segment whose frames lie within groupSpan bytes of the
// first one's start, up to groupBatches of them and groupRaw bytes of
// decoded bodies (bodySize gives a ref's; a batch larger than groupRaw
// goes alone), and none after the first batch that holds a sample later
// than limit (a reader holding the latest sample at or before limit needs
// that batch, not the ones after it). The group holds at least refs[i].
func groupEnd(refs []batchRef, i int, limit int64, bodySize func(batchRef) int64) int {
	first := refs[i]
	raw := bodySize(first)
	j := i + 1
	for ; j < len(refs) && j-i < groupBatches; j++ {
		r := refs[j]
		end := r.off + FrameHeaderSize + int64(r.length)
		body := bodySize(r)
		if r.seg != first.seg || end-first.off > groupSpan || raw+body > groupRaw || refs[j-1].last > limit {
			break
		}
		raw += body
	}
	return j
}

// bodySize returns the decoded body size of the cursor's batch r: its
// times and values, as Open checked them.
func (c *SampleCursor) bodySize(r batchRef) int64 {
	return int64(r.n) * (sampleTimeSize + c.j.layouts[c.stream].sampleSize)
}

// release drops the slot's buffers that are larger than a group: a huge
// batch's buffer must not stay with the slot once the batch is gone.
func (s *cursorSlot) release() {
	for k := range s.decs {
		s.decs[k].release(groupRaw)
	}
	clear(s.batches[:cap(s.batches)])
	if cap(s.buf) > groupSpan {
		s.buf = nil
	}
}

// fill reads and decodes the group of records refs[i:end] into s,
// checking each frame again: the file may have changed since Open. On an
// error s holds the batches before the failing record and s.err.
func (s *cursorSlot) fill(f io.ReaderAt, refs []batchRef, i, end int, layouts []*streamLayout) {
	from := refs[i].off
	last := refs[end-1]
	n := last.off + FrameHeaderSize + int64(last.length) - from // ≤ max(groupSpan, one frame)
	if int64(cap(s.buf)) < n {
		s.buf = make([]byte, n)
	}
	buf := s.buf[:n]
	if _, err := f.ReadAt(buf, from); err != nil {
		s.err = fmt.Errorf("%w (the segment changed since it was opened?)", err)
		return
	}
	for len(s.decs) < end-i {
		s.decs = append(s.decs, samplesDecoder{limit: MaxSamplesBody})
	}

	for k := i; k < end; k++ {
		r := refs[k]
		frame := buf[r.off-from : r.off-from+FrameHeaderSize+int64(r.length)]
		if binary.LittleEndian.Uint32(frame) != r.length || frame[8] != TypeSamples ||
			crc32.Checksum(frame[8:], castagnoli) != binary.LittleEndian.Uint32(frame[4:]) {
			s.err = corruptf("SAMPLES frame changed since the journal was opened")
			return
		}
		b, err := s.decs[k-i].decode(frame[FrameHeaderSize:], layouts)
		if err != nil {
			s.err = err
			return
		}
		s.batches = append(s.batches, b)
	}
}

// Batch returns the batch the last Next read; it is valid until the next
// Next, SeekTime or Close.
func (c *SampleCursor) Batch() *Batch { return c.batch }

// Err returns the error that stopped the cursor, if any.
func (c *SampleCursor) Err() error { return c.err }

// SeekTime positions the cursor so that the next Next reads the first batch
// holding a sample at or after t (batches before it are skipped unread).
// A seek forward within the group of batches already read costs nothing.
func (c *SampleCursor) SeekTime(t int64) {
	pos := sort.Search(len(c.refs), func(i int) bool { return c.refs[i].last >= t })
	if s := c.cur; s != nil && pos > s.first+c.curIdx && pos <= s.first+len(s.batches) {
		// Next moves to pos: within the group, or on to the next group,
		// which the reading goroutine starts at pos.
		c.curIdx = pos - s.first - 1
		c.batch = nil
	} else {
		c.halt()
	}
	c.pos = pos
	c.countRemaining()
}

// ReadAhead tells the cursor that the caller needs no batch after the
// first one holding a sample later than t, until it says otherwise: the
// cursor reads ahead in groups up to that batch and then one batch at a
// time, so that a seek beyond t wastes little reading. The default is no
// bound.
func (c *SampleCursor) ReadAhead(t int64) { c.readAhead.Store(t) }

// Close stops the cursor and releases its file. A closed cursor's Next
// returns false; closing again does nothing.
func (c *SampleCursor) Close() error {
	if c.closed {
		return nil
	}
	c.halt()
	c.closed = true
	return nil
}

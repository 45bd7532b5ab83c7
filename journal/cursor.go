package journal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"sort"
)

// SampleCursor reads one sensor stream's SAMPLES records in journal order,
// which is time order (Open checked that times never go backwards). A
// goroutine reads and decodes the next batch while the caller works on the
// current one, so decompression overlaps the caller's work; the cursor holds
// two batches at a time and reuses their buffers. Close must be called.
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
	cur     *cursorSlot // the slot whose batch the caller holds
	running bool
	free    chan *cursorSlot
	ready   chan *cursorSlot
	stop    chan struct{}
	done    chan struct{}

	batch   *Batch
	err     error
	closed  bool
	remains int64
}

// cursorSlot is one batch's buffers; the reading goroutine and the caller
// hand slots to each other over channels, so a slot has one owner at a time.
type cursorSlot struct {
	dec   samplesDecoder
	buf   []byte
	batch *Batch
	ref   int // index in refs
	err   error
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
	for k := range c.slots {
		c.slots[k] = &cursorSlot{dec: samplesDecoder{limit: MaxSamplesBody}}
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
	if c.cur != nil {
		c.free <- c.cur // never blocks: free holds every slot
		c.cur = nil
	}
	if c.err != nil || c.closed || c.pos >= len(c.refs) {
		return false
	}
	if !c.running {
		c.start()
	}
	s, ok := <-c.ready
	if !ok {
		return false
	}
	r := c.refs[s.ref]
	if s.err != nil {
		c.err = &Error{Segment: SegmentName(uint32(r.seg + 1)), Offset: r.off, Err: s.err}
		c.free <- s
		return false
	}
	c.cur = s
	c.batch = s.batch
	c.pos = s.ref + 1
	c.remains -= int64(r.n)
	return true
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

// run reads refs[start:] into free slots and hands them over on ready, until
// the end, an error or stop.
func (c *SampleCursor) run(start int, free <-chan *cursorSlot, ready chan<- *cursorSlot, stop, done chan struct{}) {
	defer close(done)
	defer close(ready)
	var f *os.File
	seg := int32(-1)
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	for i := start; i < len(c.refs); i++ {
		var s *cursorSlot
		select {
		case s = <-free:
		case <-stop:
			return
		}
		r := c.refs[i]
		if seg != r.seg {
			if f != nil {
				f.Close()
				f = nil
			}
			var err error
			if f, err = os.Open(c.j.segments[r.seg]); err != nil {
				f = nil
			}
			s.err = err
			seg = r.seg
		}
		if f != nil {
			s.batch, s.err = s.read(f, r, c.j.layouts)
		}
		s.ref = i
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

// read reads and decodes the SAMPLES record r, checking its frame again: the
// file may have changed since Open.
func (s *cursorSlot) read(f *os.File, r batchRef, layouts []*streamLayout) (*Batch, error) {
	n := FrameHeaderSize + int(r.length) // r.length ≤ MaxPayload
	if cap(s.buf) < n {
		s.buf = make([]byte, n)
	}
	frame := s.buf[:n]
	if _, err := f.ReadAt(frame, r.off); err != nil {
		return nil, fmt.Errorf("%w (the segment changed since it was opened?)", err)
	}
	if binary.LittleEndian.Uint32(frame) != r.length || frame[8] != TypeSamples ||
		crc32.Checksum(frame[8:], castagnoli) != binary.LittleEndian.Uint32(frame[4:]) {
		return nil, corruptf("SAMPLES frame changed since the journal was opened")
	}
	return s.dec.decode(frame[FrameHeaderSize:], layouts)
}

// Batch returns the batch the last Next read; it is valid until the next
// Next, SeekTime or Close.
func (c *SampleCursor) Batch() *Batch { return c.batch }

// Err returns the error that stopped the cursor, if any.
func (c *SampleCursor) Err() error { return c.err }

// Remaining returns how many samples the batches after the current one hold.
func (c *SampleCursor) Remaining() int64 { return c.remains }

// SeekTime positions the cursor so that the next Next reads the first batch
// holding a sample at or after t (batches before it are skipped unread).
func (c *SampleCursor) SeekTime(t int64) {
	c.halt()
	c.pos = sort.Search(len(c.refs), func(i int) bool { return c.refs[i].last >= t })
	c.countRemaining()
}

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

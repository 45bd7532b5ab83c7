package journal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"sort"
)

// SampleCursor reads one sensor stream's SAMPLES records in journal order,
// which is time order (Open checked that times never go backwards). It holds
// one batch at a time and reuses its buffers:
//
//	c, err := j.Samples("imu")
//	...
//	defer c.Close()
//	for c.Next() {
//		b := c.Batch() // valid until the next Next
//		...
//	}
//	if err := c.Err(); err != nil { ... }
type SampleCursor struct {
	j      *Journal
	stream int
	refs   []batchRef
	pos    int

	file    *os.File
	fileSeg int32
	buf     []byte
	dec     samplesDecoder
	batch   *Batch
	err     error
	closed  bool
	remains int64 // samples not yet returned, for Remaining
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
	c := &SampleCursor{j: j, stream: i, refs: j.index[i], fileSeg: -1, dec: samplesDecoder{limit: MaxSamplesBody}}
	for _, r := range c.refs {
		c.remains += int64(r.n)
	}
	return c, nil
}

// Next reads the next batch and reports whether there is one. It returns
// false at the end and after an error (see Err).
func (c *SampleCursor) Next() bool {
	c.batch = nil
	if c.err != nil || c.closed || c.pos >= len(c.refs) {
		return false
	}
	r := c.refs[c.pos]
	c.pos++
	b, err := c.read(r)
	if err != nil {
		c.err = &Error{Segment: SegmentName(uint32(r.seg + 1)), Offset: r.off, Err: err}
		return false
	}
	c.batch = b
	c.remains -= int64(r.n)
	return true
}

// read reads and decodes the SAMPLES record r, checking its frame again: the
// file may have changed since Open.
func (c *SampleCursor) read(r batchRef) (*Batch, error) {
	if c.fileSeg != r.seg {
		if c.file != nil {
			c.file.Close()
			c.file = nil
		}
		f, err := os.Open(c.j.segments[r.seg])
		if err != nil {
			return nil, err
		}
		c.file, c.fileSeg = f, r.seg
	}
	n := FrameHeaderSize + int(r.length) // r.length ≤ MaxPayload
	if cap(c.buf) < n {
		c.buf = make([]byte, n)
	}
	frame := c.buf[:n]
	if _, err := c.file.ReadAt(frame, r.off); err != nil {
		return nil, fmt.Errorf("%w (the segment changed since it was opened?)", err)
	}
	if binary.LittleEndian.Uint32(frame) != r.length || frame[8] != TypeSamples ||
		crc32.Checksum(frame[8:], castagnoli) != binary.LittleEndian.Uint32(frame[4:]) {
		return nil, corruptf("SAMPLES frame changed since the journal was opened")
	}
	return c.dec.decode(frame[FrameHeaderSize:], c.j.layouts)
}

// Batch returns the batch the last Next read; it is valid until the next
// Next or Close.
func (c *SampleCursor) Batch() *Batch { return c.batch }

// Err returns the error that stopped the cursor, if any.
func (c *SampleCursor) Err() error { return c.err }

// Remaining returns how many samples the batches after the current one hold.
func (c *SampleCursor) Remaining() int64 { return c.remains }

// SeekTime positions the cursor so that the next Next reads the first batch
// holding a sample at or after t (batches before it are skipped unread).
func (c *SampleCursor) SeekTime(t int64) {
	c.pos = sort.Search(len(c.refs), func(i int) bool { return c.refs[i].last >= t })
	c.remains = 0
	for _, r := range c.refs[c.pos:] {
		c.remains += int64(r.n)
	}
	c.batch = nil
}

// Close releases the cursor's file. A closed cursor's Next returns false.
func (c *SampleCursor) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	c.batch = nil
	if c.file != nil {
		err := c.file.Close()
		c.file = nil
		return err
	}
	return nil
}

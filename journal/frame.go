package journal

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
)

// castagnoli is the CRC-32C table; read-only after initialisation.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// readChunk is how much a window reads at once; large enough that small
// records cost no system call each, small enough to be cheap to hold.
const readChunk = 256 << 10

// window gives access to byte ranges of a ReaderAt of known size, reading
// ahead in chunks and reusing one buffer.
type window struct {
	r    io.ReaderAt
	size int64
	buf  []byte // file bytes [off, off+len(buf))
	off  int64
	// onRead, when set, sees every range read from r, in the order read.
	onRead func(off int64, p []byte)
}

// bytes returns the n bytes at off, valid until the next call. off and n have
// been checked against size by the caller; a range past size is an
// io.ErrUnexpectedEOF.
func (w *window) bytes(off int64, n int) ([]byte, error) {
	if off < 0 || n < 0 || off > w.size || int64(n) > w.size-off {
		return nil, io.ErrUnexpectedEOF
	}
	if off >= w.off && off+int64(n) <= w.off+int64(len(w.buf)) {
		s := off - w.off
		return w.buf[s : s+int64(n)], nil
	}
	want := max(n, readChunk)
	if rest := w.size - off; int64(want) > rest {
		want = int(rest) // rest < want ≤ max(n, readChunk): fits an int
	}
	if cap(w.buf) < want {
		w.buf = make([]byte, want)
	}
	w.buf = w.buf[:want]
	m, err := w.r.ReadAt(w.buf, off)
	if m == want {
		err = nil // a ReaderAt may return io.EOF with a full read at the end
	}
	w.buf = w.buf[:m]
	w.off = off
	if w.onRead != nil && m > 0 {
		w.onRead(off, w.buf)
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF // the file shrank under us
		}
		return nil, err
	}
	return w.buf[:n], nil
}

// FrameReader iterates the record frames of one segment. It reads through an
// io.ReaderAt so that it can look ahead for a valid frame after an invalid one
// without losing its place. Its errors are sticky: after Next returns an
// error, it returns the same error until Resync.
type FrameReader struct {
	w       window
	off     int64 // offset of the next frame
	frame   int64 // offset of the frame Next last returned or failed on
	records int   // frames returned so far
	err     error
	sc      crcScanner // for FindValid
}

// NewFrameReader returns a reader of the frames in r from byte offset start
// (SegmentHeaderSize for a segment file) up to size, the length of r.
func NewFrameReader(r io.ReaderAt, start, size int64) *FrameReader {
	return &FrameReader{w: window{r: r, size: size}, off: start, frame: start}
}

// Next returns the next frame's type and payload. The payload is valid until
// the next call of Next or FindValid. At the end of the data Next returns
// io.EOF; an invalid frame gives an *Error matching ErrCorrupt whose Offset is
// the frame's offset (see Offset); a read failure gives an *Error wrapping it.
func (fr *FrameReader) Next() (typ uint8, payload []byte, err error) {
	if fr.err != nil {
		return 0, nil, fr.err
	}
	fr.frame = fr.off
	if fr.off == fr.w.size {
		fr.err = io.EOF
		return 0, nil, io.EOF
	}
	typ, payload, err = fr.check(fr.off)
	if err != nil {
		fr.err = &Error{Offset: fr.off, Record: fr.records + 1, Err: err}
		return 0, nil, fr.err
	}
	fr.off += FrameHeaderSize + int64(len(payload))
	fr.records++
	return typ, payload, nil
}

// check validates the frame at off and returns it. Its error is a cause
// matching ErrCorrupt, or a read error.
func (fr *FrameReader) check(off int64) (uint8, []byte, error) {
	rest := fr.w.size - off
	if rest < FrameHeaderSize {
		return 0, nil, corruptf("frame header cut short (%d of %d bytes)", rest, FrameHeaderSize)
	}
	h, err := fr.w.bytes(off, FrameHeaderSize)
	if err != nil {
		return 0, nil, err
	}
	length := binary.LittleEndian.Uint32(h[0:4])
	sum := binary.LittleEndian.Uint32(h[4:8])
	typ := h[8]
	switch {
	case length > MaxPayload:
		return 0, nil, corruptf("length %d over the %d-byte limit", length, MaxPayload)
	case int64(length) > rest-FrameHeaderSize:
		return 0, nil, corruptf("length %d runs past the end of the segment (%d bytes left)", length, rest-FrameHeaderSize)
	case typ == 0:
		return 0, nil, corruptf("reserved record type 0")
	}
	f, err := fr.w.bytes(off, FrameHeaderSize+int(length))
	if err != nil {
		return 0, nil, err
	}
	if crc32.Checksum(f[frameLengthSize+frameCRCSize:], castagnoli) != sum {
		return 0, nil, corruptf("checksum mismatch")
	}
	return typ, f[FrameHeaderSize:], nil
}

// Offset returns the offset of the next frame; after Next returned an error,
// the offset of the invalid frame.
func (fr *FrameReader) Offset() int64 {
	if fr.err != nil {
		return fr.frame
	}
	return fr.off
}

// Records returns how many frames Next has returned.
func (fr *FrameReader) Records() int { return fr.records }

// FindValid scans byte by byte from offset from for the first offset where a
// valid frame starts (length within limits and within the data, type not 0,
// checksum matching). It returns that offset and true, or false when there is
// none up to the end; the error is a read failure. It does not move the
// reader. Its cost does not depend on the lengths the bytes claim (see
// crcScanner), and it holds at most 32 MiB plus a frame header until the reader is dropped.
func (fr *FrameReader) FindValid(from int64) (int64, bool, error) {
	return fr.sc.find(fr.w.r, from, fr.w.size)
}

// ZeroFrom reports whether every byte from offset from to the end is zero:
// space a recorder preallocated and has not written yet (a frame of zeros
// has type 0, which is never valid). It does not move the reader.
func (fr *FrameReader) ZeroFrom(from int64) (bool, error) {
	buf := make([]byte, min(readChunk, max(fr.w.size-from, 0)))
	for off := from; off < fr.w.size; {
		n := int(min(int64(len(buf)), fr.w.size-off))
		m, err := fr.w.r.ReadAt(buf[:n], off)
		for _, b := range buf[:m] {
			if b != 0 {
				return false, nil
			}
		}
		if m < n {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF // the file shrank under us
			}
			return false, err
		}
		off += int64(m)
	}
	return true, nil
}

// Resync clears the sticky error and continues with the frame at off,
// normally an offset FindValid returned.
func (fr *FrameReader) Resync(off int64) {
	fr.err = nil
	fr.off = off
	fr.frame = off
}

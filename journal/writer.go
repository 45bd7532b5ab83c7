package journal

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/fsync"
	"github.com/klauspost/compress/zstd"
)

// WriterOptions controls a Writer. The zero value gives the documented
// defaults; NewWriter does not change the caller's struct.
type WriterOptions struct {
	// SegmentSize is the size at which the writer starts a new segment: a
	// record that would take the segment past it goes into the next one (a
	// record larger than SegmentSize goes alone into a segment). Default 64 MiB.
	SegmentSize int64
	// SyncInterval is the longest time between fsyncs while records are
	// written. Default 1 s; negative syncs after every record.
	SyncInterval time.Duration
	// Preallocate extends every new segment to SegmentSize with zeros
	// before its first record, as a recorder that reserves its disk space
	// does: records are then written in place and the file's size does not
	// change while it records. The unused zeros stay at the segment's end
	// (record type 0 is reserved so that they are never read as a record).
	Preallocate bool

	// now is the clock of SyncInterval; nil means time.Now (tests set it).
	now func() time.Time
}

// DefaultSegmentSize is WriterOptions.SegmentSize's default.
const DefaultSegmentSize = 64 << 20

// segmentFile is what a Writer needs of a segment file.
type segmentFile interface {
	io.Writer
	Sync() error
	Close() error
}

// Writer appends records to a session's journal in format version 1, one
// Write per record. It rolls to a new segment at WriterOptions.SegmentSize and
// calls fsync at every attempt boundary (EVENT attempt_start, attempt_end,
// retry), after END, and when SyncInterval has passed since the last fsync.
// After the first write or sync failure every call returns that error. It
// does not check the records' semantics (the reader does), except that
// WriteSamples checks the batch against the SESSION it wrote. Its bytes are
// deterministic: the same calls give the same files.
type Writer struct {
	dir      string // <session>/journal
	opts     WriterOptions
	create   func(path string) (segmentFile, error) // testHookCreate in tests
	syncDir  func() error
	f        segmentFile
	seq      uint32
	size     int64 // bytes in the current segment
	lastSync time.Time
	frame    []byte
	enc      *zstd.Encoder
	zbuf     []byte          // raw SAMPLES body
	pbuf     []byte          // SAMPLES payload
	layouts  []*streamLayout // from WriteSession; nil when this writer wrote none
	err      error
	closed   bool
}

// NewWriter creates the journal directory of session directory dir and its
// first segment, numbered after any segment already there (a recorder
// restarting starts a new segment).
func NewWriter(dir string, opts WriterOptions) (*Writer, error) {
	jdir := filepath.Join(dir, "journal")
	if err := os.MkdirAll(jdir, 0o755); err != nil {
		return nil, err
	}
	create := func(path string) (segmentFile, error) {
		return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	}
	syncDir := func() error { return fsync.Dir(jdir) }
	return newWriter(jdir, opts, create, syncDir)
}

func newWriter(jdir string, opts WriterOptions, create func(string) (segmentFile, error), syncDir func() error) (*Writer, error) {
	if opts.SegmentSize <= 0 {
		opts.SegmentSize = DefaultSegmentSize
	}
	if opts.SyncInterval == 0 {
		opts.SyncInterval = time.Second
	}
	if opts.now == nil {
		opts.now = time.Now
	}
	var seq uint32
	if entries, err := os.ReadDir(jdir); err == nil {
		for _, e := range entries {
			if d, ok := strings.CutSuffix(e.Name(), ".cjl"); ok {
				if n, err := strconv.ParseUint(d, 10, 32); err == nil && uint32(n) > seq {
					seq = uint32(n)
				}
			}
		}
	}
	w := &Writer{dir: jdir, opts: opts, create: create, syncDir: syncDir, seq: seq}
	w.lastSync = opts.now()
	if err := w.startSegment(); err != nil {
		return nil, err
	}
	return w, nil
}

// startSegment closes the current segment, if any, and starts the next one.
func (w *Writer) startSegment() error {
	if w.f != nil {
		if err := w.f.Sync(); err != nil {
			return err
		}
		if err := w.f.Close(); err != nil {
			return err
		}
		w.f = nil
	}
	w.seq++
	f, err := w.create(filepath.Join(w.dir, SegmentName(w.seq)))
	if err != nil {
		return err
	}
	w.f = f
	var h [SegmentHeaderSize]byte
	copy(h[:], segmentMagic)
	binary.LittleEndian.PutUint32(h[8:], formatVersion)
	binary.LittleEndian.PutUint32(h[12:], w.seq)
	if _, err := f.Write(h[:]); err != nil {
		return err
	}
	w.size = SegmentHeaderSize
	if w.opts.Preallocate {
		t, ok := f.(interface{ Truncate(int64) error })
		if !ok {
			return fmt.Errorf("journal: segment %s cannot be preallocated", SegmentName(w.seq))
		}
		if err := t.Truncate(w.opts.SegmentSize); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return w.syncDir()
}

// fail makes err the writer's sticky error.
func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = fmt.Errorf("journal writer broken: %w", err)
	}
	return w.err
}

func (w *Writer) usable() error {
	if w.closed {
		return ErrClosed
	}
	return w.err
}

func (w *Writer) write(typ uint8, payload []byte, boundary bool) error {
	if err := w.usable(); err != nil {
		return err
	}
	if len(payload) > MaxPayload {
		return fmt.Errorf("journal: %s payload of %d bytes is over the %d-byte limit", recordName(typ), len(payload), MaxPayload)
	}
	n := int64(FrameHeaderSize + len(payload))
	if w.size > SegmentHeaderSize && w.size+n > w.opts.SegmentSize {
		if err := w.startSegment(); err != nil {
			return w.fail(err)
		}
	}
	w.frame = append(w.frame[:0], make([]byte, FrameHeaderSize)...)
	binary.LittleEndian.PutUint32(w.frame[0:], uint32(len(payload)))
	w.frame[8] = typ
	w.frame = append(w.frame, payload...)
	binary.LittleEndian.PutUint32(w.frame[4:], crc32.Checksum(w.frame[8:], castagnoli))
	m, err := w.f.Write(w.frame)
	w.size += int64(m)
	if err == nil && m < len(w.frame) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return w.fail(err)
	}
	if now := w.opts.now(); boundary || w.opts.SyncInterval < 0 || now.Sub(w.lastSync) >= w.opts.SyncInterval {
		return w.Sync()
	}
	return nil
}

func (w *Writer) writeJSON(typ uint8, v any, boundary bool) error {
	if err := w.usable(); err != nil {
		return err
	}
	p, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("journal: %s: %w", recordName(typ), err)
	}
	return w.write(typ, p, boundary)
}

// WriteSession appends the SESSION record. Its streams give the layouts
// WriteSamples checks batches against; a stream layout error is returned
// before anything is written.
func (w *Writer) WriteSession(s Session) error {
	layouts, err := sensorLayouts(s.Streams)
	if err != nil {
		return err
	}
	if err := w.writeJSON(TypeSession, s, false); err != nil {
		return err
	}
	w.layouts = layouts
	return nil
}

// WriteSpec appends the SPEC record.
func (w *Writer) WriteSpec(s SpecRecord) error { return w.writeJSON(TypeSpec, s, false) }

// WriteEvent appends an EVENT record; attempt_start, attempt_end and retry are
// followed by an fsync.
func (w *Writer) WriteEvent(e Event) error {
	boundary := e.Kind == EventAttemptStart || e.Kind == EventAttemptEnd || e.Kind == EventRetry
	return w.writeJSON(TypeEvent, e, boundary)
}

// WriteMedia appends a MEDIA record.
func (w *Writer) WriteMedia(m Media) error { return w.writeJSON(TypeMedia, m, false) }

// WriteEnd appends the END record, followed by an fsync.
func (w *Writer) WriteEnd(e End) error { return w.writeJSON(TypeEnd, e, true) }

// WriteSamples appends a SAMPLES record of stream (its index in
// SESSION.streams) with times and, per field in SESSION order, the raw
// little-endian values of the len(times) samples; compress selects a zstd
// body. When this writer wrote the SESSION, the batch is checked against it
// (a sensor stream, the exact field sizes) before anything is written.
func (w *Writer) WriteSamples(stream uint16, times []int64, fields [][]byte, compress bool) error {
	if err := w.usable(); err != nil {
		return err
	}
	n := len(times)
	if n == 0 || int64(n) > int64(^uint32(0)) {
		return fmt.Errorf("journal: WriteSamples: %d samples (want 1 to %d)", n, ^uint32(0))
	}
	if w.layouts != nil {
		if int(stream) >= len(w.layouts) || w.layouts[stream] == nil {
			return fmt.Errorf("journal: WriteSamples: stream %d is not a sensor stream of the SESSION", stream)
		}
		l := w.layouts[stream]
		if len(fields) != len(l.fields) {
			return fmt.Errorf("journal: WriteSamples: %d fields, stream %d has %d", len(fields), stream, len(l.fields))
		}
		for i, f := range l.fields {
			if len(fields[i]) != n*f.size {
				return fmt.Errorf("journal: WriteSamples: field %d is %d bytes, %d samples need %d", i, len(fields[i]), n, n*f.size)
			}
		}
	}
	body := w.zbuf[:0]
	for _, t := range times {
		body = binary.LittleEndian.AppendUint64(body, uint64(t))
	}
	for _, f := range fields {
		body = append(body, f...)
	}
	w.zbuf = body
	var h [samplesHeaderSize]byte
	binary.LittleEndian.PutUint16(h[0:], stream)
	binary.LittleEndian.PutUint32(h[4:], uint32(n))
	payload := w.pbuf[:0]
	if compress {
		if w.enc == nil {
			// Fixed settings, so the same batch always gives the same bytes.
			enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1),
				zstd.WithEncoderCRC(true), zstd.WithZeroFrames(true))
			if err != nil {
				return err
			}
			w.enc = enc
		}
		h[2] = encodingZstd
		payload = w.enc.EncodeAll(body, append(payload, h[:]...))
	} else {
		payload = append(append(payload, h[:]...), body...)
	}
	w.pbuf = payload
	return w.write(TypeSamples, payload, false)
}

// Sync flushes the current segment to stable storage.
func (w *Writer) Sync() error {
	if err := w.usable(); err != nil {
		return err
	}
	if err := w.f.Sync(); err != nil {
		return w.fail(err)
	}
	w.lastSync = w.opts.now()
	return nil
}

// Close syncs and closes the current segment. It does not write END. Closing
// twice returns ErrClosed; closing a broken writer closes the file and
// returns the writer's error.
func (w *Writer) Close() error {
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	if w.f == nil {
		return w.err
	}
	var err error
	if w.err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	if w.err != nil {
		return w.err
	}
	if err != nil {
		return fmt.Errorf("journal writer: close: %w", err)
	}
	return nil
}

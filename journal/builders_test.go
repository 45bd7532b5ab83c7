package journal

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/taskspec"
)

// Byte builders and fixtures for the tests. They stay in _test.go files so
// the library never depends on testing code.

// testSpecJSON is the tiny example's task specification.
const testSpecJSON = `{"schema":"ceres-task-specification","version":1,"runTitle":"Tiny","cycleCount":1,` +
	`"tasks":[{"id":"wave","type":"timed","label":"Wave","instructions":"Wave once","durationS":1,"repeatCount":2,"resetTimeS":5}]}`

func testSpecRecord(t testing.TB) SpecRecord {
	t.Helper()
	s, err := taskspec.Parse([]byte(testSpecJSON))
	if err != nil {
		t.Fatal(err)
	}
	return SpecRecord{T: 0, Hash: s.Hash(), Specification: json.RawMessage(testSpecJSON)}
}

// testSession has a sensor stream imu (seq int32, accel float32[3]) and a
// video stream front.
func testSession() Session {
	return Session{
		Schema: SchemaName, Version: 1, SessionID: "test-1", StartedAt: "2026-11-29T10:00:00Z",
		Streams: []Stream{
			{ID: "imu", Kind: KindSensor, RateHz: 10, Fields: []Field{
				{Name: "seq", Dtype: DtypeInt32},
				{Name: "accel", Dtype: DtypeFloat32, Shape: []int{3}},
			}},
			{ID: "front", Kind: KindVideo, FPS: 30, Width: 640, Height: 480},
		},
	}
}

// imuFields builds the field bytes of samples first … first+n-1 of the test
// session's imu stream: seq = i, accel = (i, 2i, 3i); times i × 100 ms.
func imuFields(first, n int) (times []int64, fields [][]byte) {
	seq := make([]byte, 0, 4*n)
	accel := make([]byte, 0, 12*n)
	for i := first; i < first+n; i++ {
		times = append(times, int64(i)*100_000_000)
		seq = binary.LittleEndian.AppendUint32(seq, uint32(i))
		for k := 1; k <= 3; k++ {
			accel = binary.LittleEndian.AppendUint32(accel, math.Float32bits(float32(k*i)))
		}
	}
	return times, [][]byte{seq, accel}
}

// step is one call on a Writer.
type step func(w *Writer) error

func ev(tNs int64, kind string, task string, cycle, rep, attempt int) step {
	return func(w *Writer) error {
		return w.WriteEvent(Event{T: tNs, Kind: kind, Task: task, Cycle: cycle, Repetition: rep, Attempt: attempt})
	}
}

// standardSteps is a complete small session: SESSION, SPEC, events of one
// attempt, three SAMPLES batches (raw, zstd, raw), a MEDIA record and END.
func standardSteps(t testing.TB) []step {
	spec := testSpecRecord(t)
	return []step{
		func(w *Writer) error { return w.WriteSession(testSession()) },
		func(w *Writer) error { return w.WriteSpec(spec) },
		ev(0, EventRunStart, "", 0, 0, 0),
		ev(0, EventCycleStart, "", 1, 0, 0),
		func(w *Writer) error { tm, f := imuFields(0, 10); return w.WriteSamples(0, tm, f, false) },
		ev(1e9, EventAttemptStart, "wave", 1, 1, 1),
		func(w *Writer) error { tm, f := imuFields(10, 10); return w.WriteSamples(0, tm, f, true) },
		func(w *Writer) error {
			return w.WriteEvent(Event{T: 2e9, Kind: EventAttemptEnd, Task: "wave", Cycle: 1, Repetition: 1, Attempt: 1, Cause: "duration"})
		},
		func(w *Writer) error {
			return w.WriteMedia(Media{T: 2e9, Stream: "front", Path: "media/front/000001.webm", Container: "webm", StartT: 0})
		},
		func(w *Writer) error { tm, f := imuFields(20, 10); return w.WriteSamples(0, tm, f, false) },
		ev(3e9, EventCycleEnd, "", 1, 0, 0),
		ev(3e9, EventRunEnd, "", 0, 0, 0),
		func(w *Writer) error { return w.WriteEnd(End{T: 3e9, Reason: "completed"}) },
	}
}

// fixedNow is a clock for deterministic writers.
func fixedNow() time.Time { return time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC) }

// writeSession runs steps on a new Writer in a fresh session directory and
// returns the directory.
func writeSession(t testing.TB, opts WriterOptions, steps []step) string {
	t.Helper()
	dir := t.TempDir()
	if opts.now == nil {
		opts.now = fixedNow
	}
	w, err := NewWriter(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		if err := s(w); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// segHeader returns a segment header for sequence number seq.
func segHeader(seq uint32) []byte {
	h := make([]byte, SegmentHeaderSize)
	copy(h, segmentMagic)
	binary.LittleEndian.PutUint32(h[8:], formatVersion)
	binary.LittleEndian.PutUint32(h[12:], seq)
	return h
}

// frame returns one record frame.
func frame(typ uint8, payload []byte) []byte {
	f := make([]byte, FrameHeaderSize, FrameHeaderSize+len(payload))
	binary.LittleEndian.PutUint32(f, uint32(len(payload)))
	f[8] = typ
	f = append(f, payload...)
	binary.LittleEndian.PutUint32(f[4:], crc32.Checksum(f[8:], castagnoli))
	return f
}

// jsonFrame returns a frame whose payload is v marshalled (or v itself when it
// is a string).
func jsonFrame(t testing.TB, typ uint8, v any) []byte {
	t.Helper()
	if s, ok := v.(string); ok {
		return frame(typ, []byte(s))
	}
	p, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return frame(typ, p)
}

// samplesPayload builds a SAMPLES payload by hand.
func samplesPayload(stream uint16, enc, reserved uint8, n uint32, body []byte) []byte {
	p := make([]byte, samplesHeaderSize, samplesHeaderSize+len(body))
	binary.LittleEndian.PutUint16(p, stream)
	p[2] = enc
	p[3] = reserved
	binary.LittleEndian.PutUint32(p[4:], n)
	return append(p, body...)
}

// rawImuBody is the raw body of imu samples first … first+n-1.
func rawImuBody(first, n int) []byte {
	times, fields := imuFields(first, n)
	var b []byte
	for _, tm := range times {
		b = binary.LittleEndian.AppendUint64(b, uint64(tm))
	}
	for _, f := range fields {
		b = append(b, f...)
	}
	return b
}

// writeSegments writes the given segment contents as journal/000001.cjl, …
// of a new session directory.
func writeSegments(t testing.TB, segs ...[]byte) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "journal"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, s := range segs {
		if err := os.WriteFile(filepath.Join(dir, "journal", SegmentName(uint32(i+1))), s, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// prefix is SESSION + SPEC as hand-built frames, the start of most
// hand-built segments.
func prefix(t testing.TB) []byte {
	var b bytes.Buffer
	b.Write(segHeader(1))
	b.Write(jsonFrame(t, TypeSession, testSession()))
	b.Write(jsonFrame(t, TypeSpec, testSpecRecord(t)))
	return b.Bytes()
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// readSegment returns the bytes of segment seq of dir.
func readSegment(t testing.TB, dir string, seq uint32) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "journal", SegmentName(seq)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// frameOffsets returns the offset of every frame of a valid segment and its
// end.
func frameOffsets(t testing.TB, seg []byte) []int64 {
	t.Helper()
	fr := NewFrameReader(bytes.NewReader(seg), SegmentHeaderSize, int64(len(seg)))
	var offs []int64
	for {
		off := fr.Offset()
		_, _, err := fr.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("frameOffsets: %v", err)
			}
			return append(offs, off)
		}
		offs = append(offs, off)
	}
}

// allSamples reads every sample of stream through a cursor.
func allSamples(t testing.TB, j *Journal, stream string) (times []int64, fields [][]byte) {
	t.Helper()
	c, err := j.Samples(stream)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for c.Next() {
		b := c.Batch()
		times = append(times, b.Times...)
		if fields == nil {
			fields = make([][]byte, len(b.Fields))
		}
		for i, f := range b.Fields {
			fields[i] = append(fields[i], f...)
		}
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	return times, fields
}

func open(t testing.TB, dir string, opts Options) (*Journal, error) {
	t.Helper()
	return Open(context.Background(), dir, opts)
}

// isTornTail is the acceptable-end predicate: it reports whether the frames of
// a last segment end in a torn tail at the invalid frame err (from Next)
// names, that is, whether no valid frame follows it. It returns false for a
// nil, io.EOF or non-corruption err.
func isTornTail(fr *FrameReader, err error) (bool, error) {
	var fe *Error
	if !errors.As(err, &fe) || !errors.Is(err, ErrCorrupt) {
		return false, nil
	}
	_, found, rerr := fr.FindValid(fe.Offset + 1)
	if rerr != nil {
		return false, rerr
	}
	return !found, nil
}

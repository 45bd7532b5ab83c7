package journal

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"testing"
)

// FuzzFrameReader feeds arbitrary segment bodies to the frame reader: it must
// never panic, only return frames within the limits whose CRC matches, move
// forward, and on an invalid frame find (or not) a later valid one that
// really is valid.
func FuzzFrameReader(f *testing.F) {
	seg := readSegment(f, writeSession(f, WriterOptions{}, standardSteps(f)), 1)
	f.Add(seg[SegmentHeaderSize:])
	f.Add(cat(frame(TypeEvent, []byte(`{"t":1}`)), make([]byte, 20)))
	f.Add(cat(frame(0, nil), frame(9, []byte{1})))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 1})
	f.Add(seg[SegmentHeaderSize : len(seg)-5])
	f.Fuzz(func(t *testing.T, data []byte) {
		size := int64(len(data))
		fr := NewFrameReader(bytes.NewReader(data), 0, size)
		prev := int64(-1)
		for range len(data) + 2 {
			off := fr.Offset()
			if off <= prev || off > size {
				t.Fatalf("offset %d after %d (size %d)", off, prev, size)
			}
			typ, payload, err := fr.Next()
			if errors.Is(err, io.EOF) {
				if off != size {
					t.Fatalf("EOF at %d of %d", off, size)
				}
				return
			}
			if err != nil {
				var fe *Error
				if !errors.Is(err, ErrCorrupt) || !errors.As(err, &fe) || fe.Offset != off {
					t.Fatalf("error %v at %d", err, off)
				}
				next, found, ferr := fr.FindValid(off + 1)
				if ferr != nil {
					t.Fatal(ferr)
				}
				if !found {
					return
				}
				if next <= off {
					t.Fatalf("FindValid(%d) = %d", off+1, next)
				}
				fr.Resync(next)
				prev = off
				continue
			}
			if typ == 0 || len(payload) > MaxPayload || frameCRC(typ, payload) != le32(data[off+4:]) {
				t.Fatalf("frame at %d: type %d, %d bytes, bad CRC accepted", off, typ, len(payload))
			}
			if !bytes.Equal(payload, data[off+FrameHeaderSize:off+FrameHeaderSize+int64(len(payload))]) {
				t.Fatalf("payload at %d differs from the data", off)
			}
			prev = off
		}
		t.Fatalf("reader did not finish")
	})
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// FuzzDecodeSamples decodes arbitrary SAMPLES payloads against the test
// session's streams with a 1 MiB batch limit (so the fuzzer cannot make it
// allocate much): no panic, errors match ErrInvalid, and a decoded batch has
// exactly n times, non-decreasing, and fields of the declared sizes.
func FuzzDecodeSamples(f *testing.F) {
	streams := testSession().Streams
	f.Add(samplesPayload(0, encodingRaw, 0, 3, rawImuBody(0, 3)))
	f.Add(samplesPayload(0, encodingZstd, 0, 2, zstdBody(f, rawImuBody(3, 2))))
	f.Add(samplesPayload(0, encodingZstd, 0, 200, zstdBody(f, make([]byte, 200*24))))
	f.Add(samplesPayload(1, encodingRaw, 0, 1, rawImuBody(0, 1)))
	f.Add(samplesPayload(0, encodingRaw, 0, 0xffffffff, nil))
	f.Add([]byte{0, 0, 1})
	layouts, err := sensorLayouts(streams)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		d := &samplesDecoder{limit: 1 << 20}
		b, err := d.decode(payload, layouts)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not match ErrInvalid", err)
			}
			return
		}
		h, _ := parseSamplesHeader(payload)
		if b.Len() != int(h.N) || len(b.Fields) != 2 || len(b.Fields[0]) != 4*b.Len() || len(b.Fields[1]) != 12*b.Len() {
			t.Fatalf("batch of %d samples, fields %d/%d bytes", b.Len(), len(b.Fields[0]), len(b.Fields[1]))
		}
		for i := 1; i < b.Len(); i++ {
			if b.Times[i] < b.Times[i-1] {
				t.Fatalf("times go backwards at %d", i)
			}
		}
	})
}

// memSegment is a segment held in memory.
type memSegment struct{ *bytes.Reader }

func (memSegment) Close() error           { return nil }
func (m memSegment) Size() (int64, error) { return m.Reader.Size(), nil }

// FuzzOpen opens arbitrary one-segment journals strictly and in salvage mode:
// never a panic; an error is an *Error matching one sentinel, or the journal
// reads and every indexed batch decodes through a cursor. Run it with a short
// -fuzzminimizetime (make fuzz does): minimising a segment-sized input for
// Go's default 60 s looks like a stall (docs/reliability.md).
func FuzzOpen(f *testing.F) {
	f.Add(readSegment(f, writeSession(f, WriterOptions{}, standardSteps(f)), 1))
	tiny, err := os.ReadFile("testdata/tiny-session/journal/000001.cjl")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(tiny)
	f.Add(tiny[:3000])
	// In memory: one empty session directory (for the MEDIA checks) and the
	// segment served from the input, no file per input; fast enough for
	// the fuzzer to explore.
	dir := f.TempDir()
	names := []string{SegmentName(1)}
	f.Fuzz(func(t *testing.T, seg []byte) {
		opener := func(string) (segmentReader, error) { return memSegment{bytes.NewReader(seg)}, nil }
		for _, opts := range []Options{{}, {Salvage: true}} {
			j, err := openWith(context.Background(), dir, names, opts, opener)
			if err != nil {
				var fe *Error
				if !errors.As(err, &fe) {
					t.Fatalf("error %v is not an *Error", err)
				}
				matched := 0
				for _, s := range []error{ErrCorrupt, ErrSegmentGap, ErrBadHeader, ErrInvalid, ErrSpec} {
					if errors.Is(err, s) {
						matched++
					}
				}
				if matched != 1 {
					t.Fatalf("error %v matches %d sentinels", err, matched)
				}
				continue
			}
			for _, s := range j.Info.Streams {
				if s.Kind != KindSensor {
					continue
				}
				c, err := j.Samples(s.ID)
				if err != nil {
					t.Fatal(err)
				}
				var n int64
				for c.Next() {
					n += int64(c.Batch().Len())
				}
				if c.Err() != nil || n != j.Report.Samples[s.ID].Samples {
					t.Fatalf("stream %s: cursor read %d samples (%v), report says %d", s.ID, n, c.Err(), j.Report.Samples[s.ID].Samples)
				}
				c.Close()
			}
		}
	})
}

// frameCRC is the checksum a frame of type typ and payload carries.
func frameCRC(typ uint8, payload []byte) uint32 {
	crc := crc32.Update(0, castagnoli, []byte{typ})
	return crc32.Update(crc, castagnoli, payload)
}

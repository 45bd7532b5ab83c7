package journal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestWriterRoundTrip writes the standard session with several segment sizes
// and reads it back: every record, every sample, and segments that respect
// the size (a record larger than the size goes alone into a segment).
func TestWriterRoundTrip(t *testing.T) {
	t.Parallel()
	for _, size := range []int64{0, 2000, 700, 1} {
		t.Run(itoa64(size), func(t *testing.T) {
			dir := writeSession(t, WriterOptions{SegmentSize: size}, standardSteps(t))
			j, err := open(t, dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			r := j.Report
			if r.RecordCounts["SESSION"] != 1 || r.RecordCounts["SPEC"] != 1 || r.RecordCounts["EVENT"] != 6 ||
				r.RecordCounts["SAMPLES"] != 3 || r.RecordCounts["MEDIA"] != 1 || r.RecordCounts["END"] != 1 {
				t.Errorf("record counts %v", r.RecordCounts)
			}
			if r.Unterminated || r.Torn != nil || j.End.Reason != "completed" {
				t.Errorf("report %+v", r)
			}
			for _, s := range r.Segments {
				if size > 0 && s.Size > size && s.Records != 1 {
					t.Errorf("segment %s: %d bytes over %d with %d records", s.Name, s.Size, size, s.Records)
				}
			}
			if size == 1 && len(r.Segments) != 13 {
				t.Errorf("%d segments, want one per record", len(r.Segments))
			}
			times, fields := allSamples(t, j, "imu")
			wantT, wantF := imuFields(0, 30)
			if len(times) != 30 || !bytes.Equal(fields[0], wantF[0]) || !bytes.Equal(fields[1], wantF[1]) || times[29] != wantT[29] {
				t.Errorf("samples differ: %v", times)
			}
			if j.Media[0].Path != "media/front/000001.webm" || j.Report.MissingMedia[0] != j.Media[0].Path {
				t.Errorf("media %+v missing %v", j.Media, j.Report.MissingMedia)
			}
		})
	}
}

// TestWriterDeterministic writes the same calls twice and compares bytes.
func TestWriterDeterministic(t *testing.T) {
	t.Parallel()
	a := writeSession(t, WriterOptions{SegmentSize: 900}, standardSteps(t))
	b := writeSession(t, WriterOptions{SegmentSize: 900}, standardSteps(t))
	for seq := uint32(1); ; seq++ {
		pa, pb := filepath.Join(a, "journal", SegmentName(seq)), filepath.Join(b, "journal", SegmentName(seq))
		da, errA := os.ReadFile(pa)
		db, errB := os.ReadFile(pb)
		if errA != nil || errB != nil {
			if (errA == nil) != (errB == nil) || seq < 3 {
				t.Fatalf("segment %d: %v / %v", seq, errA, errB)
			}
			return
		}
		if !bytes.Equal(da, db) {
			t.Fatalf("segment %d differs", seq)
		}
	}
}

// TestWriterChecksAndClose checks argument errors (which leave the writer
// usable), a restart starting a new segment, and use after Close.
func TestWriterChecksAndClose(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := NewWriter(dir, WriterOptions{now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	must(t, w.WriteSession(testSession()))
	times, fields := imuFields(0, 2)
	for _, c := range []struct {
		name   string
		stream uint16
		times  []int64
		fields [][]byte
	}{
		{"no samples", 0, nil, nil},
		{"video stream", 1, times, fields},
		{"unknown stream", 5, times, fields},
		{"missing field", 0, times, fields[:1]},
		{"short field", 0, times, [][]byte{fields[0][:7], fields[1]}},
	} {
		if err := w.WriteSamples(c.stream, c.times, c.fields, false); err == nil {
			t.Errorf("%s: WriteSamples succeeded", c.name)
		}
	}
	bad := testSession()
	bad.Streams[0].Fields[0].Dtype = "float16"
	if err := w.WriteSession(bad); !errors.Is(err, ErrInvalid) {
		t.Errorf("WriteSession with a bad dtype = %v", err)
	}
	if err := w.writeRecord(TypeEvent, make([]byte, MaxPayload+1)); err == nil {
		t.Error("writeRecord over the limit succeeded")
	}
	must(t, w.WriteSamples(0, times, fields, true))
	must(t, w.Close())
	if err := w.WriteEnd(End{T: 1, Reason: "completed"}); !errors.Is(err, ErrClosed) {
		t.Errorf("WriteEnd after Close = %v", err)
	}
	if err := w.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close = %v", err)
	}

	// A restarted recorder continues in segment 2.
	w, err = NewWriter(dir, WriterOptions{now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	must(t, w.WriteSpec(testSpecRecord(t)))
	must(t, w.WriteEnd(End{T: 1, Reason: "stopped"}))
	must(t, w.Close())
	j, err := open(t, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Report.Segments) != 2 || j.Report.Samples["imu"].Samples != 2 || j.End.Reason != "stopped" {
		t.Errorf("report %+v", j.Report)
	}
}

// writeRecord appends one record of type typ with payload as it is, without
// any check but the frame's limits (tests write damaged journals with it).
func (w *Writer) writeRecord(typ uint8, payload []byte) error {
	return w.write(typ, payload, false)
}

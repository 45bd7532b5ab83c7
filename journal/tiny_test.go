package journal

import (
	"encoding/binary"
	"math"
	"testing"
)

// TestTinySession reads the example session an independent implementation
// wrote (testdata/tiny-session, not this package's writer) and checks exactly
// what testdata/tiny-session/README.md lists.
func TestTinySession(t *testing.T) {
	t.Parallel()
	j, err := open(t, "testdata/tiny-session", Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := j.Report
	if len(r.Segments) != 1 || r.Segments[0].Name != "000001.cjl" || r.Segments[0].Size != 6336 || r.Segments[0].Records != 23 {
		t.Errorf("segments = %+v, want one 000001.cjl of 6336 bytes and 23 records", r.Segments)
	}
	wantCounts := map[string]int{"SESSION": 1, "SPEC": 1, "EVENT": 18, "SAMPLES": 2, "END": 1}
	if len(r.RecordCounts) != len(wantCounts) {
		t.Errorf("record counts = %v, want %v", r.RecordCounts, wantCounts)
	}
	for k, v := range wantCounts {
		if r.RecordCounts[k] != v {
			t.Errorf("record counts[%s] = %d, want %d", k, r.RecordCounts[k], v)
		}
	}
	if r.Torn != nil || r.Skipped != nil || r.Unterminated || r.UnknownRecordTypes != nil || r.UnknownEventKinds != nil {
		t.Errorf("report has damage or unknowns: %+v", r)
	}
	if j.End == nil || j.End.Reason != "completed" || j.End.T != 22e9 {
		t.Errorf("END = %+v, want completed at 22 s", j.End)
	}
	if j.Info.SessionID != "tiny-1" || len(j.Info.Streams) != 1 {
		t.Fatalf("SESSION = %+v", j.Info)
	}
	imu := j.Info.Streams[0]
	if imu.ID != "imu" || imu.Kind != KindSensor || imu.RateHz != 10 || len(imu.Fields) != 2 ||
		imu.Fields[0].Name != "seq" || imu.Fields[0].Dtype != DtypeInt32 || len(imu.Fields[0].Shape) != 0 ||
		imu.Fields[1].Name != "accel" || imu.Fields[1].Dtype != DtypeFloat32 || len(imu.Fields[1].Shape) != 1 || imu.Fields[1].Shape[0] != 3 {
		t.Errorf("imu stream = %+v", imu)
	}
	const hash = "aee59fc5d374ceabbde2329a52ced8b16ad6f318cac5cb619e4b4a824187a502"
	if j.SpecRecord == nil || j.SpecRecord.Hash != hash || j.Spec == nil || j.Spec.Hash() != hash {
		t.Errorf("spec hash: record %v, recomputed %v; want %s", j.SpecRecord, j.Spec, hash)
	}
	if j.Spec != nil {
		task, ok := j.Spec.Task("wave")
		if !ok || task.Type != "timed" || *task.DurationS != 1 || *task.RepeatCount != 2 || *task.ResetTimeS != 5 || j.Spec.CycleCount != 1 {
			t.Errorf("spec task wave = %+v (cycles %d)", task, j.Spec.CycleCount)
		}
	}
	if len(j.Events) != 18 {
		t.Errorf("%d events, want 18", len(j.Events))
	}
	if st := r.Samples["imu"]; st.Samples != 220 || st.Batches != 2 || st.FirstT != 0 || st.LastT != 219*100e6 {
		t.Errorf("samples stats = %+v", st)
	}

	// The first batch is raw (i = 0 … 109), the second zstd (i = 110 … 219).
	wantEnc := []uint8{EncodingRaw, EncodingZstd}
	for k, ref := range j.index[0] {
		seg := readSegment(t, j.Dir, 1)
		if enc := seg[ref.off+FrameHeaderSize+2]; enc != wantEnc[k] {
			t.Errorf("batch %d encoding %d, want %d", k, enc, wantEnc[k])
		}
		if ref.n != 110 || ref.first != int64(110*k)*100e6 {
			t.Errorf("batch %d = %+v", k, ref)
		}
	}

	c, err := j.Samples("imu")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	i := 0
	for c.Next() {
		b := c.Batch()
		for s := range b.Len() {
			if b.Times[s] != int64(i)*100e6 {
				t.Fatalf("sample %d: t = %d", i, b.Times[s])
			}
			if seq := int32(binary.LittleEndian.Uint32(b.Fields[0][4*s:])); seq != int32(i) {
				t.Fatalf("sample %d: seq = %d", i, seq)
			}
			for k := range 3 {
				got := math.Float32frombits(binary.LittleEndian.Uint32(b.Fields[1][12*s+4*k:]))
				if got != float32((k+1)*i) || b.Float64At(1, 3*s+k) != float64((k+1)*i) {
					t.Fatalf("sample %d: accel[%d] = %v", i, k, got)
				}
			}
			i++
		}
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	if i != 220 {
		t.Errorf("cursor gave %d samples, want 220", i)
	}
}

// TestDocExample decodes the SAMPLES payload of the package doc's example.
func TestDocExample(t *testing.T) {
	t.Parallel()
	payload := []byte{
		0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe1, 0xf5, 0x05, 0x00, 0x00, 0x00, 0x00,
		0x07, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00,
	}
	if len(payload) != 0x20 {
		t.Fatalf("payload is %d bytes, the doc says 32", len(payload))
	}
	b, err := DecodeSamples(payload, []Stream{{ID: "s", Kind: KindSensor, Fields: []Field{{Name: "seq", Dtype: DtypeInt32}}}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Len() != 2 || b.Times[1] != 100e6 || b.Float64At(0, 0) != 7 || b.Float64At(0, 1) != 8 {
		t.Errorf("batch %+v", b)
	}
	if SegmentHeaderSize != len(SegmentMagic)+8 || FrameHeaderSize != 9 || SamplesHeaderSize != 8 {
		t.Error("wire sizes changed")
	}
}

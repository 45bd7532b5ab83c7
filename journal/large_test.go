package journal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestLargeSegmentDamage reads a segment of several read chunks with a
// corrupted frame in the middle and a torn tail, in salvage mode: the skipped
// range and the tear are where they were made, every other batch is read,
// and the segment's SHA-256 is that of the whole file.
func TestLargeSegmentDamage(t *testing.T) {
	t.Parallel()
	var steps []step
	steps = append(steps, func(w *Writer) error { return w.WriteSession(testSession()) })
	const batches, per = 200, 500 // 200 raw batches of 12 KB: 2.4 MB, ten read chunks
	for k := range batches {
		steps = append(steps, func(w *Writer) error {
			tm, f := imuFields(k*per, per)
			return w.WriteSamples(0, tm, f, false)
		})
	}
	src := writeSession(t, WriterOptions{}, steps)
	seg := readSegment(t, src, 1)
	offs := frameOffsets(t, seg)
	// Break batch 100's CRC and cut batch 199 short.
	bad := offs[1+100]
	seg[bad+4] ^= 0xff
	tear := offs[1+199]
	seg = seg[:tear+1000]
	dir := writeSegments(t, seg)

	if _, err := Open(context.Background(), dir, Options{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("strict Open = %v, want ErrCorrupt", err)
	}
	j, err := Open(context.Background(), dir, Options{Salvage: true})
	if err != nil {
		t.Fatal(err)
	}
	r := j.Report
	if len(r.Skipped) != 1 || r.Skipped[0].Offset != bad || r.Skipped[0].Length != offs[1+101]-bad {
		t.Errorf("skipped %+v, want one range at %d", r.Skipped, bad)
	}
	if r.Torn == nil || r.Torn.Offset != tear || r.Torn.Bytes != 1000 {
		t.Errorf("torn %+v, want at %d", r.Torn, tear)
	}
	sum := sha256.Sum256(seg)
	if r.Segments[0].SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("segment SHA-256 %s, want %x", r.Segments[0].SHA256, sum)
	}
	times, _ := allSamples(t, j, "imu")
	if len(times) != (batches-2)*per {
		t.Errorf("read %d samples, want %d", len(times), (batches-2)*per)
	}

	// The cursor seeks by time and notices a segment changed after Open
	// (before the cursor reads that far: it reads ahead in groups).
	c, err := j.Samples("imu")
	if err != nil {
		t.Fatal(err)
	}
	c.SeekTime(int64(150*per) * 100e6)
	f, err := os.OpenFile(filepath.Join(dir, "journal", "000001.cjl"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xee}, offs[1+160]+100); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if !c.Next() || c.Batch().Times[0] != int64(150*per)*100e6 || c.remains != int64(48*per) {
		t.Fatalf("after SeekTime: %v", c.Err())
	}
	read := 1
	for c.Next() {
		read++
	}
	if read != 10 {
		t.Errorf("read %d batches from 150 before the change at 160, want 10", read)
	}
	var fe *Error
	if !errors.Is(c.Err(), ErrCorrupt) || !errors.As(c.Err(), &fe) || fe.Offset != offs[1+160] {
		t.Errorf("cursor over a changed segment: %v", c.Err())
	}
	must(t, c.Close())
	if _, err := j.Samples("front"); err == nil {
		t.Error("Samples of a video stream succeeded")
	}
	if _, err := j.Samples("nope"); err == nil {
		t.Error("Samples of an unknown stream succeeded")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(ctx, dir, Options{Salvage: true}); !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a cancelled context = %v", err)
	}
}

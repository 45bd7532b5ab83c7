package journal

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/testenv"
)

// frameIndex returns the index of the frame that holds byte off, given frame
// offsets as frameOffsets returns them (the last entry is the end).
func frameIndex(offs []int64, off int64) int {
	for k := 0; k+1 < len(offs); k++ {
		if off >= offs[k] && off < offs[k+1] {
			return k
		}
	}
	return -1
}

// damageStride is how far apart the offsets the damage tests try in -short
// mode lie (testenv.Sampled): prime, so that the sample falls on every
// position within the frames' headers and payloads across the segment.
const damageStride = 7

// TestTruncation cuts a writer-built session at every byte offset and checks
// that Open never panics, reads exactly the frames before the cut and
// reports the torn tail at the start of the cut frame.
func TestTruncation(t *testing.T) {
	t.Parallel()
	src := writeSession(t, WriterOptions{}, standardSteps(t))
	full := readSegment(t, src, 1)
	offs := frameOffsets(t, full)
	sessionEnd := offs[1]
	keep := append(slices.Clone(offs), SegmentHeaderSize)
	dir := writeSegments(t, nil)
	path := filepath.Join(dir, "journal", "000001.cjl")
	for cut := int64(0); cut <= int64(len(full)); cut++ {
		if !testenv.Sampled(cut, damageStride, keep) {
			continue
		}
		if err := os.WriteFile(path, full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		j, err := open(t, dir, Options{})
		switch {
		case cut < SegmentHeaderSize:
			if !errors.Is(err, ErrBadHeader) {
				t.Fatalf("cut %d: %v, want ErrBadHeader", cut, err)
			}
			continue
		case cut < sessionEnd:
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("cut %d: %v, want ErrInvalid (no SESSION)", cut, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		// Frames wholly before the cut are read; the frame the cut falls in
		// is the torn tail.
		whole := 0
		for k := 0; k+1 < len(offs) && offs[k+1] <= cut; k++ {
			whole++
		}
		records := 0
		for _, n := range j.Report.RecordCounts {
			records += n
		}
		if records != whole || j.Report.Segments[0].Records != whole {
			t.Fatalf("cut %d: read %d records, want %d", cut, records, whole)
		}
		atBoundary := offs[whole] == cut
		if atBoundary != (j.Report.Torn == nil) {
			t.Fatalf("cut %d: torn = %+v, at frame boundary %v", cut, j.Report.Torn, atBoundary)
		}
		if !atBoundary {
			want := TornTail{Segment: "000001.cjl", Offset: offs[whole], Bytes: cut - offs[whole]}
			if *j.Report.Torn != want {
				t.Fatalf("cut %d: torn = %+v, want %+v", cut, *j.Report.Torn, want)
			}
		}
		if j.Report.Unterminated != (cut != int64(len(full))) {
			t.Fatalf("cut %d: unterminated %v", cut, j.Report.Unterminated)
		}
		times, _ := allSamples(t, j, "imu")
		if int64(len(times)) != j.Report.Samples["imu"].Samples {
			t.Fatalf("cut %d: cursor read %d samples, report says %d", cut, len(times), j.Report.Samples["imu"].Samples)
		}
	}
}

// TestBitFlips flips every bit of every segment of a three-segment journal
// and checks that each flip is detected. A flipped bit in a frame's type or
// payload breaks its CRC, and one in its length or CRC fields breaks the
// check too (the chance that a changed length lands on bytes whose CRC
// matches is 2^-32, and the bytes here are fixed). So the allowed outcomes
// are exactly:
//   - a flip in a segment header: ErrBadHeader naming that segment;
//   - a flip in any frame but the last of the last segment: ErrCorrupt naming
//     that segment and the frame's offset (later valid frames exist, or the
//     segment is not the last);
//   - a flip in the last frame of the last segment: no error, a torn tail at
//     that frame's offset reaching the end of the file, and the journal
//     unterminated because that frame is END.
func TestBitFlips(t *testing.T) {
	t.Parallel()
	src := writeSession(t, WriterOptions{SegmentSize: 700}, standardSteps(t))
	var segs [][]byte
	for seq := uint32(1); ; seq++ {
		if _, err := os.Stat(filepath.Join(src, "journal", SegmentName(seq))); err != nil {
			break
		}
		segs = append(segs, readSegment(t, src, seq))
	}
	if len(segs) < 3 {
		t.Fatalf("want at least 3 segments, got %d", len(segs))
	}
	dir := writeSegments(t, segs...)
	for si, seg := range segs {
		name := SegmentName(uint32(si + 1))
		last := si == len(segs)-1
		offs := frameOffsets(t, seg)
		keep := append(slices.Clone(offs), SegmentHeaderSize)
		f, err := os.OpenFile(filepath.Join(dir, "journal", name), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		for off := range int64(len(seg)) {
			if !testenv.Sampled(off, damageStride, keep) {
				continue
			}
			for bit := range 8 {
				b := []byte{seg[off] ^ 1<<bit}
				if _, err := f.WriteAt(b, off); err != nil {
					t.Fatal(err)
				}
				j, err := open(t, dir, Options{})
				k := frameIndex(offs, off)
				switch {
				case off < SegmentHeaderSize:
					var fe *Error
					if !errors.Is(err, ErrBadHeader) || !errors.As(err, &fe) || fe.Segment != name {
						t.Fatalf("%s byte %d bit %d: %v, want ErrBadHeader", name, off, bit, err)
					}
				case last && k == len(offs)-2:
					want := TornTail{Segment: name, Offset: offs[k], Bytes: int64(len(seg)) - offs[k]}
					if err != nil || j.Report.Torn == nil || *j.Report.Torn != want || !j.Report.Unterminated {
						t.Fatalf("%s byte %d bit %d: err %v, report %+v; want torn tail %+v", name, off, bit, err, j, want)
					}
				default:
					var fe *Error
					if !errors.Is(err, ErrCorrupt) || !errors.As(err, &fe) || fe.Segment != name || fe.Offset != offs[k] {
						t.Fatalf("%s byte %d bit %d: %v, want ErrCorrupt at %s@%d", name, off, bit, err, name, offs[k])
					}
				}
			}
			if _, err := f.WriteAt(seg[off:off+1], off); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
	}
}

// limitedFile is a segment file that fails once it has taken limit bytes,
// keeping the part of the failing write that fits (a full disk).
type limitedFile struct {
	f     *os.File
	left  *int64
	syncs *int
}

var errDiskFull = errors.New("test: disk full")

func (l *limitedFile) Write(p []byte) (int, error) {
	if int64(len(p)) <= *l.left {
		*l.left -= int64(len(p))
		return l.f.Write(p)
	}
	n, err := l.f.Write(p[:*l.left])
	*l.left = 0
	if err != nil {
		return n, err
	}
	return n, errDiskFull
}

func (l *limitedFile) Sync() error {
	if l.syncs != nil {
		*l.syncs++
	}
	return nil
}

func (l *limitedFile) Close() error { return l.f.Close() }

// newLimitedWriter returns a Writer on dir whose segment files together take
// at most limit bytes; syncs counts Sync calls when not nil.
func newLimitedWriter(t testing.TB, dir string, limit int64, opts WriterOptions, syncs *int) (*Writer, error) {
	jdir := filepath.Join(dir, "journal")
	if err := os.MkdirAll(jdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if opts.now == nil {
		opts.now = fixedNow
	}
	left := limit
	create := func(path string) (segmentFile, error) {
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		return &limitedFile{f: f, left: &left, syncs: syncs}, nil
	}
	return newWriter(jdir, opts, create, func() error { return nil })
}

// TestWriterFailsAfterN runs the standard session on a writer whose disk
// fills after n bytes, for every n: after the first failure every call
// returns that same error, Close returns it and a second Close ErrClosed, and
// what reached the disk reads as the records before the failure plus a torn
// tail.
func TestWriterFailsAfterN(t *testing.T) {
	t.Parallel()
	ref := readSegment(t, writeSession(t, WriterOptions{}, standardSteps(t)), 1)
	offs := frameOffsets(t, ref)
	steps := standardSteps(t)
	dir := t.TempDir()
	// The disk fills at every byte in make test; in -short at every
	// damageStride-th, and at and just before each frame boundary, the
	// segment header's end and the segment's end.
	keep := append(slices.Clone(offs), SegmentHeaderSize, int64(len(ref)))
	for n := int64(0); n <= int64(len(ref)); n++ {
		if !testenv.Sampled(n, damageStride, keep) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, "journal")); err != nil {
			t.Fatal(err)
		}
		w, err := newLimitedWriter(t, dir, n, WriterOptions{}, nil)
		if n < SegmentHeaderSize {
			if !errors.Is(err, errDiskFull) {
				t.Fatalf("n %d: NewWriter = %v, want the disk-full error", n, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("n %d: %v", n, err)
		}
		var first error
		for i, s := range steps {
			err := s(w)
			if first == nil {
				first = err
				continue
			}
			if err != first {
				t.Fatalf("n %d step %d: %v, want the first error %v", n, i, err, first)
			}
		}
		if (first == nil) != (n == int64(len(ref))) || (first != nil && !errors.Is(first, errDiskFull)) {
			t.Fatalf("n %d: first error %v", n, first)
		}
		if err := w.Sync(); err != first {
			t.Fatalf("n %d: Sync = %v, want %v", n, err, first)
		}
		if err := w.Close(); err != first {
			t.Fatalf("n %d: Close = %v, want %v", n, err, first)
		}
		if err := w.Close(); !errors.Is(err, ErrClosed) {
			t.Fatalf("n %d: second Close = %v, want ErrClosed", n, err)
		}
		if n < offs[1] {
			continue // SESSION did not reach the disk
		}
		j, err := open(t, dir, Options{})
		if err != nil {
			t.Fatalf("n %d: Open: %v", n, err)
		}
		k := frameIndex(offs, n)
		if k >= 0 && offs[k] != n {
			if j.Report.Torn == nil || j.Report.Torn.Offset != offs[k] || j.Report.Torn.Bytes != n-offs[k] {
				t.Fatalf("n %d: torn %+v, want at %d", n, j.Report.Torn, offs[k])
			}
		} else if j.Report.Torn != nil {
			t.Fatalf("n %d: torn %+v at a frame boundary", n, j.Report.Torn)
		}
	}
}

// TestWriterSyncs checks fsync at attempt boundaries and END, and by the
// clock otherwise.
func TestWriterSyncs(t *testing.T) {
	t.Parallel()
	syncs := 0
	now := fixedNow()
	w, err := newLimitedWriter(t, t.TempDir(), 1<<30, WriterOptions{now: func() time.Time { return now }}, &syncs)
	if err != nil {
		t.Fatal(err)
	}
	expect := func(what string, want int) {
		t.Helper()
		if syncs != want {
			t.Fatalf("after %s: %d syncs, want %d", what, syncs, want)
		}
	}
	expect("segment start", 1)
	must(t, w.WriteSession(testSession()))
	must(t, w.WriteSpec(testSpecRecord(t)))
	must(t, w.WriteEvent(Event{T: 0, Kind: EventRunStart}))
	expect("run_start", 1)
	for _, k := range []string{EventAttemptStart, EventAttemptEnd, EventRetry} {
		must(t, w.WriteEvent(Event{T: 1, Kind: k, Task: "wave", Cycle: 1, Repetition: 1, Attempt: 1, Cause: "next"}))
	}
	expect("attempt boundaries", 4)
	now = now.Add(999 * time.Millisecond)
	must(t, w.WriteEvent(Event{T: 2, Kind: EventPrompt, Text: "x"}))
	expect("999 ms", 4)
	now = now.Add(time.Millisecond)
	must(t, w.WriteEvent(Event{T: 2, Kind: EventPrompt, Text: "x"}))
	expect("1 s", 5)
	must(t, w.WriteEnd(End{T: 3, Reason: "completed"}))
	expect("END", 6)
	must(t, w.Close())
	expect("Close", 7)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var _ io.Writer = (*limitedFile)(nil)

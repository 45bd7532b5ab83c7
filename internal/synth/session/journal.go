package session

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/ceres-robotics/ceres-export/journal"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// batchWindow is how much sensor time one SAMPLES record holds: a recorder
// flushes its buffers about twice a second.
const batchWindow = 500 * millisecond

// sensorGen produces one sensor stream's samples on demand: sample i is due
// at about i periods plus a deterministic jitter of under 3 ms.
type sensorGen struct {
	index  uint16 // position in SESSION.streams
	id     string
	period int64
	offset int64
	next   int // index of the next sample
	seed   uint64
	fill   func(b *sampleBatch, i int, t int64)
}

func (g *sensorGen) time(i int) int64 {
	// A cheap hash of (seed, i) gives reproducible jitter in whole
	// microseconds; times stay increasing because jitter < period.
	h := (uint64(i)+1)*0x9e3779b97f4a7c15 ^ g.seed
	h ^= h >> 29
	jitter := int64(h%3000) * 1000
	return g.offset + int64(i)*g.period + jitter
}

// sampleBatch accumulates one SAMPLES record column by column.
type sampleBatch struct {
	times  []int64
	fields [][]byte
}

func (b *sampleBatch) reset(nfields int) {
	b.times = b.times[:0]
	if len(b.fields) != nfields {
		b.fields = make([][]byte, nfields)
	}
	for i := range b.fields {
		b.fields[i] = b.fields[i][:0]
	}
}

func putF32(dst []byte, v float32) []byte {
	return binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
}

func sensorGens(session journal.Session, seed uint64) []*sensorGen {
	var gens []*sensorGen
	for i, s := range session.Streams {
		switch s.ID {
		case imuStream:
			gens = append(gens, &sensorGen{index: uint16(i), id: s.ID, period: 10 * millisecond, seed: seed,
				fill: func(b *sampleBatch, n int, t int64) {
					ts := float64(t) / float64(second)
					b.fields[0] = putF32(b.fields[0], float32(n)) // accel.x reveals the sample
					b.fields[0] = putF32(b.fields[0], float32(math.Sin(ts)))
					b.fields[0] = putF32(b.fields[0], float32(9.81+float64(0.1*math.Cos(3*ts))))
					b.fields[1] = putF32(b.fields[1], float32(0.5*math.Sin(2*ts)))
					b.fields[1] = putF32(b.fields[1], float32(0.5*math.Cos(2*ts)))
					b.fields[1] = putF32(b.fields[1], float32(n%100)/100)
				}})
		case gripperStream:
			gens = append(gens, &sensorGen{index: uint16(i), id: s.ID, period: 100 * millisecond, offset: 5 * millisecond, seed: seed ^ 0xabcdef,
				fill: func(b *sampleBatch, n int, _ int64) {
					closed := byte(0)
					if (n/13)%2 == 1 {
						closed = 1
					}
					b.fields[0] = append(b.fields[0], closed)
					b.fields[1] = binary.LittleEndian.AppendUint32(b.fields[1], uint32(int32(n)))
					b.fields[2] = binary.LittleEndian.AppendUint64(b.fields[2], math.Float64bits(float64(n)+0.25))
					b.fields[3] = append(b.fields[3], byte(n%256))
				}})
		case probeStream:
			// Values far outside float32's exact range (int64 above 2^53,
			// float64 with more than 24 significant bits) show any narrowing.
			gens = append(gens, &sensorGen{index: uint16(i), id: s.ID, period: 33 * millisecond, offset: 2 * millisecond, seed: seed ^ 0x5eed,
				fill: func(b *sampleBatch, n int, _ int64) {
					b.fields[0] = binary.LittleEndian.AppendUint64(b.fields[0], uint64(int64(1)<<60+int64(n)))
					b.fields[1] = binary.LittleEndian.AppendUint32(b.fields[1], uint32(int32(-n)))
					b.fields[1] = binary.LittleEndian.AppendUint32(b.fields[1], uint32(int32(n*1000)))
					b.fields[2] = append(b.fields[2], byte(n%256), byte(255-n%256))
					b.fields[3] = append(b.fields[3], byte(n%2), byte((n/3)%2))
					b.fields[4] = binary.LittleEndian.AppendUint64(b.fields[4], math.Float64bits(1e9+float64(n)/3))
					b.fields[4] = binary.LittleEndian.AppendUint64(b.fields[4], math.Float64bits(-float64(n)*1e-7))
				}})
		}
	}
	return gens
}

// writeJournal writes SESSION, SPEC, then events, MEDIA records and sensor
// batches interleaved in time, as the recorder appends them; then END, or,
// for a crash, a torn record instead.
func writeJournal(dir string, session journal.Session, spec *taskspec.Spec, specJSON []byte,
	tl timeline, cams []CameraFile, opts Options, res *Result, pace func(t int64) error) error {
	wopts := journal.WriterOptions{SegmentSize: opts.SegmentSize, Preallocate: opts.Preallocate}
	w, err := journal.NewWriter(dir, wopts)
	if err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	defer func() { _ = w.Close() }()
	if err := w.WriteSession(session); err != nil {
		return err
	}
	if err := w.WriteSpec(journal.SpecRecord{T: 0, Hash: spec.Hash(), Specification: specJSON}); err != nil {
		return err
	}
	media := make([]journal.Media, 0, len(cams))
	for _, cf := range cams {
		media = append(media, journal.Media{T: cf.StartT + 20*millisecond, Stream: cf.Stream, Path: cf.Path,
			Container: opts.CameraCodec.Container(), StartT: cf.StartT + opts.CameraStartError})
	}
	slices.SortStableFunc(media, func(a, b journal.Media) int { return int(a.T - b.T) })

	gens := sensorGens(session, opts.Seed)
	if opts.Motion == MotionArm {
		gens = armGens(session, opts.Seed)
	}
	var batch sampleBatch
	events := tl.events
	restartAt := int64(-1)
	if opts.Faults.Restart {
		restartAt = tl.end / 2
	}
	for w0 := int64(0); w0 <= tl.end; w0 += batchWindow {
		w1 := min(w0+batchWindow, tl.end+1)
		if pace != nil {
			// A recorder appends a batch once its time has passed.
			if err := pace(w1); err != nil {
				return err
			}
		}
		if restartAt >= 0 && w0 >= restartAt {
			restartAt = -1
			if w, err = restart(w, dir, session, wopts, w0, res); err != nil {
				return err
			}
		}
		for len(media) > 0 && media[0].T < w1 {
			if err := w.WriteMedia(media[0]); err != nil {
				return err
			}
			media = media[1:]
		}
		for len(events) > 0 && events[0].T < w1 {
			if err := w.WriteEvent(events[0]); err != nil {
				return err
			}
			res.Events++
			events = events[1:]
		}
		for _, g := range gens {
			batch.reset(len(session.Streams[g.index].Fields))
			for t := g.time(g.next); t < w1; t = g.time(g.next) {
				batch.times = append(batch.times, t)
				g.fill(&batch, g.next, t)
				g.next++
			}
			if len(batch.times) == 0 {
				continue
			}
			// Alternate raw and zstd bodies, as a recorder that compresses
			// only large batches would.
			compress := (w0/batchWindow)%2 == 1
			if err := w.WriteSamples(g.index, batch.times, batch.fields, compress); err != nil {
				return err
			}
			res.Samples[g.id] += len(batch.times)
		}
	}
	if pace != nil {
		if err := pace(tl.end); err != nil {
			return err
		}
	}
	if opts.Faults.Crash {
		return tearTail(w, dir, res)
	}
	if err := w.WriteEnd(journal.End{T: tl.end, Reason: "completed"}); err != nil {
		return err
	}
	return w.Close()
}

// restart crashes the recorder of w at time t, tearing the record it was
// appending, and starts it again as a restarted recorder does: a new
// segment whose first record is the session's SESSION record.
func restart(w *journal.Writer, dir string, session journal.Session, wopts journal.WriterOptions, t int64, res *Result) (*journal.Writer, error) {
	if err := w.WriteEvent(journal.Event{T: t, Kind: journal.EventPrompt, Text: "torn"}); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	torn, err := tearLastRecord(dir)
	if err != nil {
		return nil, err
	}
	nw, err := journal.NewWriter(dir, wopts)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	if err := nw.WriteSession(session); err != nil {
		_ = nw.Close()
		return nil, err
	}
	res.Faults = append(res.Faults, fmt.Sprintf("restart: the recorder crashed at %.3f s (%s) and restarted in a new segment", float64(t)/1e9, torn))
	return nw, nil
}

// tearLastRecord damages the last record of the journal's last segment as a
// crash in the middle of its append leaves it: the file cut before its last
// 20 bytes, or, in a preallocated segment, those bytes still zero. It says
// what it did.
func tearLastRecord(dir string) (string, error) {
	segments, err := filepath.Glob(filepath.Join(dir, "journal", "*.cjl"))
	if err != nil || len(segments) == 0 {
		return "", fmt.Errorf("synth: no journal segments to tear: %v", err)
	}
	last := segments[len(segments)-1]
	f, err := os.OpenFile(last, os.O_RDWR, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	fr := journal.NewFrameReader(f, journal.SegmentHeaderSize, fi.Size())
	start, end := int64(-1), int64(-1)
	for {
		off := fr.Offset()
		if _, _, err := fr.Next(); err != nil {
			break
		}
		start, end = off, fr.Offset()
	}
	const cut = 20 // of a record of about 60 bytes
	if end < journal.SegmentHeaderSize+cut {
		return "", fmt.Errorf("synth: %s has no record to tear", last)
	}
	if end == fi.Size() {
		err = f.Truncate(end - cut)
	} else {
		_, err = f.WriteAt(make([]byte, cut), end-cut)
	}
	if err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	return fmt.Sprintf("last record of %s (offset %d, %d bytes) torn, its last %d bytes lost", filepath.Base(last), start, end-start, cut), nil
}

// tearTail appends one more event and cuts it in half, as power loss in the
// middle of an append leaves the last segment.
func tearTail(w *journal.Writer, dir string, res *Result) error {
	if err := w.WriteEvent(journal.Event{T: res.End, Kind: journal.EventPrompt, Text: "torn"}); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	torn, err := tearLastRecord(dir)
	if err != nil {
		return err
	}
	res.Faults = append(res.Faults, "crash: no END, "+torn)
	return nil
}

// corruptFirstSegment flips one payload byte of the record in the middle of
// segment 1, so that valid records follow the damage.
func corruptFirstSegment(dir string, res *Result) error {
	path := filepath.Join(dir, "journal", journal.SegmentName(1))
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	fr := journal.NewFrameReader(f, journal.SegmentHeaderSize, fi.Size())
	var offsets []int64
	for {
		off := fr.Offset()
		if _, _, err := fr.Next(); err != nil {
			break
		}
		offsets = append(offsets, off)
	}
	if len(offsets) < 3 {
		return fmt.Errorf("synth: segment 1 too short to corrupt")
	}
	off := offsets[len(offsets)/2] + journal.FrameHeaderSize + 2
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		return err
	}
	b[0] ^= 0x5a
	if _, err := f.WriteAt(b, off); err != nil {
		return err
	}
	res.Faults = append(res.Faults, fmt.Sprintf("corruption: byte at %s offset %d flipped", journal.SegmentName(1), off))
	return f.Sync()
}

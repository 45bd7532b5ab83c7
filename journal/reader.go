package journal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// Options controls Open. The zero value reads strictly.
type Options struct {
	// Salvage makes corruption (an invalid frame followed by a valid one, or
	// any invalid frame in a segment that is not the last) not an error: the
	// reader resyncs on the next valid frame and lists every skipped byte range
	// in Report.Skipped.
	Salvage bool
}

// Journal is a session's journal after one validating pass: the small
// records held in memory and the SAMPLES records indexed per stream, read on
// demand through Samples.
type Journal struct {
	// Dir is the session directory.
	Dir string
	// Info is the SESSION record.
	Info Session
	// SpecRecord is the SPEC record, nil when the journal has none (only
	// possible when it has no known EVENT either).
	SpecRecord *SpecRecord
	// Spec is SpecRecord's specification, validated by taskspec and with the
	// recorder's hash; nil when SpecRecord is.
	Spec *taskspec.Spec
	// Events are the EVENT records of known kinds, in journal order (times
	// non-decreasing).
	Events []Event
	// EventPlaces[i] is where Events[i] is in the journal.
	EventPlaces []Place
	// Media are the MEDIA records in journal order.
	Media []Media
	// End is the END record; nil for an unterminated session.
	End *End
	// Report describes what the pass found.
	Report Report

	segments    []string        // segment file paths, in order
	openSegment segmentOpener   // opens one of segments
	layouts     []*streamLayout // per stream in Info.Streams; nil for non-sensor streams
	index       [][]batchRef    // per stream: its SAMPLES records in order
}

// batchRef locates one SAMPLES record for a cursor.
type batchRef struct {
	seg         int32  // index into Journal.segments
	length      uint32 // payload length
	off         int64  // frame offset in the segment
	n           uint32
	first, last int64 // first and last sample time
}

// Report is what a pass over a journal found, for people and for `journal
// inspect --json`.
type Report struct {
	Segments []SegmentInfo `json:"segments"`
	// RecordCounts counts the records of each known type by name ("EVENT").
	RecordCounts map[string]int `json:"recordCounts"`
	// UnknownRecordTypes counts records of types the format does not define.
	UnknownRecordTypes map[uint8]int `json:"unknownRecordTypes,omitempty"`
	// UnknownEventKinds counts EVENT records of kinds the format does not define.
	UnknownEventKinds map[string]int `json:"unknownEventKinds,omitempty"`
	// Samples summarises each sensor stream's samples, by stream id.
	Samples map[string]SampleStats `json:"samples"`
	// Torn is the torn tail dropped at the end of the last segment, if any.
	Torn *TornTail `json:"tornTail,omitempty"`
	// Restarts lists the segments a restarted recorder started, in order
	// (docs/journal-format.md, "A recorder restart").
	Restarts []Restart `json:"restarts,omitempty"`
	// Skipped lists the byte ranges salvage skipped, in order.
	Skipped []ByteRange `json:"skipped,omitempty"`
	// Unterminated is true when the journal has no END record.
	Unterminated bool `json:"unterminated"`
	// MissingMedia lists MEDIA paths with no file (yet), in journal order.
	MissingMedia []string `json:"missingMedia,omitempty"`
}

// SegmentInfo describes one segment file.
type SegmentInfo struct {
	Name    string `json:"name"`
	Size    int64  `json:"size"`
	SHA256  string `json:"sha256"`
	Records int    `json:"records"` // valid frames read
}

// SampleStats summarises one sensor stream.
type SampleStats struct {
	Batches int   `json:"batches"`
	Samples int64 `json:"samples"`
	FirstT  int64 `json:"firstT"` // 0 when there are no samples
	LastT   int64 `json:"lastT"`
}

// TornTail locates the bytes dropped at the end of the last segment.
type TornTail struct {
	Segment string `json:"segment"`
	Offset  int64  `json:"offset"`
	Bytes   int64  `json:"bytes"`
}

// Restart is a segment a restarted recorder started: its first record is
// the session's SESSION record again. Torn is the end of the segment before
// it that the crash left torn, nil when the crash left none.
type Restart struct {
	Segment string     `json:"segment"`
	Torn    *ByteRange `json:"torn,omitempty"`
}

// ByteRange is a range of a segment that salvage skipped.
type ByteRange struct {
	Segment string `json:"segment"`
	Offset  int64  `json:"offset"`
	Length  int64  `json:"length"`
}

// Place is where a record is: its segment file and the byte offset of its
// frame.
type Place struct {
	Segment string `json:"segment"`
	Offset  int64  `json:"offset"`
}

// String formats as "segment 000002.cjl offset 4096".
func (p Place) String() string { return fmt.Sprintf("segment %s offset %d", p.Segment, p.Offset) }

// SegmentName returns the file name of segment seq ("000001.cjl").
func SegmentName(seq uint32) string { return fmt.Sprintf("%06d.cjl", seq) }

// Open reads the journal of the session directory dir in one streaming pass:
// it checks every frame and validates every record, holds the small records
// and indexes the SAMPLES records. A torn tail and a missing END are reported
// in Report, not errors. Format errors are *Error values matching ErrCorrupt,
// ErrSegmentGap, ErrBadHeader, ErrInvalid or ErrSpec; other errors are I/O
// errors or ctx's.
func Open(ctx context.Context, dir string, opts Options) (*Journal, error) {
	names, err := listSegments(filepath.Join(dir, "journal"))
	if err != nil {
		return nil, err
	}
	return openWith(ctx, dir, names, opts, openSegmentFile)
}

// segmentOpener opens a segment for reading; Open's opens the file at
// path (regular files only), the fuzz targets' serve bytes from memory.
type segmentOpener func(path string) (segmentReader, error)

// segmentReader is an open segment.
type segmentReader interface {
	io.ReaderAt
	io.Closer
	Size() (int64, error)
}

type segmentOnDisk struct{ *os.File }

func (f segmentOnDisk) Size() (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func openSegmentFile(path string) (segmentReader, error) {
	f, err := input.Open(path)
	if err != nil {
		return nil, err
	}
	return segmentOnDisk{f}, nil
}

// openWith is Open over the segments names of dir's journal, read through
// openSeg (also by the cursors of the journal it returns).
func openWith(ctx context.Context, dir string, names []string, opts Options, openSeg segmentOpener) (*Journal, error) {
	s := &scan{
		ctx:  ctx,
		opts: opts,
		j: &Journal{Dir: dir, Report: Report{
			RecordCounts: map[string]int{},
			Samples:      map[string]SampleStats{},
		}},
		dec: samplesDecoder{limit: MaxSamplesBody},
	}
	s.j.openSegment = openSeg
	s.names = names
	for i, name := range names {
		path := filepath.Join(dir, "journal", name)
		s.j.segments = append(s.j.segments, path)
		if err := s.segment(i, name, path, i == len(names)-1); err != nil {
			return nil, err
		}
	}
	if !s.haveSession {
		return nil, &Error{Segment: names[0], Offset: SegmentHeaderSize, Err: invalidf("no SESSION record")}
	}
	if err := s.checkMediaFiles(); err != nil {
		return nil, err
	}
	s.j.Report.Unterminated = s.j.End == nil
	return s.j, nil
}

// listSegments returns the segment file names in journalDir in order,
// checking that they are numbered from 1 without gaps. Other files are
// ignored.
func listSegments(journalDir string) ([]string, error) {
	entries, err := os.ReadDir(journalDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &Error{Segment: SegmentName(1), Err: &kindError{msg: "no journal directory", kind: ErrSegmentGap, err: err}}
		}
		return nil, err
	}
	var seqs []uint64
	for _, e := range entries {
		name := e.Name()
		digits, ok := strings.CutSuffix(name, ".cjl")
		if !ok || len(digits) < 6 || strings.Trim(digits, "0123456789") != "" {
			continue
		}
		seq, err := strconv.ParseUint(digits, 10, 32)
		if err != nil || SegmentName(uint32(seq)) != name || seq == 0 {
			return nil, &Error{Segment: name, Err: headerf("segment file name is not a canonical sequence number")}
		}
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	names := make([]string, len(seqs))
	for i, seq := range seqs {
		if seq != uint64(i+1) {
			return nil, &Error{Segment: SegmentName(uint32(i + 1)), Err: &kindError{msg: fmt.Sprintf("segment missing (next present is %s)", SegmentName(uint32(seq))), kind: ErrSegmentGap}}
		}
		names[i] = SegmentName(uint32(seq))
	}
	if len(names) == 0 {
		return nil, &Error{Segment: SegmentName(1), Err: &kindError{msg: "segment missing (no segment in journal/)", kind: ErrSegmentGap}}
	}
	return names, nil
}

// scan is the state of Open's pass.
type scan struct {
	ctx  context.Context
	opts Options
	j    *Journal
	dec  samplesDecoder

	haveSession    bool
	lastEventT     int64
	haveEvent      bool // a known EVENT has been read (lastEventT is set)
	sawEventRecord bool
	lastSampleT    []int64 // per stream
	haveSample     []bool
	mediaPlaces    []Error  // where each MEDIA record is, for errors about its file
	names          []string // the segments' file names
	// tornBeforeRestart is the torn end of the segment just read, whose
	// next segment a restarted recorder started.
	tornBeforeRestart *ByteRange
}

// segment reads one segment file.
func (s *scan) segment(idx int, name, path string, last bool) error {
	f, err := s.j.openSegment(path)
	if err != nil {
		return err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return err
	}
	info := SegmentInfo{Name: name, Size: size}
	sum := sha256.New()
	hashed, err := s.header(f, idx, name, size, last, sum)
	if err != nil {
		return err
	}
	if hashed < SegmentHeaderSize { // a torn header in the last segment
		info.SHA256 = hex.EncodeToString(sum.Sum(nil))
		s.j.Report.Segments = append(s.j.Report.Segments, info)
		return nil
	}
	fr := NewFrameReader(f, SegmentHeaderSize, size)
	fr.w.onRead = func(off int64, p []byte) {
		if off <= hashed && off+int64(len(p)) > hashed {
			sum.Write(p[hashed-off:])
			hashed = off + int64(len(p))
		}
	}
	for {
		if fr.Records()%256 == 0 {
			if err := s.ctx.Err(); err != nil {
				return err
			}
		}
		off := fr.Offset()
		typ, payload, err := fr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) || !errors.Is(err, ErrCorrupt) {
				return &Error{Segment: name, Offset: off, Record: fr.Records() + 1, Err: errors.Unwrap(err)}
			}
			stop, err := s.invalidFrame(fr, fe, idx, name, size, last)
			if err != nil {
				return err
			}
			if stop {
				break
			}
			continue
		}
		if err := s.record(idx, last, typ, payload, off, fr.Records()); err != nil {
			return &Error{Segment: name, Offset: off, Record: fr.Records(), Err: err}
		}
	}
	// Hash what the pass did not read (a torn tail, a skipped range).
	if hashed < size {
		if _, err := io.Copy(sum, io.NewSectionReader(f, hashed, size-hashed)); err != nil {
			return err
		}
	}
	info.SHA256 = hex.EncodeToString(sum.Sum(nil))
	info.Records = fr.Records()
	s.j.Report.Segments = append(s.j.Report.Segments, info)
	return nil
}

// header checks the segment header and returns how many bytes of the file it
// hashed: SegmentHeaderSize, or less for a last segment cut short in its
// header (a torn tail at offset 0; the recorder crashed while starting it).
func (s *scan) header(f io.ReaderAt, idx int, name string, size int64, last bool, sum hash.Hash) (int64, error) {
	var want [SegmentHeaderSize]byte
	copy(want[:], segmentMagic)
	binary.LittleEndian.PutUint32(want[8:], formatVersion)
	binary.LittleEndian.PutUint32(want[12:], uint32(idx+1))
	var h [SegmentHeaderSize]byte
	n, err := f.ReadAt(h[:], 0)
	if n < SegmentHeaderSize && !errors.Is(err, io.EOF) {
		return 0, err
	}
	sum.Write(h[:n])
	if n < SegmentHeaderSize {
		if last && idx > 0 && bytes.Equal(h[:n], want[:n]) {
			s.j.Report.Torn = &TornTail{Segment: name, Offset: 0, Bytes: size}
			return int64(n), nil
		}
		return 0, &Error{Segment: name, Err: headerf("header cut short (%d of %d bytes)", n, SegmentHeaderSize)}
	}
	if string(h[:8]) != segmentMagic {
		return 0, &Error{Segment: name, Err: headerf("magic %q is not %q", h[:8], segmentMagic)}
	}
	if v := binary.LittleEndian.Uint32(h[8:]); v != formatVersion {
		return 0, &Error{Segment: name, Offset: 8, Err: headerf("format version %d is not %d", v, formatVersion)}
	}
	if seq := binary.LittleEndian.Uint32(h[12:]); seq != uint32(idx+1) {
		return 0, &Error{Segment: name, Offset: 12, Err: headerf("sequence number %d does not match the file name", seq)}
	}
	return SegmentHeaderSize, nil
}

// invalidFrame decides, by looking for a later valid frame, whether the
// invalid frame fe is a torn tail or corruption, and salvages if asked. stop
// means the segment ends here.
func (s *scan) invalidFrame(fr *FrameReader, fe *Error, idx int, name string, size int64, last bool) (stop bool, err error) {
	bad := fe.Offset
	// Zeros to the end are space a preallocating recorder has not written
	// (yet): no record, no damage.
	zero, err := fr.ZeroFrom(bad)
	if err != nil {
		return false, &Error{Segment: name, Offset: bad, Err: err}
	}
	if zero {
		return true, nil
	}
	next, found, err := fr.FindValid(bad + 1)
	if err != nil {
		return false, &Error{Segment: name, Offset: bad, Err: err}
	}
	if !found && last {
		s.j.Report.Torn = &TornTail{Segment: name, Offset: bad, Bytes: size - bad}
		return true, nil
	}
	if !found {
		// A crash tears only the end of the segment being written; the
		// restarted recorder then starts the next segment with SESSION.
		// Without that signature the damage is corruption.
		restart, err := s.restartsAt(idx + 1)
		if err != nil {
			return false, err
		}
		if restart {
			s.tornBeforeRestart = &ByteRange{Segment: name, Offset: bad, Length: size - bad}
			return true, nil
		}
	}
	if !s.opts.Salvage {
		why := "in a segment that is not the last"
		if found {
			why = fmt.Sprintf("a valid frame follows at offset %d", next)
		}
		return false, &Error{Segment: name, Offset: bad, Record: fe.Record,
			Err: &kindError{msg: fe.Err.Error() + " (" + why + ")", kind: ErrCorrupt}}
	}
	end := size
	if found {
		end = next
	}
	s.j.Report.Skipped = append(s.j.Report.Skipped, ByteRange{Segment: name, Offset: bad, Length: end - bad})
	if !found {
		return true, nil
	}
	fr.Resync(next)
	return false, nil
}

// restartsAt reports whether segment idx starts with a SESSION record: the
// signature of a restarted recorder (its SESSION is checked when the
// segment is read).
func (s *scan) restartsAt(idx int) (bool, error) {
	if idx >= len(s.names) {
		return false, nil
	}
	f, err := s.j.openSegment(filepath.Join(s.j.Dir, "journal", s.names[idx]))
	if err != nil {
		return false, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return false, err
	}
	typ, _, err := NewFrameReader(f, SegmentHeaderSize, size).Next()
	return err == nil && typ == TypeSession, nil
}

// record validates and takes one valid frame: the rec'th of segment idx, at
// offset off.
func (s *scan) record(idx int, last bool, typ uint8, payload []byte, off int64, rec int) error {
	j := s.j
	known := typ >= TypeSession && typ <= TypeEnd
	if !known {
		if j.Report.UnknownRecordTypes == nil {
			j.Report.UnknownRecordTypes = map[uint8]int{}
		}
		j.Report.UnknownRecordTypes[typ]++
		if !s.haveSession {
			return invalidf("%s record before SESSION", recordName(typ))
		}
		return nil
	}
	j.Report.RecordCounts[recordName(typ)]++
	if j.End != nil {
		return invalidf("%s record after END", recordName(typ))
	}
	if typ == TypeSession {
		if s.haveSession && idx > 0 && rec == 1 {
			return s.restart(idx, payload)
		}
		if s.haveSession {
			return invalidf("second SESSION record")
		}
		if idx != 0 || rec != 1 {
			return invalidf("SESSION is not the first record of segment 1")
		}
		info, layouts, err := parseSession(payload)
		if err != nil {
			return err
		}
		j.Info = *info
		j.layouts = layouts
		j.index = make([][]batchRef, len(layouts))
		s.lastSampleT = make([]int64, len(layouts))
		s.haveSample = make([]bool, len(layouts))
		for _, st := range info.Streams {
			if st.Kind == KindSensor {
				j.Report.Samples[st.ID] = SampleStats{}
			}
		}
		s.haveSession = true
		return nil
	}
	if !s.haveSession {
		return invalidf("%s record before SESSION (the first record of segment 1 must be SESSION)", recordName(typ))
	}
	switch typ {
	case TypeSpec:
		return s.spec(payload)
	case TypeEvent:
		return s.event(payload, Place{Segment: SegmentName(uint32(idx + 1)), Offset: off})
	case TypeSamples:
		return s.samples(idx, payload, off)
	case TypeMedia:
		m, err := parseMedia(payload, j.Info.Streams)
		if err != nil {
			return err
		}
		j.Media = append(j.Media, *m)
		s.mediaPlaces = append(s.mediaPlaces, Error{Segment: SegmentName(uint32(idx + 1)), Offset: off, Record: rec})
		return nil
	default: // TypeEnd
		if !last {
			return invalidf("END record in a segment that is not the last")
		}
		e, err := parseEnd(payload)
		if err != nil {
			return err
		}
		j.End = e
		return nil
	}
}

// restart takes the SESSION record that starts segment idx: a restarted
// recorder's, which must be the session's own.
func (s *scan) restart(idx int, payload []byte) error {
	info, _, err := parseSession(payload)
	if err != nil {
		return err
	}
	if info.SessionID != s.j.Info.SessionID || !reflect.DeepEqual(info.Streams, s.j.Info.Streams) {
		return invalidf("SESSION of a restarted recorder (session %q) is not the session's SESSION (session %q): a different session id or streams", info.SessionID, s.j.Info.SessionID)
	}
	s.j.Report.Restarts = append(s.j.Report.Restarts, Restart{Segment: s.names[idx], Torn: s.tornBeforeRestart})
	s.tornBeforeRestart = nil
	return nil
}

func (s *scan) spec(payload []byte) error {
	j := s.j
	if j.SpecRecord != nil {
		return invalidf("second SPEC record")
	}
	if s.sawEventRecord {
		return invalidf("SPEC record after the first EVENT")
	}
	rec, err := parseSpecRecord(payload)
	if err != nil {
		return err
	}
	spec, err := taskspec.Parse(rec.Specification)
	if err != nil {
		return wrapKind(ErrSpec, err, "SPEC: specification")
	}
	if got := spec.Hash(); got != rec.Hash {
		return &kindError{msg: fmt.Sprintf("SPEC: recorder's hash %s differs from the specification's hash %s", rec.Hash, got), kind: ErrSpec}
	}
	j.SpecRecord = rec
	j.Spec = spec
	return nil
}

func (s *scan) event(payload []byte, at Place) error {
	j := s.j
	s.sawEventRecord = true // of any kind: SPEC comes before the first EVENT record
	ev, known, err := parseEvent(payload)
	if err != nil {
		return err
	}
	if !known {
		if j.Report.UnknownEventKinds == nil {
			j.Report.UnknownEventKinds = map[string]int{}
		}
		j.Report.UnknownEventKinds[ev.Kind]++
		return nil
	}
	if j.SpecRecord == nil {
		return invalidf("EVENT %s before the SPEC record", ev.Kind)
	}
	if ev.Task != "" {
		if _, ok := j.Spec.Task(ev.Task); !ok {
			return invalidf("EVENT %s: task %q is not a task of the specification", ev.Kind, ev.Task)
		}
	}
	if s.haveEvent && ev.T < s.lastEventT {
		return invalidf("EVENT %s: t %d is before the previous event's t %d", ev.Kind, ev.T, s.lastEventT)
	}
	s.haveEvent = true
	s.lastEventT = ev.T
	j.Events = append(j.Events, ev)
	j.EventPlaces = append(j.EventPlaces, at)
	return nil
}

func (s *scan) samples(idx int, payload []byte, off int64) error {
	j := s.j
	b, err := s.dec.decode(payload, j.layouts)
	if err != nil {
		return err
	}
	st := b.Stream
	first, last := b.Times[0], b.Times[len(b.Times)-1]
	id := j.Info.Streams[st].ID
	if s.haveSample[st] && first < s.lastSampleT[st] {
		return invalidf("SAMPLES: stream %q: first time %d is before the previous batch's last time %d", id, first, s.lastSampleT[st])
	}
	s.haveSample[st] = true
	s.lastSampleT[st] = last
	j.index[st] = append(j.index[st], batchRef{seg: int32(idx), length: uint32(len(payload)), off: off, n: uint32(len(b.Times)), first: first, last: last})
	stats := j.Report.Samples[id]
	if stats.Batches == 0 {
		stats.FirstT = first
	}
	stats.Batches++
	stats.Samples += int64(len(b.Times))
	stats.LastT = last
	j.Report.Samples[id] = stats
	return nil
}

// checkMediaFiles resolves each MEDIA path against the file system: a path
// whose links lead out of the session directory is an error; a file that does
// not exist (yet) is reported in Report.MissingMedia.
func (s *scan) checkMediaFiles() error {
	j := s.j
	if len(j.Media) == 0 {
		return nil
	}
	root, err := filepath.EvalSymlinks(j.Dir)
	if err != nil {
		return err
	}
	if root, err = filepath.Abs(root); err != nil {
		return err
	}
	for i, m := range j.Media {
		real, err := filepath.EvalSymlinks(filepath.Join(j.Dir, filepath.FromSlash(m.Path)))
		if errors.Is(err, fs.ErrNotExist) {
			j.Report.MissingMedia = append(j.Report.MissingMedia, m.Path)
			continue
		}
		if err != nil {
			return fmt.Errorf("MEDIA %s: %w", m.Path, err)
		}
		if real, err = filepath.Abs(real); err != nil {
			return err
		}
		rel, err := filepath.Rel(root, real)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			e := s.mediaPlaces[i]
			e.Err = invalidf("MEDIA: path %q links out of the session directory (to %s)", m.Path, real)
			return &e
		}
	}
	return nil
}

// StreamIndex returns the index of stream id in Info.Streams, or -1.
func (j *Journal) StreamIndex(id string) int {
	for i, s := range j.Info.Streams {
		if s.ID == id {
			return i
		}
	}
	return -1
}

// Segments returns the paths of the segment files, in order.
func (j *Journal) Segments() []string { return slices.Clone(j.segments) }

// LatestTime returns the greatest record time the journal holds: of its
// events, MEDIA records, sample batches and END; 0 when it holds none. A
// reader following a journal being written takes it as how far the
// recording has come.
func (j *Journal) LatestTime() int64 {
	var t int64
	for _, e := range j.Events {
		t = max(t, e.T)
	}
	for _, m := range j.Media {
		t = max(t, m.T)
	}
	for _, refs := range j.index {
		if n := len(refs); n > 0 {
			t = max(t, refs[n-1].last)
		}
	}
	if j.End != nil {
		t = max(t, j.End.T)
	}
	return t
}

package video

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/asticode/go-astiav"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/media"
)

// ErrIncompatible is returned by Joiner.Append, before anything is written,
// when a source's stream cannot continue the joined file: another codec,
// size, colour properties or codec configuration (extradata, which also
// fixes the pixel format). The caller starts a
// new file for it.
var ErrIncompatible = errors.New("video: stream parameters differ from the joined file's")

// JoinedPart says where Joiner.Append put a source file: its frames are
// frames [FirstFrame, FirstFrame+Frames) of the joined file, at k/fps.
type JoinedPart struct {
	FirstFrame, Frames int
}

// Joiner writes one constant-rate mp4 by stream copy from whole source mp4
// files, appended in order: packets are never decoded, only re-timed onto
// one frame grid (frame k of the joined file has pts = dts = k in time base
// 1/fps, duration 1), so a source frame keeps its exact bytes and the file's
// duration is frames/fps. Every source must itself be on the grid (frame k at
// k/fps from its first, no reordering) and start with a key frame; the moov
// atom is at the front of the finished file.
type Joiner struct {
	path   string
	fps    int
	sig    media.StreamSignature // the first source's
	fc     *astiav.FormatContext
	ioc    *astiav.IOContext
	stream *astiav.Stream
	pkt    *astiav.Packet
	frames int
	bytes  int64
	closed bool
	// planned is the frame count announced to NewJoiner (0: unknown).
	planned int
	// wb is the joined file opened a second time, to start its writeback
	// every writebackStep bytes (startWriteback); written is where it was
	// last started.
	wb      *os.File
	written int64
	// prepared are the sources Prepare opens ahead, in order.
	prepared []*preparedSource
}

// preparedSource is a source being opened ahead of its AppendRange.
type preparedSource struct {
	path string
	done chan struct{}
	s    *joinSource
	err  error
}

// writebackStep is how many bytes a Joiner writes between two starts of
// the kernel's writeback.
const writebackStep = 8 << 20

// NewJoiner prepares a joined file at path (created on the first Append).
// frames, when positive, is the number of frames the file will hold: the
// index (moov) is then written into space reserved at the front instead of
// being moved there by a second pass over the file (faststart), which would
// read and write every byte again. Appending more frames than that is an
// error at Close.
func NewJoiner(path string, fps, frames int) (*Joiner, error) {
	if fps <= 0 {
		return nil, fmt.Errorf("join %s: fps must be positive, got %d", path, fps)
	}
	return &Joiner{path: path, fps: fps, planned: frames}, nil
}

// moovReserve bounds the moov atom of a one-track mp4 of n frames: fixed
// boxes (mvhd, tkhd, edts, mdia, hdlr, vmhd, dinf, stsd, stts, udta) in
// 8 KiB plus the codec configuration twice, and per frame at most one
// entry in each of stsz (4 bytes), stss (4), stsc (12) and co64 (8).
func moovReserve(n, extradata int) int { return 8192 + 2*extradata + 32*n }

// Prepare starts opening src, for an AppendRange to come after those
// already prepared, while the caller goes on: FFmpeg's reading of the
// container's header and index then overlaps the copy of the sources
// before it (a merge of 256 small shards joins a source a millisecond, and
// opening it was a third of that). AppendRange takes prepared sources in
// order; those it passes by, and any left at Close or Abort, are closed.
func (j *Joiner) Prepare(src string) {
	p := &preparedSource{path: src, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.s, p.err = openJoinSource(src, false)
	}()
	j.prepared = append(j.prepared, p)
}

// takePrepared returns src opened by Prepare, closing the prepared
// sources before it; nil, nil if src was not prepared.
func (j *Joiner) takePrepared(src string) (*joinSource, error) {
	i := slices.IndexFunc(j.prepared, func(p *preparedSource) bool { return p.path == src })
	if i < 0 {
		return nil, nil
	}
	for _, p := range j.prepared[:i] {
		<-p.done
		if p.s != nil {
			p.s.close()
		}
	}
	p := j.prepared[i]
	j.prepared = j.prepared[i+1:]
	<-p.done
	return p.s, p.err
}

// dropPrepared closes every prepared source.
func (j *Joiner) dropPrepared() {
	for _, p := range j.prepared {
		<-p.done
		if p.s != nil {
			p.s.close()
		}
	}
	j.prepared = nil
}

// source is one opened input of Append.
type joinSource struct {
	fc     *astiav.FormatContext
	stream *astiav.Stream
	sig    media.StreamSignature // from the header, before any probing
}

// openJoinSource opens path's one video stream. Its signature is taken from
// the container's header alone; probe also runs FindStreamInfo (which
// decodes the first frames, about 3.5 ms for a 640×480 H.264 file), needed
// only for the codec parameters a joined file is created with.
func openJoinSource(path string, probe bool) (_ *joinSource, err error) {
	s := &joinSource{fc: astiav.AllocFormatContext()}
	if s.fc == nil {
		return nil, fmt.Errorf("%s: alloc format context failed", path)
	}
	// FFmpeg would block on a FIFO for ever: only regular files.
	if err := input.Check(path); err != nil {
		return nil, err
	}
	if err := s.fc.OpenInput(path, nil, nil); err != nil {
		s.fc.Free()
		return nil, fmt.Errorf("%s: open: %w", path, err)
	}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	for _, st := range s.fc.Streams() {
		switch st.CodecParameters().MediaType() {
		case astiav.MediaTypeVideo:
			if s.stream != nil {
				return nil, fmt.Errorf("%s: more than one video stream", path)
			}
			s.stream = st
		default:
			return nil, fmt.Errorf("%s: stream %d is not video (%s); a LeRobot video file holds one video stream", path, st.Index(), st.CodecParameters().MediaType())
		}
	}
	if s.stream == nil {
		return nil, fmt.Errorf("%s: no video stream", path)
	}
	s.sig = signatureOf(s.stream.CodecParameters())
	if probe {
		if err := s.probe(path); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *joinSource) probe(path string) error {
	if err := s.fc.FindStreamInfo(nil); err != nil {
		return fmt.Errorf("%s: stream info: %w", path, err)
	}
	return nil
}

func (s *joinSource) close() {
	s.fc.CloseInput()
	s.fc.Free()
}

func signatureOf(cp *astiav.CodecParameters) media.StreamSignature {
	return media.StreamSignature{
		Codec: cp.CodecID().Name(), Width: cp.Width(), Height: cp.Height(),
		Color:     [4]int{int(cp.ColorSpace()), int(cp.ColorRange()), int(cp.ColorPrimaries()), int(cp.ColorTransferCharacteristic())},
		ExtraData: hex.EncodeToString(cp.ExtraData()),
	}
}

// ReadStreamSignature opens path and returns its video stream's signature
// (it reads the header only).
func ReadStreamSignature(path string) (media.StreamSignature, error) {
	s, err := openJoinSource(path, false)
	if err != nil {
		return media.StreamSignature{}, err
	}
	defer s.close()
	return s.sig, nil
}

// open creates the output with the first source's codec parameters.
func (j *Joiner) open(cp *astiav.CodecParameters, sig media.StreamSignature) (err error) {
	defer func() {
		if err != nil {
			j.free()
		}
	}()
	if err := os.MkdirAll(filepath.Dir(j.path), 0o755); err != nil {
		return fmt.Errorf("join %s: %w", j.path, err)
	}
	if j.fc, err = astiav.AllocOutputFormatContext(nil, "mp4", j.path); err != nil {
		return fmt.Errorf("join %s: muxer mp4: %w", j.path, err)
	}
	if j.stream = j.fc.NewStream(nil); j.stream == nil {
		return fmt.Errorf("join %s: new stream failed", j.path)
	}
	j.sig = sig
	if err := copyWithoutBitRate(cp, j.stream.CodecParameters()); err != nil {
		return fmt.Errorf("join %s: codec parameters: %w", j.path, err)
	}
	// Let the mp4 muxer choose the tag for the codec (the source's may
	// come from another container).
	j.stream.CodecParameters().SetCodecTag(0)
	tb := astiav.NewRational(1, j.fps)
	j.stream.SetTimeBase(tb)
	j.stream.SetAvgFrameRate(astiav.NewRational(j.fps, 1))
	j.stream.SetRFrameRate(astiav.NewRational(j.fps, 1))
	if j.ioc, err = astiav.OpenIOContext(j.path, astiav.NewIOContextFlags(astiav.IOContextFlagWrite), nil, nil); err != nil {
		return fmt.Errorf("join %s: create: %w", j.path, err)
	}
	j.fc.SetPb(j.ioc)
	if j.wb, err = os.Open(j.path); err != nil {
		return fmt.Errorf("join %s: %w", j.path, err)
	}
	mux := map[string]string{"movflags": "+faststart"}
	if j.planned > 0 {
		mux = map[string]string{"moov_size": strconv.Itoa(moovReserve(j.planned, len(cp.ExtraData())))}
	}
	md, err := newDictionary(mux)
	if err != nil {
		return fmt.Errorf("join %s: %w", j.path, err)
	}
	err = j.fc.WriteHeader(md)
	left := leftover(md)
	md.Free()
	if err != nil {
		return fmt.Errorf("join %s: write header: %w", j.path, err)
	}
	if len(left) > 0 {
		return fmt.Errorf("join %s: muxer mp4 does not know options %v", j.path, left)
	}
	j.pkt = astiav.AllocPacket()
	return nil
}

// copyWithoutBitRate copies src's codec parameters to dst with bit_rate 0,
// through a codec context (go-astiav sets no bit_rate of parameters). The
// muxer then states the joined packets' own rate (btrt's maximum is the
// larger of bit_rate and the packets' average), so that the file depends
// on its packets alone, not on which file its first packets were copied
// from: a shard's, or a merged dataset's holding the same packets.
func copyWithoutBitRate(src, dst *astiav.CodecParameters) error {
	cc := astiav.AllocCodecContext(nil)
	if cc == nil {
		return errors.New("alloc codec context failed")
	}
	defer cc.Free()
	if err := src.ToCodecContext(cc); err != nil {
		return err
	}
	cc.SetBitRate(0)
	return dst.FromCodecContext(cc)
}

// Append copies every packet of the video stream of src onto the end of the
// joined file. It returns ErrIncompatible (wrapped, nothing written) when
// src's stream parameters differ from the first source's; any other error
// breaks the Joiner (Abort it).
func (j *Joiner) Append(ctx context.Context, src string) (JoinedPart, error) {
	return j.AppendRange(ctx, src, 0, -1)
}

// AppendRange is Append of frames [from, from+n) of src only (n < 0: to its
// end): a joined file's part, to be joined again elsewhere. Frame from must
// be a key frame, as the first frame of every part of a joined file is.
func (j *Joiner) AppendRange(ctx context.Context, src string, from, n int) (JoinedPart, error) {
	if j.closed {
		return JoinedPart{}, fmt.Errorf("join %s: already closed", j.path)
	}
	// Only the first source is probed: the joined file is created with its
	// full codec parameters; later ones need only match its header.
	s, err := j.takePrepared(src)
	if s == nil && err == nil {
		s, err = openJoinSource(src, j.fc == nil)
	} else if err == nil && j.fc == nil {
		if err = s.probe(src); err != nil {
			s.close()
		}
	}
	if err != nil {
		return JoinedPart{}, fmt.Errorf("join %s: %w", j.path, err)
	}
	defer s.close()
	if j.fc == nil {
		if err := j.open(s.stream.CodecParameters(), s.sig); err != nil {
			return JoinedPart{}, err
		}
	} else if why := j.sig.Differs(s.sig); why != "" {
		return JoinedPart{}, fmt.Errorf("join %s: %s: %s: %w", j.path, src, why, ErrIncompatible)
	}
	part := JoinedPart{FirstFrame: j.frames}
	stb := s.stream.TimeBase()
	tbNum, tbDen := int64(stb.Num()), int64(stb.Den())
	outTB := astiav.NewRational(1, j.fps)
	var first, last int64
	pkt := j.pkt
	for k := 0; ; {
		if k%256 == 0 {
			if err := ctx.Err(); err != nil {
				return part, err
			}
		}
		err := s.fc.ReadFrame(pkt)
		if errors.Is(err, astiav.ErrEof) {
			break
		}
		if err != nil {
			return part, fmt.Errorf("join %s: %s: read after packet %d: %w", j.path, src, k, err)
		}
		if pkt.StreamIndex() != s.stream.Index() {
			pkt.Unref()
			continue
		}
		pts, dts := pkt.Pts(), pkt.Dts()
		switch {
		case pts == noPTS:
			err = fmt.Errorf("packet %d has no pts", k)
		case dts != noPTS && dts != pts:
			err = fmt.Errorf("packet %d: dts %d differs from pts %d (reordered frames cannot be re-timed by copy)", k, dts, pts)
		case k == from && !pkt.Flags().Has(astiav.PacketFlagKey):
			err = fmt.Errorf("packet %d, the first copied, is not a key frame", k)
		case k > 0 && pts <= last:
			err = fmt.Errorf("packet %d: pts %d does not increase (previous %d)", k, pts, last)
		}
		if k == 0 {
			first = pts
		}
		// Frame k of the source must sit at exactly k/fps after its first:
		// (pts-first)·tb = k/fps ⇔ (pts-first)·num·fps = k·den.
		if err == nil && (pts-first)*tbNum*int64(j.fps) != int64(k)*tbDen {
			err = fmt.Errorf("packet %d at pts %d (time base %d/%d) is not frame %d of a %d fps grid", k, pts, tbNum, tbDen, k, j.fps)
		}
		if err != nil {
			pkt.Unref()
			return part, fmt.Errorf("join %s: %s: %w", j.path, src, err)
		}
		last = pts
		if k < from {
			pkt.Unref()
			k++
			continue
		}
		if n >= 0 && k >= from+n {
			pkt.Unref()
			break
		}
		out := int64(j.frames)
		pkt.SetPts(out)
		pkt.SetDts(out)
		pkt.SetDuration(1)
		pkt.SetPos(-1)
		pkt.SetStreamIndex(j.stream.Index())
		pkt.RescaleTs(outTB, j.stream.TimeBase())
		j.bytes += int64(pkt.Size())
		err = j.fc.WriteInterleavedFrame(pkt)
		pkt.Unref()
		if err != nil {
			return part, fmt.Errorf("join %s: write frame %d: %w", j.path, out, err)
		}
		j.frames++
		part.Frames++
		k++
		if j.bytes-j.written >= writebackStep {
			startWriteback(j.wb)
			j.written = j.bytes
		}
	}
	if part.Frames == 0 || (n >= 0 && part.Frames != n) {
		return part, fmt.Errorf("join %s: %s holds %d frames from frame %d, want %d", j.path, src, part.Frames, from, max(n, 1))
	}
	return part, nil
}

// Close writes the trailer (the index at the front), closes the file and
// fsyncs it. A Joiner that never had a source writes nothing.
func (j *Joiner) Close() error {
	if j.closed {
		return fmt.Errorf("join %s: already closed", j.path)
	}
	j.closed = true
	j.dropPrepared()
	if j.fc == nil {
		return nil
	}
	if j.planned > 0 && j.frames > j.planned {
		j.free()
		return fmt.Errorf("join %s: %d frames appended, %d announced", j.path, j.frames, j.planned)
	}
	if err := j.fc.WriteTrailer(); err != nil {
		j.free()
		return fmt.Errorf("join %s: write trailer: %w", j.path, err)
	}
	var err error
	if cerr := j.ioc.Close(); cerr != nil {
		err = fmt.Errorf("join %s: close: %w", j.path, cerr)
	}
	j.ioc = nil
	// The fsync, so that the output's final sync finds the file clean (and
	// a joiner's sync overlaps the caller's other work).
	if err == nil {
		if serr := j.wb.Sync(); serr != nil {
			err = fmt.Errorf("join %s: sync: %w", j.path, serr)
		}
	}
	j.free()
	return err
}

// Abort releases everything and removes the partial file.
func (j *Joiner) Abort() {
	j.closed = true
	j.dropPrepared()
	open := j.fc != nil
	j.free()
	if open {
		_ = os.Remove(j.path)
	}
}

func (j *Joiner) free() {
	if j.pkt != nil {
		j.pkt.Free()
		j.pkt = nil
	}
	if j.ioc != nil {
		_ = j.ioc.Close()
		j.ioc = nil
	}
	if j.fc != nil {
		j.fc.Free()
		j.fc = nil
	}
	if j.wb != nil {
		_ = j.wb.Close()
		j.wb = nil
	}
}

package video

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"

	"github.com/asticode/go-astiav"

	"github.com/ceres-robotics/ceres-export/internal/input"
)

// decoder reads the first video stream of one file and yields its frames in
// presentation order. A file cut short yields the frames it holds; the read
// error is kept in readErr and decoding ends as at EOF.
type decoder struct {
	path   string
	grow   *growingFile      // a file read as it grows, or nil
	ioc    *astiav.IOContext // grow's, when set
	fc     *astiav.FormatContext
	stream *astiav.Stream
	dec    *astiav.CodecContext
	pkt    *astiav.Packet
	frame  *astiav.Frame
	tb     astiav.Rational

	demuxDone bool // no more packets (EOF or read error)
	flushed   bool // SendPacket(nil) done
	drained   bool // decoder returned EOF

	drainErrs int // decoder errors met after the flush

	packets   int   // video packets read
	frames    int   // frames returned
	bytesRead int64 // end position of the last packet read
	readErr   error // first non-EOF demuxer error
	decodeErr error // first decoder error (the packet is skipped)
}

// openDecoder opens path and its first video stream's decoder. threads is
// the decoder thread count; 0 means DefaultDecoderThreads.
func openDecoder(path string, threads int) (_ *decoder, err error) {
	return openGrowingDecoder(path, nil, threads)
}

// openGrowingDecoder is openDecoder of a file read as it grows when grow
// is not nil (the decoder then owns it).
func openGrowingDecoder(path string, grow *growingFile, threads int) (_ *decoder, err error) {
	d := &decoder{path: path, grow: grow}
	defer func() {
		if err != nil {
			d.close()
		}
	}()
	if d.fc = astiav.AllocFormatContext(); d.fc == nil {
		return nil, fmt.Errorf("%s: alloc format context failed", path)
	}
	url := path
	if grow != nil {
		// The file protocol's buffer size, so that the demuxer reads as it
		// would read the file itself; no seek function: a seekable input
		// makes FFmpeg's mov demuxer read every fragment of a fragmented
		// MP4 before its first packet (to index them), which on a growing
		// file waits for its end. Read in order, a streaming file's
		// packets are the same.
		if d.ioc, err = astiav.AllocIOContext(32768, false, grow.read, nil, nil); err != nil {
			return nil, fmt.Errorf("%s: io context: %w", path, err)
		}
		d.fc.SetPb(d.ioc)
		d.fc.SetFlags(d.fc.Flags().Add(astiav.FormatContextFlagCustomIo))
		url = ""
	} else if err = input.Check(path); err != nil {
		// FFmpeg would block on a FIFO for ever: only regular files.
		return nil, err
	}
	if err = d.fc.OpenInput(url, nil, nil); err != nil {
		d.fc.Free()
		d.fc = nil
		return nil, fmt.Errorf("%s: open: %w", path, err)
	}
	if err = d.fc.FindStreamInfo(nil); err != nil {
		return nil, fmt.Errorf("%s: stream info: %w", path, err)
	}
	for _, s := range d.fc.Streams() {
		if s.CodecParameters().MediaType() == astiav.MediaTypeVideo {
			d.stream = s
			break
		}
	}
	if d.stream == nil {
		return nil, fmt.Errorf("%s: no video stream", path)
	}
	d.tb = d.stream.TimeBase()
	if err = d.openCodec(threads); err != nil {
		return nil, err
	}
	d.pkt = astiav.AllocPacket()
	d.frame = astiav.AllocFrame()
	return d, nil
}

// openCodec opens a new decoder for d's stream (threads as openDecoder).
func (d *decoder) openCodec(threads int) error {
	codec := astiav.FindDecoder(d.stream.CodecParameters().CodecID())
	if codec == nil {
		return fmt.Errorf("%s: no decoder for codec %s", d.path, d.stream.CodecParameters().CodecID())
	}
	if d.dec = astiav.AllocCodecContext(codec); d.dec == nil {
		return fmt.Errorf("%s: alloc decoder failed", d.path)
	}
	if err := d.stream.CodecParameters().ToCodecContext(d.dec); err != nil {
		return fmt.Errorf("%s: decoder parameters: %w", d.path, err)
	}
	d.dec.SetTimeBase(d.tb)
	d.dec.SetThreadCount(decoderThreads(threads))
	if err := d.dec.Open(codec, nil); err != nil {
		return fmt.Errorf("%s: open decoder %s: %w", d.path, codec.Name(), err)
	}
	return nil
}

// DefaultDecoderThreads is a decoder's thread count when none is given.
// Never FFmpeg's automatic count: that is sized by the CPUs the process may
// run on (its affinity, so a SLURM or Kubernetes CPU set, or taskset), and
// what a frame-threaded decoder reports of a damaged file, and where,
// depends on its thread count: an H.264 camera file with B-frames whose
// last packet was cut reported the damage after the flush with three
// threads and at the packet with one, and (before the drain read past it)
// yielded 687 frames instead of 689. Two frame threads keep decoding off
// the encoder's path as the automatic count did on two CPUs; fixed, the
// same on every machine.
const DefaultDecoderThreads = 2

// decoderThreads is the thread count a decoder is opened with: threads,
// or DefaultDecoderThreads for 0.
func decoderThreads(threads int) int {
	if threads <= 0 {
		return DefaultDecoderThreads
	}
	return threads
}

// maxDrainErrors bounds the decoder errors a drain reads past: each is a
// damaged packet still in the decoder, at most one per frame thread and
// reorder slot; past it the decoder is taken as done.
const maxDrainErrors = 64

// next returns the next frame in presentation order, valid until the next
// call, with its raw container pts; io.EOF after the last frame.
func (d *decoder) next() (*astiav.Frame, int64, error) {
	for {
		if d.drained {
			return nil, 0, io.EOF
		}
		d.frame.Unref()
		err := d.dec.ReceiveFrame(d.frame)
		switch {
		case err == nil:
			pts, ok := framePTS(d.frame)
			if !ok {
				return nil, 0, fmt.Errorf("%s: frame %d has no timestamp", d.path, d.frames)
			}
			d.frames++
			return d.frame, pts, nil
		case errors.Is(err, astiav.ErrEof):
			d.drained = true
			return nil, 0, io.EOF
		case !errors.Is(err, astiav.ErrEagain):
			// A damaged packet: keep the first error and go on with the
			// next packets, as players do.
			if d.decodeErr == nil {
				d.decodeErr = fmt.Errorf("%s: decode after packet %d: %w", d.path, d.packets, err)
			}
			// Draining, the frames behind the damaged one are still to
			// come: a frame-threaded decoder reports a cut last packet
			// only here, after the flush, with the frames of the packets
			// before it still queued behind it.
			if d.flushed && d.drainErrs < maxDrainErrors {
				d.drainErrs++
				continue
			}
		}
		if d.demuxDone {
			if d.flushed {
				d.drained = true
				return nil, 0, io.EOF
			}
			d.flushed = true
			if err := d.dec.SendPacket(nil); err != nil && !errors.Is(err, astiav.ErrEof) {
				return nil, 0, fmt.Errorf("%s: flush decoder: %w", d.path, err)
			}
			continue
		}
		if err := d.readPacket(); err != nil {
			return nil, 0, err
		}
	}
}

// readPacket reads and sends the next video packet, or marks the end.
func (d *decoder) readPacket() error {
	for {
		d.pkt.Unref()
		err := d.fc.ReadFrame(d.pkt)
		if err != nil {
			if !errors.Is(err, astiav.ErrEof) {
				d.readErr = fmt.Errorf("%s: read after packet %d (byte %d): %w", d.path, d.packets, d.bytesRead, err)
			}
			d.demuxDone = true
			return nil
		}
		if d.pkt.StreamIndex() != d.stream.Index() {
			continue
		}
		d.packets++
		if pos := d.pkt.Pos(); pos >= 0 {
			d.bytesRead = pos + int64(d.pkt.Size())
		}
		if err := d.dec.SendPacket(d.pkt); err != nil {
			if errors.Is(err, astiav.ErrEagain) {
				return fmt.Errorf("%s: decoder refused packet %d", d.path, d.packets)
			}
			if d.decodeErr == nil {
				d.decodeErr = fmt.Errorf("%s: decode packet %d: %w", d.path, d.packets, err)
			}
		}
		return nil
	}
}

func (d *decoder) close() {
	if d.frame != nil {
		d.frame.Free()
		d.frame = nil
	}
	if d.pkt != nil {
		d.pkt.Free()
		d.pkt = nil
	}
	if d.dec != nil {
		d.dec.Free()
		d.dec = nil
	}
	if d.fc != nil {
		d.fc.CloseInput()
		d.fc.Free()
		d.fc = nil
	}
	if d.ioc != nil {
		d.ioc.Free()
		d.ioc = nil
	}
	if d.grow != nil {
		d.grow.close()
		d.grow = nil
	}
}

// DecodedFrame is one frame handed to a DecodeEach callback.
type DecodedFrame struct {
	// Index counts frames in presentation order from 0.
	Index int
	// PTS is the raw container timestamp in TimeBase units.
	PTS int64
	// TimeBaseNum/TimeBaseDen is the stream time base in seconds.
	TimeBaseNum, TimeBaseDen int
	// Frame is the decoded picture, valid only during the callback.
	Frame *astiav.Frame
	// Colour is what its samples mean, from the frame, the container and
	// the pixel format (the exporter's reading of a source's colour).
	Colour Colour
}

// Seconds returns PTS·TimeBase exactly.
func (f DecodedFrame) Seconds() *big.Rat {
	r := new(big.Rat).SetFrac64(f.PTS*int64(f.TimeBaseNum), int64(f.TimeBaseDen))
	return r
}

// DecodeEach decodes every frame of the first video stream of path in
// presentation order and calls fn for each. A file cut short ends at the
// last frame it holds, and DecodeEach then returns the read error after the
// frames (wrapping it), so callers can tell a complete file from a cut one.
// Its own errors say "video:"; fn's and ctx's come back as they are.
func DecodeEach(ctx context.Context, path string, fn func(DecodedFrame) error) error {
	d, err := openDecoder(path, 0)
	if err != nil {
		return fmt.Errorf("video: %w", err)
	}
	defer d.close()
	for i := 0; ; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, pts, err := d.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("video: %w", err)
		}
		if err := fn(DecodedFrame{Index: i, PTS: pts, TimeBaseNum: d.tb.Num(), TimeBaseDen: d.tb.Den(), Frame: f,
			Colour: sourceColour(f, d.stream.CodecParameters())}); err != nil {
			return err
		}
	}
	if d.readErr != nil {
		return fmt.Errorf("video: %w", d.readErr)
	}
	if d.decodeErr != nil {
		return fmt.Errorf("video: %w", d.decodeErr)
	}
	return nil
}

// seekAhead is how far ahead (in frames) a wanted frame must lie for
// DecodeFrames to seek to it rather than decode its way there.
const seekAhead = 16

// DecodeFrames calls fn for the frames of path whose indices are in want
// (ascending, no repeats), decoding only from the key frame before each
// wanted frame instead of the whole file: what a few thumbnails per
// episode need (a one-hour file holds 100,000 frames, its page shows a
// few hundred). Index k is the frame at k/fps after the first, fps the
// stream's average frame rate, so the file must be on one frame grid (an
// exported or merged LeRobot file is); a frame off the grid, or a wanted
// frame the file lacks, is an error naming it. Each seek starts a fresh
// decoder at the key frame, so no reference survives a jump.
func DecodeFrames(ctx context.Context, path string, want []int, fn func(DecodedFrame) error) error {
	if len(want) == 0 {
		return nil
	}
	d, err := openDecoder(path, 1)
	if err != nil {
		return fmt.Errorf("video: %w", err)
	}
	defer d.close()
	rate := d.stream.AvgFrameRate()
	if rate.Num() <= 0 || rate.Den() <= 0 {
		return fmt.Errorf("video: %s: no frame rate to find frames by", path)
	}
	// frame k is at firstPTS + k·den_tb·den_fr/(num_tb·num_fr)
	tbNum, tbDen := int64(d.tb.Num()), int64(d.tb.Den())
	frNum, frDen := int64(rate.Num()), int64(rate.Den())
	firstPTS, haveFirst := int64(0), false
	index := func(pts int64) (int, bool) {
		n := (pts - firstPTS) * tbNum * frNum
		q := tbDen * frDen
		return int(n / q), n%q == 0
	}
	cur := -1 // index of the last frame decoded
	for i, target := range want {
		if i > 0 && target <= want[i-1] {
			return fmt.Errorf("video: %s: wanted frames not ascending (%d after %d)", path, target, want[i-1])
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if haveFirst && target-cur > seekAhead {
			ts := firstPTS + int64(target)*tbDen*frDen/(tbNum*frNum)
			if err := d.seekTo(ts); err != nil {
				return fmt.Errorf("video: %w", err)
			}
		}
		for {
			f, pts, err := d.next()
			if errors.Is(err, io.EOF) {
				if d.readErr != nil {
					return fmt.Errorf("video: %w", d.readErr)
				}
				return fmt.Errorf("video: %s holds no frame %d", path, target)
			}
			if err != nil {
				return fmt.Errorf("video: %w", err)
			}
			if !haveFirst {
				firstPTS, haveFirst = pts, true
			}
			idx, ok := index(pts)
			if !ok {
				return fmt.Errorf("video: %s: a frame at pts %d is off the %d/%d fps grid", path, pts, frNum, frDen)
			}
			cur = idx
			if idx < target {
				continue
			}
			if idx > target {
				return fmt.Errorf("video: %s: frame %d not found (decoding went from %d to %d)", path, target, cur, idx)
			}
			if err := fn(DecodedFrame{Index: idx, PTS: pts, TimeBaseNum: d.tb.Num(), TimeBaseDen: d.tb.Den(), Frame: f,
				Colour: sourceColour(f, d.stream.CodecParameters())}); err != nil {
				return err
			}
			break
		}
	}
	if d.decodeErr != nil {
		return fmt.Errorf("video: %w", d.decodeErr)
	}
	return nil
}

// seekTo positions d at the key frame at or before ts with a fresh decoder
// (go-astiav, v0.39 too, cannot flush one, and a new single-threaded
// decoder costs about what a flush does), so no reference survives the
// jump.
func (d *decoder) seekTo(ts int64) error {
	if err := d.fc.SeekFrame(d.stream.Index(), ts, astiav.NewSeekFlags(astiav.SeekFlagBackward)); err != nil {
		return fmt.Errorf("%s: seek to pts %d: %w", d.path, ts, err)
	}
	d.dec.Free()
	d.dec = nil
	if err := d.openCodec(1); err != nil {
		return err
	}
	d.demuxDone, d.flushed, d.drained = false, false, false
	return nil
}

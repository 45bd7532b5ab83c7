package video

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asticode/go-astiav"
)

// encoderSpec describes one encoder and the container it writes into.
type encoderSpec struct {
	encoder   string // FFmpeg encoder name, e.g. libsvtav1
	format    string // muxer name, e.g. mp4, webm
	width     int
	height    int
	timeBase  astiav.Rational // encoder time base; frame pts are in it
	frameRate astiav.Rational // nominal rate, for rate control
	threads   int             // thread_count; 0 = auto
	bitexact  bool
	// options go to avcodec_open2; every one must be consumed by the codec.
	options map[string]string
	// muxOptions go to avformat_write_header; every one must be consumed.
	muxOptions map[string]string
	// packetDuration, when > 0, is stamped on every packet (in timeBase) so
	// that a constant-rate stream's duration is frames × duration exactly.
	packetDuration int64
	// tickDurations leaves the encoder without frameRate (the stream still
	// states it): FFmpeg 7's libvpx wrapper then tells libvpx that each
	// frame lasts one time-base tick, as FFmpeg 5.1's always did, instead
	// of 1/frameRate. libvpx's rate control spends bits by that duration,
	// so the synthetic cameras keep the bytes they had under FFmpeg 5.1.
	tickDurations bool
	// hangTimeout, when > 0 (tests), bounds the time between packets of a
	// call into the encoder instead of hangLimit's bound.
	hangTimeout time.Duration
}

// outputFile is one open encoder feeding one container file.
type outputFile struct {
	path    string
	spec    encoderSpec
	fc      *astiav.FormatContext
	ioc     *astiav.IOContext
	stream  *astiav.Stream
	enc     *astiav.CodecContext
	pkt     *astiav.Packet
	bytes   int64 // payload bytes of the packets written so far
	packets int   // packets written so far
	sent    int   // frames sent to the encoder
	err     error // sticky
	done    bool
	opened  bool // the encoder is open
	flushed bool // SendFrame(nil) was sent
	// hung is set when a call into the encoder did not return within
	// spec.hangTimeout: everything of the output is then left to that
	// call (never freed), and the output is abandoned.
	hung bool
	// stall, when set (tests), blocks every call until it is closed.
	stall chan struct{}
	// progress is when the current call started or last yielded a packet
	// (Unix nanoseconds), for call's watchdog.
	progress atomic.Int64
	// ctx, when set, stops waiting for a call: the output is then left to
	// it, as a hung one is (a stopped export does not wait for an encoder).
	ctx context.Context
}

// ErrEncoderHung is returned when a call into an encoder has not returned
// within its time limit. SVT-AV1 1.4 (Debian 12) very rarely never answers
// the end of a stream under load (about once in a thousand short episodes
// in a loaded test run): its worker threads all wait and the flush blocks
// for ever. The call is left where it is and the episode encoded again by
// a fresh encoder; the output is deterministic, so the bytes are the same.
var ErrEncoderHung = errors.New("video: encoder stopped responding")

// A call into an encoder is hung when it yields no packet for longer than
// the work it holds could take: hangFloor, plus hangSecondsPerMegapixel for
// each frame it holds (those sent and not yet returned, and one more) at
// the output's size. The bound is per packet, not per call, so that the
// flush of a long part is not cut short, and far above any real speed
// (SVT-AV1 and x264 encode tens of megapixels a second on two cores; the
// bound allows one), so that only a hang meets it. A hang found sooner
// costs its part less: the part is encoded again either way.
const (
	hangFloor               = 10 * time.Second
	hangSecondsPerMegapixel = 1.0
)

// hangLimit is how long the current call may go without a packet.
func (o *outputFile) hangLimit() time.Duration {
	if o.spec.hangTimeout > 0 {
		return o.spec.hangTimeout
	}
	held := float64(o.sent-o.packets) + 1
	mp := float64(o.spec.width*o.spec.height) / 1e6
	return hangFloor + time.Duration(held*mp*hangSecondsPerMegapixel*float64(time.Second))
}

// call runs f, a call into the encoder, bounded by hangLimit between the
// packets it yields; on a timeout the output is marked hung and
// ErrEncoderHung returned while f stays blocked.
func (o *outputFile) call(f func() error) error {
	limit := o.hangLimit()
	o.progress.Store(time.Now().UnixNano())
	done := make(chan error, 1)
	go func() {
		if o.stall != nil {
			<-o.stall
		}
		done <- f()
	}()
	// The check runs a few times per limit: a packet moves the deadline.
	tick := time.NewTicker(max(limit/8, time.Millisecond))
	defer tick.Stop()
	var stop <-chan struct{}
	if o.ctx != nil {
		stop = o.ctx.Done()
	}
	for {
		select {
		case err := <-done:
			return err
		case <-stop:
			o.hung = true
			o.err = fmt.Errorf("%s: %w", o.path, o.ctx.Err())
			return o.err
		case <-tick.C:
			if time.Since(time.Unix(0, o.progress.Load())) < limit {
				continue
			}
			o.hung = true
			o.err = fmt.Errorf("%s: %s: no packet in %s: %w", o.path, o.spec.encoder, limit, ErrEncoderHung)
			return o.err
		}
	}
}

// newDictionary builds an AVDictionary from a map in sorted key order, so that
// option application is deterministic.
func newDictionary(m map[string]string) (*astiav.Dictionary, error) {
	d := astiav.NewDictionary()
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := d.Set(k, m[k], 0); err != nil {
			d.Free()
			return nil, fmt.Errorf("option %s=%s: %w", k, m[k], err)
		}
	}
	return d, nil
}

// leftover lists the entries an FFmpeg call did not consume.
func leftover(d *astiav.Dictionary) []string {
	var out []string
	var e *astiav.DictionaryEntry
	for {
		e = d.Get("", e, astiav.NewDictionaryFlags(astiav.DictionaryFlagIgnoreSuffix))
		if e == nil {
			return out
		}
		out = append(out, e.Key()+"="+e.Value())
	}
}

// svtLifecycle serialises the opening and the freeing of SVT-AV1 encoders
// in this process. SVT-AV1 1.4 (Debian 12) keeps its processor-group table
// in one process-wide pointer that every encoder's init allocates (parsing
// /proc/cpuinfo into it) and every deinit frees: two encoders opening or
// closing at once write into freed memory or free it twice (a SIGSEGV in
// avcodec_open2 and "double free or corruption" aborts, seen with two
// campaign tasks exporting at once). It is the library's global state, so
// its guard is one too; encoding itself runs in parallel.
var svtLifecycle sync.Mutex

// lockSVTLifecycle takes svtLifecycle for an SVT-AV1 encoder and returns
// its release; other encoders need no lock.
func lockSVTLifecycle(encoder string) (unlock func()) {
	if encoder != EncoderSVTAV1 {
		return func() {}
	}
	svtLifecycle.Lock()
	return svtLifecycle.Unlock
}

// openOutput creates path and opens the encoder and muxer for spec.
func openOutput(path string, spec encoderSpec) (_ *outputFile, err error) {
	o := &outputFile{path: path, spec: spec}
	defer func() {
		if err != nil {
			o.free()
		}
	}()
	codec := astiav.FindEncoderByName(spec.encoder)
	if codec == nil {
		return nil, fmt.Errorf("encoder %s not available in this FFmpeg", spec.encoder)
	}
	if o.fc, err = astiav.AllocOutputFormatContext(nil, spec.format, path); err != nil {
		return nil, fmt.Errorf("%s: muxer %s: %w", path, spec.format, err)
	}
	if spec.bitexact {
		o.fc.SetFlags(o.fc.Flags().Add(astiav.FormatContextFlagBitexact))
	}
	if o.stream = o.fc.NewStream(nil); o.stream == nil {
		return nil, fmt.Errorf("%s: new stream failed", path)
	}
	if o.enc = astiav.AllocCodecContext(codec); o.enc == nil {
		return nil, fmt.Errorf("%s: alloc codec context failed", path)
	}
	o.enc.SetWidth(spec.width)
	o.enc.SetHeight(spec.height)
	o.enc.SetPixelFormat(astiav.PixelFormatYuv420P)
	o.enc.SetTimeBase(spec.timeBase)
	if !spec.tickDurations {
		o.enc.SetFramerate(spec.frameRate)
	}
	o.enc.SetSampleAspectRatio(astiav.NewRational(1, 1))
	o.enc.SetThreadCount(spec.threads)
	if spec.bitexact {
		o.enc.SetFlags(o.enc.Flags().Add(astiav.CodecContextFlagBitexact))
	}
	if o.fc.OutputFormat().Flags().Has(astiav.IOFormatFlagGlobalheader) {
		o.enc.SetFlags(o.enc.Flags().Add(astiav.CodecContextFlagGlobalHeader))
	}
	d, err := newDictionary(spec.options)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", path, spec.encoder, err)
	}
	unlock := lockSVTLifecycle(spec.encoder)
	err = withNormalScheduling(func() error { return o.enc.Open(codec, d) })
	unlock()
	left := leftover(d)
	d.Free()
	if err != nil {
		return nil, fmt.Errorf("%s: open encoder %s: %w", path, spec.encoder, err)
	}
	o.opened = true
	if len(left) > 0 {
		return nil, fmt.Errorf("%s: encoder %s does not know options %v", path, spec.encoder, left)
	}
	if err = o.stream.CodecParameters().FromCodecContext(o.enc); err != nil {
		return nil, fmt.Errorf("%s: codec parameters: %w", path, err)
	}
	o.stream.SetTimeBase(spec.timeBase)
	o.stream.SetAvgFrameRate(spec.frameRate)
	o.stream.SetRFrameRate(spec.frameRate)
	if o.ioc, err = astiav.OpenIOContext(path, astiav.NewIOContextFlags(astiav.IOContextFlagWrite), nil, nil); err != nil {
		return nil, fmt.Errorf("%s: create: %w", path, err)
	}
	o.fc.SetPb(o.ioc)
	md, err := newDictionary(spec.muxOptions)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", path, spec.format, err)
	}
	err = o.fc.WriteHeader(md)
	left = leftover(md)
	md.Free()
	if err != nil {
		return nil, fmt.Errorf("%s: write header: %w", path, err)
	}
	if len(left) > 0 {
		return nil, fmt.Errorf("%s: muxer %s does not know options %v", path, spec.format, left)
	}
	o.pkt = astiav.AllocPacket()
	return o, nil
}

// send encodes one frame (nil flushes) and writes the packets it yields.
func (o *outputFile) send(f *astiav.Frame) error {
	if o.err != nil {
		return o.err
	}
	return o.call(func() error { return o.encode(f) })
}

// encode is send's work.
func (o *outputFile) encode(f *astiav.Frame) error {
	if f == nil {
		o.flushed = true
	}
	if err := o.enc.SendFrame(f); err != nil {
		o.err = fmt.Errorf("%s: send frame %d to %s: %w", o.path, o.sent, o.spec.encoder, err)
		return o.err
	}
	if f != nil {
		o.sent++
	}
	for {
		err := o.enc.ReceivePacket(o.pkt)
		if errors.Is(err, astiav.ErrEagain) || errors.Is(err, astiav.ErrEof) {
			return nil
		}
		if err != nil {
			o.err = fmt.Errorf("%s: receive packet from %s: %w", o.path, o.spec.encoder, err)
			return o.err
		}
		if o.spec.packetDuration > 0 {
			o.pkt.SetDuration(o.spec.packetDuration)
		}
		o.pkt.SetStreamIndex(o.stream.Index())
		// The muxer may replace the stream time base in WriteHeader (mp4:
		// 1/15360 for 1/30), so rescale to the one it holds now.
		o.pkt.RescaleTs(o.spec.timeBase, o.stream.TimeBase())
		o.bytes += int64(o.pkt.Size())
		o.packets++
		err = o.fc.WriteInterleavedFrame(o.pkt)
		o.pkt.Unref()
		o.progress.Store(time.Now().UnixNano())
		if err != nil {
			o.err = fmt.Errorf("%s: write packet %d: %w", o.path, o.packets, err)
			return o.err
		}
	}
}

// finish flushes the encoder, writes the trailer and closes the file.
func (o *outputFile) finish() error {
	if o.done {
		return errors.New(o.path + ": output already finished")
	}
	if err := o.send(nil); err != nil {
		o.free()
		return err
	}
	if err := o.fc.WriteTrailer(); err != nil {
		o.free()
		return fmt.Errorf("%s: write trailer: %w", o.path, err)
	}
	var err error
	if o.ioc != nil {
		if cerr := o.ioc.Close(); cerr != nil {
			err = fmt.Errorf("%s: close: %w", o.path, cerr)
		}
		o.ioc = nil
	}
	o.free()
	return err
}

// abandon gives the output up without a call into the encoder: freeing an
// SVT-AV1 encoder that was not flushed drains it first, which takes the
// encoder's time and can hang; a stopped export (a signal) must not wait
// for that. What it holds stays allocated until the process ends.
func (o *outputFile) abandon() {
	o.hung = true
}

// free releases everything; safe to call more than once. A hung output
// is left alone: its blocked call still owns it.
func (o *outputFile) free() {
	if o.hung {
		return
	}
	o.done = true
	if o.pkt != nil {
		o.pkt.Free()
		o.pkt = nil
	}
	if o.enc != nil {
		if o.opened && !o.flushed {
			// SVT-AV1 1.4 hung in avcodec_free_context under FFmpeg 5.1
			// unless it was sent end-of-stream (FFmpeg 7.1's wrapper frees
			// it alike), and hangs on end-of-stream when it never had a
			// frame: feed one black frame, flush, discard.
			o.flushed = true
			_ = o.call(func() error {
				ok := true
				if o.sent == 0 {
					ok = o.sendBlack()
				}
				if ok && o.enc.SendFrame(nil) == nil {
					pkt := astiav.AllocPacket()
					for o.enc.ReceivePacket(pkt) == nil {
						pkt.Unref()
					}
					pkt.Free()
				}
				return nil
			})
			if o.hung {
				return
			}
		}
		unlock := lockSVTLifecycle(o.spec.encoder)
		o.enc.Free()
		unlock()
		o.enc = nil
		// Every episode has an encoder of its own, and glibc keeps what
		// each frees in its per-thread arenas: a one-hour export's peak
		// grew to 450-520 MB against 145 MB for one minute. Handing it
		// back took 4.4 ms a time, about 1 % of a long export's CPU.
		ReturnFreedMemory()
	}
	if o.ioc != nil {
		_ = o.ioc.Close()
		o.ioc = nil
	}
	if o.fc != nil {
		o.fc.Free()
		o.fc = nil
	}
}

// sendBlack sends one black frame (see free).
func (o *outputFile) sendBlack() bool {
	f := astiav.AllocFrame()
	defer f.Free()
	f.SetWidth(o.spec.width)
	f.SetHeight(o.spec.height)
	f.SetPixelFormat(astiav.PixelFormatYuv420P)
	f.SetPts(0)
	if f.AllocBuffer(0) != nil || f.ImageFillBlack() != nil {
		return false
	}
	return o.enc.SendFrame(f) == nil
}

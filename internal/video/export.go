package video

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/asticode/go-astiav"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
)

// Source is one camera file and where its pts 0 lies on the journal clock.
type Source struct {
	// Path of the camera file (WebM, MP4, ...).
	Path string
	// StartT is the journal time (ns) of the file's raw container pts 0:
	// a frame's journal time is StartT + pts·time_base·1e9, exactly.
	StartT int64
}

// EpisodeTimes gives the journal times T_k (ns) of an episode's frames,
// non-decreasing: either listed in Times, or, when Times is nil, as the
// frame clock lerobot.FrameTimes(Start, Length, fps) of the export's fps. The
// compact form is expanded one episode at a time, so a long session's frame
// times are never all in memory.
type EpisodeTimes struct {
	Times  []int64
	Start  int64
	Length int
}

// times returns the episode's frame times at fps.
func (e EpisodeTimes) times(fps int) []int64 {
	if e.Times != nil {
		return e.Times
	}
	return lerobot.FrameTimes(e.Start, e.Length, fps)
}

// bounds returns the episode's frame count and first and last frame times.
func (e EpisodeTimes) bounds(fps int) (n int, first, last int64) {
	if e.Times != nil {
		if len(e.Times) == 0 {
			return 0, 0, 0
		}
		return len(e.Times), e.Times[0], e.Times[len(e.Times)-1]
	}
	if e.Length <= 0 {
		return 0, 0, 0
	}
	return e.Length, e.Start, lerobot.LastFrameTime(e.Start, e.Length, fps)
}

// ExportOptions configures ExportCamera. The zero value of each field is its
// documented default; FPS and FilePath are required.
type ExportOptions struct {
	// FPS is the dataset's frame rate (output constant frame rate).
	FPS int
	// SourceFPS is the camera's nominal rate: a frame whose nearest source
	// frame is more than 1/SourceFPS away counts as a gap. 0 means FPS.
	SourceFPS int
	// Width, Height of the output; 0 means the first source's size, each
	// rounded down to even.
	Width, Height int
	// Encoder settings; zero value = LeRobot's default (SVT-AV1).
	Encoder EncoderOptions
	// DecoderThreads is the decoders' thread count; 0 means auto.
	DecoderThreads int
	// MaxFileBytes: a new output file starts before an episode when the
	// current file's size plus the episode's estimated size would reach it.
	// 0 means 200 MiB (LeRobot's video_files_size_in_mb).
	MaxFileBytes int64
	// MaxFileFrames, when positive, also starts a new output file before an
	// episode that would take the current file past that many frames. The
	// mp4 muxer keeps an index entry per frame in memory until the file is
	// finished (moov at the front), so this bounds memory for long
	// sessions whose small pictures would never reach MaxFileBytes.
	MaxFileFrames int
	// FilePath names the output file of a (chunk, file) index; its
	// directory is created when missing. Required.
	FilePath func(chunk, file int) string
	// FirstChunk, FirstFile is the index of the first output file; ChunkSize
	// the files per chunk (0 means 1000); indices step as LeRobot's
	// update_chunk_file_indices.
	FirstChunk, FirstFile int
	ChunkSize             int
	// InfoStyle selects the keys of CameraResult.Info.
	InfoStyle InfoStyle
	// Progress, if not nil, is called after each output frame with the
	// frames done and the total.
	Progress func(done, total int)
	// RecordChoices fills EpisodeResult.Choices (for tests and verify).
	RecordChoices bool
	// DecodeAll decodes the sources to their ends after the last episode,
	// so that SourceReport covers every frame and every cut file; by
	// default decoding stops once the last target frame is settled.
	DecodeAll bool
}

// SourceRef names one decoded source frame.
type SourceRef struct {
	// Source is the index into the sources passed to ExportCamera.
	Source int
	// PTS is the frame's raw container pts in that file's time base.
	PTS int64
}

// EpisodeResult describes how one episode was written.
type EpisodeResult struct {
	// Chunk, File index of the output file holding the episode.
	Chunk, File int
	// FromTimestamp = frames before the episode in the file / fps;
	// ToTimestamp = FromTimestamp + Frames/fps (each from integers).
	FromTimestamp, ToTimestamp float64
	// FirstFrame is the episode's first frame index within the file.
	FirstFrame int
	// Frames written (= len(Times)).
	Frames int
	// Gaps counts frames whose chosen source frame lies more than one
	// nominal source period from T_k.
	Gaps int
	// SourceFrames counts the distinct source frames used.
	SourceFrames int
	// Stats are LeRobot's image statistics over the sampled frames.
	Stats ImageStats
	// Choices holds the source frame of every frame when RecordChoices.
	Choices []SourceRef
}

// OutputFileResult describes one written mp4.
type OutputFileResult struct {
	Chunk, File int
	Path        string
	Frames      int
	Bytes       int64
}

// SourceReport describes what was decoded from one source file.
type SourceReport struct {
	Path string
	// Frames decoded and used for selection (not Dropped); Packets read.
	Frames, Packets int
	// TimeBase of the video stream; FirstPTS, LastPTS of the decoded frames.
	TimeBase          Rational
	FirstPTS, LastPTS int64
	// Size of the file and BytesRead up to the end of the last packet read.
	Size, BytesRead int64
	// Truncated is true when the demuxer or decoder stopped on an error,
	// or more than 64 bytes follow the last whole packet (a file cut
	// short); Err says where. A WebM cut exactly between blocks cannot be
	// told from a complete live recording.
	Truncated bool
	Err       string
	// Dropped counts frames ignored because their journal time did not
	// exceed the previous frame's (overlapping or reordered files).
	Dropped int
	// NotDecoded is true when the file was not reached (all targets lay
	// before it); Complete when it was decoded to its end.
	NotDecoded, Complete bool
}

// CameraResult is the outcome of ExportCamera for one camera.
type CameraResult struct {
	Episodes []EpisodeResult
	Files    []OutputFileResult
	Sources  []SourceReport
	// Width, Height of the output videos.
	Width, Height int
	// Info is the feature's info block for meta/info.json.
	Info map[string]any
}

// maxTrailingBytes is how many bytes may follow the last packet of a
// complete file (block headers, end elements) before the file counts as cut.
const maxTrailingBytes = 64

// heldFrame is a decoded source frame kept for selection.
type heldFrame struct {
	frame *astiav.Frame // own reference
	t     *big.Rat      // journal time, ns
	ref   SourceRef
	seq   int // decode order over all sources
}

func (h *heldFrame) free() {
	if h != nil && h.frame != nil {
		h.frame.Free()
		h.frame = nil
	}
}

// sourceCursor yields the frames of a camera's files in order, with
// strictly increasing journal times.
type sourceCursor struct {
	sources []Source
	threads int
	reports []SourceReport
	cur     int
	dec     *decoder
	seq     int
	last    *big.Rat
	tbNs    *big.Rat // current file's time base × 1e9
	start   *big.Rat
}

func newSourceCursor(sources []Source, threads int) *sourceCursor {
	c := &sourceCursor{sources: sources, threads: threads, reports: make([]SourceReport, len(sources))}
	for i, s := range sources {
		c.reports[i] = SourceReport{Path: s.Path, NotDecoded: true}
		if st, err := os.Stat(s.Path); err == nil {
			c.reports[i].Size = st.Size()
		}
	}
	return c
}

// next returns the next source frame, or io.EOF after the last file.
func (c *sourceCursor) next() (*heldFrame, error) {
	for c.cur < len(c.sources) {
		if c.dec == nil {
			d, err := openDecoder(c.sources[c.cur].Path, c.threads)
			if err != nil {
				return nil, fmt.Errorf("source %d: %w", c.cur, err)
			}
			c.dec = d
			rep := &c.reports[c.cur]
			rep.NotDecoded = false
			rep.TimeBase = rationalOf(d.tb)
			c.tbNs = new(big.Rat).SetFrac64(int64(d.tb.Num())*1e9, int64(d.tb.Den()))
			c.start = new(big.Rat).SetInt64(c.sources[c.cur].StartT)
		}
		f, pts, err := c.dec.next()
		rep := &c.reports[c.cur]
		if errors.Is(err, io.EOF) {
			c.finishFile()
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("source %d: %w", c.cur, err)
		}
		t := new(big.Rat).SetInt64(pts)
		t.Mul(t, c.tbNs)
		t.Add(t, c.start)
		if c.last != nil && t.Cmp(c.last) <= 0 {
			rep.Dropped++
			continue
		}
		if rep.Frames == 0 {
			rep.FirstPTS = pts
		}
		rep.Frames++
		rep.LastPTS = pts
		c.last = t
		h := &heldFrame{frame: astiav.AllocFrame(), t: t, ref: SourceRef{Source: c.cur, PTS: pts}, seq: c.seq}
		if err := h.frame.Ref(f); err != nil {
			h.free()
			return nil, fmt.Errorf("source %d: ref frame: %w", c.cur, err)
		}
		c.seq++
		return h, nil
	}
	return nil, io.EOF
}

func (c *sourceCursor) finishFile() {
	rep := &c.reports[c.cur]
	d := c.dec
	rep.Packets = d.packets
	rep.BytesRead = d.bytesRead
	rep.Complete = true
	switch {
	case d.readErr != nil:
		rep.Truncated, rep.Err = true, d.readErr.Error()
	case d.decodeErr != nil:
		rep.Truncated, rep.Err = true, d.decodeErr.Error()
	case rep.Size-rep.BytesRead > maxTrailingBytes:
		// FFmpeg's Matroska demuxer ends a cut file with a plain EOF (it
		// only logs "File ended prematurely"); bytes left after the last
		// packet are the evidence.
		rep.Truncated = true
		rep.Err = fmt.Sprintf("%s: %d bytes after the last whole packet (ends at byte %d): file cut short",
			rep.Path, rep.Size-rep.BytesRead, rep.BytesRead)
	}
	d.close()
	c.dec = nil
	c.cur++
}

func (c *sourceCursor) close() {
	if c.dec != nil {
		rep := &c.reports[c.cur]
		rep.Packets = c.dec.packets
		rep.BytesRead = c.dec.bytesRead
		c.dec.close()
		c.dec = nil
	}
}

// prefetcher runs a sourceCursor on its own goroutine, a few frames ahead,
// so that decoding overlaps encoding. At most depth frames wait in the
// channel.
type prefetcher struct {
	c    *sourceCursor
	ch   chan prefetched
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

type prefetched struct {
	h   *heldFrame
	err error
}

func startPrefetch(c *sourceCursor, depth int) *prefetcher {
	p := &prefetcher{c: c, ch: make(chan prefetched, depth), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		defer close(p.ch)
		for {
			h, err := c.next()
			select {
			case p.ch <- prefetched{h, err}:
			case <-p.stop:
				h.free()
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return p
}

// next returns the next source frame, or io.EOF after the last.
func (p *prefetcher) next() (*heldFrame, error) {
	r, ok := <-p.ch
	if !ok {
		return nil, io.EOF
	}
	return r.h, r.err
}

// close stops the goroutine, frees what it decoded ahead and closes the
// cursor; the cursor's reports are safe to read afterwards.
func (p *prefetcher) close() {
	p.once.Do(func() {
		close(p.stop)
		for r := range p.ch {
			r.h.free()
		}
		<-p.done
		p.c.close()
	})
}

// exporter holds the state of one ExportCamera call.
type exporter struct {
	opts    ExportOptions
	enc     EncoderOptions
	spec    encoderSpec
	w, h    int
	src     *prefetcher
	prev    *heldFrame
	next    *heldFrame
	started bool

	conv    *astiav.Frame // chosen source frame at output size, yuv420p
	convSeq int
	sws     *astiav.SoftwareScaleContext
	swsKey  [3]int
	toRGB   yuvMatrix // the source's matrix (BT.601, or BT.709 when it says so), for the stats' RGB

	out          *outputFile
	chunk, file  int
	fileFrames   int
	files        []OutputFileResult
	totalBytes   int64
	totalPackets int
	done, total  int
	period       *big.Rat // one nominal source period, ns
}

// ExportCamera decodes one camera's files once, in order, picks for every
// frame of every episode the source frame nearest to its time T_k (the
// earlier on a tie), and encodes the picks as constant-rate mp4 files with
// pts = frame index in time base 1/FPS. See the package documentation for
// the algorithm. It is safe to run one ExportCamera per goroutine.
func ExportCamera(ctx context.Context, sources []Source, episodes []EpisodeTimes, opts ExportOptions) (res CameraResult, err error) {
	if opts.FPS <= 0 || opts.FPS > lerobot.MaxFPS {
		return res, fmt.Errorf("export: FPS %d outside [1, %d]", opts.FPS, lerobot.MaxFPS)
	}
	if opts.FilePath == nil {
		return res, errors.New("export: FilePath is required")
	}
	if len(sources) == 0 {
		return res, errors.New("export: no source files")
	}
	if opts.SourceFPS == 0 {
		opts.SourceFPS = opts.FPS
	}
	if opts.MaxFileBytes == 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.ChunkSize == 0 {
		opts.ChunkSize = lerobot.DefaultChunksSize
	}
	if opts.SourceFPS < 0 || opts.MaxFileBytes < 0 || opts.MaxFileFrames < 0 || opts.ChunkSize < 0 || opts.Width < 0 || opts.Height < 0 ||
		opts.Width%2 != 0 || opts.Height%2 != 0 || opts.FirstFile >= opts.ChunkSize {
		return res, fmt.Errorf("export: invalid options (source fps %d, max bytes %d, chunk size %d, size %dx%d, first file %d)",
			opts.SourceFPS, opts.MaxFileBytes, opts.ChunkSize, opts.Width, opts.Height, opts.FirstFile)
	}
	enc, err := opts.Encoder.normalized()
	if err != nil {
		return res, fmt.Errorf("export: %w", err)
	}
	x := &exporter{opts: opts, enc: enc, chunk: opts.FirstChunk, file: opts.FirstFile, convSeq: -1}
	x.period = new(big.Rat).SetFrac64(1e9, int64(opts.SourceFPS))
	var last int64
	for e, ep := range episodes {
		n, first, end := ep.bounds(opts.FPS)
		if n == 0 {
			return res, fmt.Errorf("export: episode %d has no frames", e)
		}
		if e > 0 && first < last {
			return res, fmt.Errorf("export: episode %d frame 0: time %d before the previous frame's %d", e, first, last)
		}
		for k, t := range ep.Times {
			if k > 0 && t < ep.Times[k-1] {
				return res, fmt.Errorf("export: episode %d frame %d: time %d before the previous frame's %d", e, k, t, ep.Times[k-1])
			}
		}
		last = end
		x.total += n
	}
	cursor := newSourceCursor(sources, opts.DecoderThreads)
	x.src = startPrefetch(cursor, 2)
	defer x.release()

	// The output size comes from the first source frame.
	if x.next, err = x.src.next(); err != nil {
		if errors.Is(err, io.EOF) {
			return res, errors.New("export: the sources hold no frames")
		}
		return res, fmt.Errorf("export: %w", err)
	}
	x.w, x.h = opts.Width, opts.Height
	if x.w == 0 || x.h == 0 {
		x.w, x.h = x.next.frame.Width()&^1, x.next.frame.Height()&^1
	}
	if x.w < 2 || x.h < 2 {
		return res, fmt.Errorf("export: output size %dx%d too small", x.w, x.h)
	}
	x.spec = x.encoderSpec(x.next.frame)

	for e, ep := range episodes {
		r, err := x.episode(ctx, e, ep.times(opts.FPS))
		if err != nil {
			return res, err
		}
		res.Episodes = append(res.Episodes, r)
	}
	if err := x.closeFile(); err != nil {
		return res, err
	}
	if opts.DecodeAll {
		for {
			h, err := x.src.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return res, fmt.Errorf("export: %w", err)
			}
			h.free()
		}
	}
	res.Files = x.files
	res.Width, res.Height = x.w, x.h
	if res.Info, err = FeatureInfo(x.w, x.h, opts.FPS, enc, opts.InfoStyle); err != nil {
		return res, err
	}
	x.src.close()
	res.Sources = cursor.reports
	return res, nil
}

// encoderSpec builds the output encoder description; colour properties are
// copied from the first source frame when it states them (the conversion
// keeps the YUV matrix), and the range is always limited ("tv"), which is
// what the yuv420p conversion produces.
func (x *exporter) encoderSpec(first *astiav.Frame) encoderSpec {
	opts := x.enc.codecOptions()
	opts["color_range"] = strconv.Itoa(int(astiav.ColorRangeMpeg))
	cs, prim, trc := frameColors(first)
	x.toRGB = bt601Matrix
	if cs == int(astiav.ColorSpaceBt709) {
		x.toRGB = bt709Matrix
	}
	if cs != int(astiav.ColorSpaceUnspecified) {
		opts["colorspace"] = strconv.Itoa(cs)
	}
	if prim != int(astiav.ColorPrimariesUnspecified) {
		opts["color_primaries"] = strconv.Itoa(prim)
	}
	if trc != int(astiav.ColorTransferCharacteristicUnspecified) {
		opts["color_trc"] = strconv.Itoa(trc)
	}
	threads := 0
	if x.enc.Codec == EncoderX264 {
		threads = x.enc.Threads
	}
	return encoderSpec{
		encoder: x.enc.Codec, format: "mp4",
		width: x.w, height: x.h,
		timeBase:       astiav.NewRational(1, x.opts.FPS),
		frameRate:      astiav.NewRational(x.opts.FPS, 1),
		threads:        threads,
		options:        opts,
		muxOptions:     map[string]string{"movflags": "+faststart"},
		packetDuration: 1,
	}
}

// episode writes one episode's frames.
func (x *exporter) episode(ctx context.Context, e int, times []int64) (EpisodeResult, error) {
	if err := x.maybeRotate(len(times)); err != nil {
		return EpisodeResult{}, err
	}
	if x.out == nil {
		path := x.opts.FilePath(x.chunk, x.file)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return EpisodeResult{}, fmt.Errorf("export: %w", err)
		}
		out, err := openOutput(path, x.spec)
		if err != nil {
			return EpisodeResult{}, fmt.Errorf("export: %w", err)
		}
		x.out, x.fileFrames = out, 0
	}
	r := EpisodeResult{
		Chunk: x.chunk, File: x.file, FirstFrame: x.fileFrames, Frames: len(times),
		FromTimestamp: float64(x.fileFrames) / float64(x.opts.FPS),
		ToTimestamp:   float64(x.fileFrames+len(times)) / float64(x.opts.FPS),
	}
	samples := statsSampleIndices(len(times))
	var acc imageAccumulator
	lastSeq := -1
	target := new(big.Rat)
	for k, tk := range times {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		target.SetInt64(tk)
		chosen, gap, err := x.pick(target)
		if err != nil {
			return r, fmt.Errorf("export: episode %d frame %d: %w", e, k, err)
		}
		if gap {
			r.Gaps++
		}
		if chosen.seq != lastSeq {
			r.SourceFrames++
			lastSeq = chosen.seq
		}
		if x.opts.RecordChoices {
			r.Choices = append(r.Choices, chosen.ref)
		}
		if err := x.convert(chosen); err != nil {
			return r, fmt.Errorf("export: episode %d frame %d: %w", e, k, err)
		}
		if len(samples) > 0 && samples[0] == k {
			for len(samples) > 0 && samples[0] == k {
				if err := x.sample(&acc); err != nil {
					return r, fmt.Errorf("export: episode %d frame %d: stats: %w", e, k, err)
				}
				samples = samples[1:]
			}
		}
		f := astiav.AllocFrame()
		if err := f.Ref(x.conv); err != nil {
			f.Free()
			return r, fmt.Errorf("export: episode %d frame %d: %w", e, k, err)
		}
		f.SetPts(int64(x.fileFrames))
		f.SetPictureType(astiav.PictureTypeNone)
		f.SetKeyFrame(false)
		err = x.out.send(f)
		f.Free()
		if err != nil {
			return r, fmt.Errorf("export: episode %d frame %d: %w", e, k, err)
		}
		x.fileFrames++
		x.done++
		if x.opts.Progress != nil {
			x.opts.Progress(x.done, x.total)
		}
	}
	var err error
	if r.Stats, err = acc.stats(); err != nil {
		return r, fmt.Errorf("export: episode %d: %w", e, err)
	}
	return r, nil
}

// pick advances the sources to target and returns the nearest frame (the
// earlier on a tie) and whether it lies more than one source period away.
func (x *exporter) pick(target *big.Rat) (*heldFrame, bool, error) {
	for x.next != nil && x.next.t.Cmp(target) <= 0 {
		x.prev.free() // x.conv holds its own reference
		x.prev = x.next
		n, err := x.src.next()
		if errors.Is(err, io.EOF) {
			x.next = nil
			break
		}
		if err != nil {
			return nil, false, err
		}
		x.next = n
	}
	var chosen *heldFrame
	switch {
	case x.prev == nil:
		chosen = x.next // before the camera starts: the first frame
	case x.next == nil:
		chosen = x.prev // after the last frame
	default:
		dPrev := new(big.Rat).Sub(target, x.prev.t)
		dNext := new(big.Rat).Sub(x.next.t, target)
		chosen = x.prev
		if dNext.Cmp(dPrev) < 0 {
			chosen = x.next
		}
	}
	d := new(big.Rat).Sub(target, chosen.t)
	d.Abs(d)
	return chosen, d.Cmp(x.period) > 0, nil
}

// convert makes x.conv hold the chosen frame at output size in yuv420p,
// reusing it while the same source frame repeats. A fresh frame is
// allocated per source frame, because the encoder keeps references to the
// frames it was sent.
func (x *exporter) convert(h *heldFrame) error {
	if h.seq == x.convSeq {
		return nil
	}
	src := h.frame
	var dst *astiav.Frame
	if src.Width() == x.w && src.Height() == x.h && src.PixelFormat() == astiav.PixelFormatYuv420P {
		dst = astiav.AllocFrame()
		if err := dst.Ref(src); err != nil {
			dst.Free()
			return err
		}
	} else {
		key := [3]int{src.Width(), src.Height(), int(src.PixelFormat())}
		if x.sws == nil || key != x.swsKey {
			if x.sws != nil {
				x.sws.Free()
			}
			s, err := astiav.CreateSoftwareScaleContext(src.Width(), src.Height(), src.PixelFormat(), x.w, x.h,
				astiav.PixelFormatYuv420P, astiav.NewSoftwareScaleContextFlags(astiav.SoftwareScaleContextFlagBicubic))
			if err != nil {
				return fmt.Errorf("scaler %dx%d %s: %w", src.Width(), src.Height(), src.PixelFormat(), err)
			}
			x.sws, x.swsKey = s, key
		}
		dst = astiav.AllocFrame()
		dst.SetWidth(x.w)
		dst.SetHeight(x.h)
		dst.SetPixelFormat(astiav.PixelFormatYuv420P)
		if err := dst.AllocBuffer(0); err != nil {
			dst.Free()
			return err
		}
		if err := x.sws.ScaleFrame(src, dst); err != nil {
			dst.Free()
			return fmt.Errorf("scale: %w", err)
		}
	}
	if x.conv != nil {
		x.conv.Free()
	}
	x.conv, x.convSeq = dst, h.seq
	return nil
}

// sample adds x.conv to the episode's statistics. Only the pixels
// LeRobot's stride keeps are converted to RGB (BT.601 limited range, or
// BT.709 when the source says so), in integer arithmetic: converting the
// whole picture would cost as much as a tenth of an x264 encode.
func (x *exporter) sample(acc *imageAccumulator) error {
	w, h := x.w, x.h
	yp, yls := plane(x.conv, 0, h)
	up, cls := plane(x.conv, 1, (h+1)/2)
	vp, _ := plane(x.conv, 2, (h+1)/2)
	if yp == nil || up == nil || vp == nil {
		return errors.New("frame has no planes")
	}
	acc.addYUV420(yp, yls, up, vp, cls, w, h, statsStride(w, h), x.toRGB)
	return nil
}

// maybeRotate closes the current file when the next episode of n frames
// would make it reach MaxFileBytes. The episode's size is estimated from the
// bytes per frame written so far; frames still inside the encoder count at
// that average too.
func (x *exporter) maybeRotate(n int) error {
	if x.out == nil || x.fileFrames == 0 {
		return nil
	}
	if x.opts.MaxFileFrames > 0 && x.fileFrames+n > x.opts.MaxFileFrames {
		return x.rotate()
	}
	if x.totalPackets+x.out.packets == 0 {
		return nil
	}
	bytes := x.totalBytes + x.out.bytes
	packets := x.totalPackets + x.out.packets
	perFrame := float64(bytes) / float64(packets)
	pending := x.out.sent - x.out.packets
	estimate := float64(x.out.bytes) + perFrame*float64(pending) + perFrame*float64(n)
	if estimate < float64(x.opts.MaxFileBytes) {
		return nil
	}
	return x.rotate()
}

// rotate finishes the current file and steps to the next (chunk, file)
// index as LeRobot's update_chunk_file_indices does.
func (x *exporter) rotate() error {
	if err := x.closeFile(); err != nil {
		return err
	}
	x.chunk, x.file = lerobot.NextChunkFile(x.chunk, x.file, x.opts.ChunkSize)
	return nil
}

// closeFile finishes the current output file, if any.
func (x *exporter) closeFile() error {
	if x.out == nil {
		return nil
	}
	out := x.out
	x.out = nil
	if err := out.finish(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	x.totalBytes += out.bytes
	x.totalPackets += out.packets
	if out.packets != x.fileFrames {
		return fmt.Errorf("export: %s: encoder wrote %d packets for %d frames", out.path, out.packets, x.fileFrames)
	}
	size := out.bytes
	if st, err := os.Stat(out.path); err == nil {
		size = st.Size()
	}
	x.files = append(x.files, OutputFileResult{Chunk: x.chunk, File: x.file, Path: out.path, Frames: x.fileFrames, Bytes: size})
	return nil
}

func (x *exporter) release() {
	if x.out != nil {
		x.out.free()
		x.out = nil
	}
	if x.prev != x.next {
		x.prev.free()
	}
	x.next.free()
	if x.conv != nil {
		x.conv.Free()
	}
	if x.sws != nil {
		x.sws.Free()
	}
	x.src.close()
}

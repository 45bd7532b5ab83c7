package video

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/asticode/go-astiav"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/media"
)

// CameraEncoder makes one pass over a camera's files, in order, and
// encodes episodes into parts as that pass reaches them. Episodes are
// encoded in time order; ExportCamera and a followed export both drive it.
type CameraEncoder struct {
	x      *exporter
	cursor *sourceCursor
	// last is the last target time picked; an episode before it is behind.
	last    int64
	hasLast bool
	closed  bool
}

// normalized checks opts and fills its defaults.
func normalized(opts ExportOptions) (ExportOptions, EncoderOptions, error) {
	if opts.FPS <= 0 || opts.FPS > lerobot.MaxFPS {
		return opts, EncoderOptions{}, fmt.Errorf("video: FPS %d outside [1, %d]", opts.FPS, lerobot.MaxFPS)
	}
	if opts.SourceFPS == 0 {
		opts.SourceFPS = opts.FPS
	}
	if opts.MaxFileBytes == 0 {
		opts.MaxFileBytes = media.DefaultMaxFileBytes
	}
	if opts.ChunkSize == 0 {
		opts.ChunkSize = lerobot.DefaultChunksSize
	}
	if opts.SourceFPS < 0 || opts.MaxFileBytes < 0 || opts.MaxFileFrames < 0 || opts.ChunkSize < 0 || opts.Width < 0 || opts.Height < 0 ||
		opts.Width%2 != 0 || opts.Height%2 != 0 || opts.FirstFile >= opts.ChunkSize {
		return opts, EncoderOptions{}, fmt.Errorf("video: invalid options (source fps %d, max bytes %d, chunk size %d, size %dx%d, first file %d)",
			opts.SourceFPS, opts.MaxFileBytes, opts.ChunkSize, opts.Width, opts.Height, opts.FirstFile)
	}
	enc, err := opts.Encoder.Normalized()
	if err != nil {
		return opts, EncoderOptions{}, fmt.Errorf("video: %w", err)
	}
	return opts, enc, nil
}

// NewCameraEncoder opens the first of sources and reads its first frame,
// which fixes the output size and colour properties. FilePath is not used
// (PlaceParts writes the output files). Close releases it.
func NewCameraEncoder(sources []Source, opts ExportOptions) (*CameraEncoder, error) {
	return newCameraEncoder(sources, opts, stallHook{})
}

// newCameraEncoder is NewCameraEncoder with a test's stall hook.
func newCameraEncoder(sources []Source, opts ExportOptions, stall stallHook) (_ *CameraEncoder, err error) {
	if len(sources) == 0 {
		return nil, errors.New("video: no source files")
	}
	opts, enc, err := normalized(opts)
	if err != nil {
		return nil, err
	}
	x := &exporter{opts: opts, enc: enc, convSeq: -1, stall: stall}
	x.period = new(big.Rat).SetFrac64(1e9, int64(opts.SourceFPS))
	c := &CameraEncoder{x: x, cursor: newSourceCursor(sources, opts.DecoderThreads)}
	c.cursor.more = opts.MoreSources
	x.src = startPrefetch(c.cursor, 2)
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	if x.next, err = x.src.next(); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("video: the sources hold no frames")
		}
		return nil, fmt.Errorf("video: %w", err)
	}
	x.w, x.h = opts.Width, opts.Height
	if x.w == 0 || x.h == 0 {
		x.w, x.h = x.next.frame.Width()&^1, x.next.frame.Height()&^1
	}
	if x.w < 2 || x.h < 2 {
		return nil, fmt.Errorf("video: output size %dx%d too small", x.w, x.h)
	}
	if err := enc.CheckOutputSize(x.w, x.h); err != nil {
		return nil, err
	}
	x.spec = x.encoderSpec(x.next)
	return c, nil
}

// Size returns the output size.
func (c *CameraEncoder) Size() (width, height int) { return c.x.w, c.x.h }

// EncodePart encodes episode e (its index, for messages) into a part file at
// path. It returns ErrBehind, having written nothing, when the episode
// starts before the last frame time an earlier part picked.
func (c *CameraEncoder) EncodePart(ctx context.Context, e int, ep EpisodeTimes, path string) (Part, error) {
	n, _, _ := bounds(ep, c.x.opts.FPS)
	if n == 0 {
		return Part{}, fmt.Errorf("video: episode %d has no frames", e)
	}
	for k := 1; k < len(ep.Times); k++ {
		if ep.Times[k] < ep.Times[k-1] {
			return Part{}, fmt.Errorf("video: episode %d frame %d: time %d before the previous frame's %d", e, k, ep.Times[k], ep.Times[k-1])
		}
	}
	w, err := c.beginPart(e, ep.Start, ep.Times, n, path)
	if err != nil {
		return Part{}, err
	}
	return w.Finish(ctx, n)
}

// BeginPart starts episode e's part at path for an episode on the frame
// clock from start whose length is not known yet (an attempt still being
// recorded): Advance encodes its frames as the recording reaches them,
// Finish ends it once the length is known, Abort throws it away. The
// encoder serves nothing else until then.
func (c *CameraEncoder) BeginPart(e int, start int64, path string) (*PartWriter, error) {
	return c.beginPart(e, start, nil, -1, path)
}

// PartWriter is one episode's part being written (see BeginPart).
type PartWriter struct {
	c      *CameraEncoder
	e      int
	start  int64
	times  []int64 // the frame times when listed; nil: the frame clock
	path   string
	out    *outputFile
	sent   int // frames sent to the encoder
	length int // -1 while unknown
	r      EpisodeResult
	last   int // decode order of the last chosen source frame
	target *big.Rat
	// With the length known, the frames LeRobot samples for statistics
	// are added to acc as they pass; without, every frame's value counts
	// are kept (shared while a source frame repeats) until it is.
	samples   []int
	acc       imageAccumulator
	counts    []*frameCounts
	countsSeq int
}

func (c *CameraEncoder) beginPart(e int, start int64, times []int64, length int, path string) (*PartWriter, error) {
	first := start
	if times != nil {
		first = times[0]
	}
	if c.hasLast && first < c.last {
		return nil, fmt.Errorf("video: episode %d at %d, last picked %d: %w", e, first, c.last, ErrBehind)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("video: %w", err)
	}
	out, err := openOutput(path, c.x.spec)
	if err != nil {
		return nil, fmt.Errorf("video: %w", err)
	}
	if c.x.stall.episode != nil && c.x.stall.episode(e) {
		out.spec.hangTimeout, out.stall = cmp.Or(c.x.stall.timeout, 50*time.Millisecond), make(chan struct{})
	}
	w := &PartWriter{c: c, e: e, start: start, times: times, path: path, out: out, length: length, last: -1,
		target: new(big.Rat), countsSeq: -1}
	if length >= 0 {
		w.samples = statsSampleIndices(length)
	}
	return w, nil
}

// Sent returns how many of the part's frames are encoded.
func (w *PartWriter) Sent() int { return w.sent }

// frameTime is the journal time of the part's frame k.
func (w *PartWriter) frameTime(k int) int64 {
	if w.times != nil {
		return w.times[k]
	}
	return lerobot.FrameTime(w.start, k, w.c.x.opts.FPS)
}

// Advance encodes the frames the recording has surely reached by journal
// time upto: frame k once frame k+1's time lies before upto, so that no
// frame past the episode's end is ever sent while upto stays at or before
// the attempt's end (length = floor(window·fps), and T_{k+1} < end implies
// k+1 ≤ length).
func (w *PartWriter) Advance(ctx context.Context, upto int64) error {
	for w.length < 0 && w.frameTime(w.sent+1) < upto {
		if err := w.frame(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Finish encodes the episode's frames up to length, flushes the encoder and
// returns the part. An episode shorter than the frames already sent is
// ErrBehind (nothing is kept).
func (w *PartWriter) Finish(ctx context.Context, length int) (Part, error) {
	flush, err := w.FinishAsync(ctx, length)
	if err != nil {
		return Part{}, err
	}
	return flush()
}

// FinishAsync is Finish with the flush (the frames the encoder still
// holds, the trailer) left to a goroutine: the pass goes on with the next
// episode, whose encoder opens and encodes while this one drains, instead
// of both cores waiting for the end of one episode's look-ahead. flush
// waits for it and returns the part.
func (w *PartWriter) FinishAsync(ctx context.Context, length int) (flush func() (Part, error), err error) {
	if length < w.sent || length <= 0 {
		w.Abort()
		return nil, fmt.Errorf("video: episode %d of %d frames, %d already encoded: %w", w.e, length, w.sent, ErrBehind)
	}
	if w.length < 0 {
		// The statistics' samples, now that they are known.
		w.length = length
		w.samples = statsSampleIndices(length)
		for len(w.samples) > 0 && w.samples[0] < w.sent {
			w.acc.addCounts(w.counts[w.samples[0]])
			w.samples = w.samples[1:]
		}
		w.counts = nil
	}
	for w.sent < length {
		if err := w.frame(ctx); err != nil {
			// Stopped, or the encoder hung: leave the encoder as it is
			// (freeing SVT-AV1's drains it first, which can hang too).
			w.abort(ctx.Err() != nil || errors.Is(err, ErrEncoderHung))
			return nil, err
		}
	}
	if w.r.Stats, err = w.acc.stats(); err != nil {
		w.Abort()
		return nil, fmt.Errorf("video: episode %d: %w", w.e, err)
	}
	out, r, path := w.out, w.r, w.path
	w.out = nil
	r.Frames = length
	w.c.last, w.c.hasLast = w.frameTime(length-1), true
	done := make(chan error, 1)
	out.ctx = ctx
	go func() {
		err := out.finish()
		if err == nil && out.packets != length {
			err = fmt.Errorf("%s: encoder wrote %d packets for %d frames", path, out.packets, length)
		}
		done <- err
	}()
	return func() (Part, error) {
		if err := <-done; err != nil {
			_ = os.Remove(path)
			return Part{}, fmt.Errorf("video: %w", err)
		}
		return Part{Path: path, Bytes: out.bytes, Episode: r}, nil
	}, nil
}

// Abort throws the part away; the encoder's pass stays where it is.
func (w *PartWriter) Abort() { w.abort(false) }

// abort is Abort; abandon leaves the encoder unfreed (see
// outputFile.abandon).
func (w *PartWriter) abort(abandon bool) {
	if w.out != nil {
		if abandon {
			w.out.abandon()
		} else {
			w.out.free()
		}
		w.out = nil
		_ = os.Remove(w.path)
	}
	if w.sent > 0 {
		w.c.last, w.c.hasLast = w.frameTime(w.sent-1), true
	}
}

// frame picks, converts, samples and encodes the part's next frame.
func (w *PartWriter) frame(ctx context.Context) error {
	x, k, e := w.c.x, w.sent, w.e
	if err := ctx.Err(); err != nil {
		return err
	}
	w.target.SetInt64(w.frameTime(k))
	chosen, gap, err := x.pick(w.target)
	if err != nil {
		return fmt.Errorf("video: episode %d frame %d: %w", e, k, err)
	}
	if gap {
		addGap(&w.r, k)
	}
	if chosen.seq != w.last {
		w.r.SourceFrames++
		w.last = chosen.seq
	}
	if x.opts.RecordChoices {
		w.r.Choices = append(w.r.Choices, chosen.ref)
	}
	if err := x.convert(chosen); err != nil {
		return fmt.Errorf("video: episode %d frame %d: %w", e, k, err)
	}
	if w.length < 0 {
		if x.convSeq != w.countsSeq || len(w.counts) == 0 {
			var acc imageAccumulator
			if err := x.sample(&acc); err != nil {
				return fmt.Errorf("video: episode %d frame %d: stats: %w", e, k, err)
			}
			w.counts = append(w.counts, acc.frameCounts())
			w.countsSeq = x.convSeq
		} else {
			w.counts = append(w.counts, w.counts[len(w.counts)-1])
		}
	}
	for len(w.samples) > 0 && w.samples[0] == k {
		if err := x.sample(&w.acc); err != nil {
			return fmt.Errorf("video: episode %d frame %d: stats: %w", e, k, err)
		}
		w.samples = w.samples[1:]
	}
	f := astiav.AllocFrame()
	if err := f.Ref(x.conv); err != nil {
		f.Free()
		return fmt.Errorf("video: episode %d frame %d: %w", e, k, err)
	}
	f.SetPts(int64(k))
	f.SetPictureType(astiav.PictureTypeNone)
	clearKeyFrame(f)
	w.out.ctx = ctx
	err = w.out.send(f)
	f.Free()
	if err != nil {
		return fmt.Errorf("video: episode %d frame %d: %w", e, k, err)
	}
	w.sent++
	x.done++
	if x.opts.Progress != nil {
		x.opts.Progress(x.done, x.total)
	}
	// The pass has left the frames before this one behind.
	w.c.last, w.c.hasLast = w.frameTime(k), true
	return nil
}

// SkipTo decodes and drops the source frames up to journal time t, keeping
// the last one at or before t, as picking a frame at t would: an episode
// that starts at or after t is encoded as if nothing had been skipped, one
// before it is ErrBehind. A followed export skips what lies between
// episodes while the session records, so that little is left at its end.
func (c *CameraEncoder) SkipTo(ctx context.Context, t int64) error {
	if c.hasLast && t <= c.last {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.x.advance(new(big.Rat).SetInt64(t)); err != nil {
		return fmt.Errorf("video: %w", err)
	}
	c.last, c.hasLast = t, true
	return nil
}

// Finish decodes the sources to their ends when decodeAll (so that the
// reports cover every frame and every cut file), closes them and returns
// the reports, the output size and the feature's info block.
func (c *CameraEncoder) Finish(decodeAll bool) (CameraResult, error) {
	x := c.x
	var res CameraResult
	if decodeAll {
		for {
			h, err := x.src.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return res, fmt.Errorf("video: %w", err)
			}
			h.free()
		}
	}
	res.Width, res.Height = x.w, x.h
	var err error
	if res.Info, err = media.FeatureInfo(x.w, x.h, x.opts.FPS, x.enc, x.opts.InfoStyle); err != nil {
		return res, err
	}
	x.src.close()
	res.Sources = c.cursor.reports
	return res, nil
}

// ReadPrints identify the bytes the pass read of every source that might
// still change (a Source with Final), in order; valid after Finish or
// Close.
func (c *CameraEncoder) ReadPrints() []ReadPrint { return slices.Clone(c.cursor.prints) }

// Close releases the decoders and the frames held; safe after Finish and
// more than once.
func (c *CameraEncoder) Close() {
	if !c.closed {
		c.closed = true
		c.x.release()
	}
}

// placement is the output file of one part.
type placement struct {
	chunk, file int
	first       int // the part's first frame within the file
}

// placeParts assigns parts, in order, to output files: a new file starts
// before a part that would bring the current file's payload to
// MaxFileBytes, or its frames past MaxFileFrames; indices step as LeRobot's
// update_chunk_file_indices. It returns each part's placement and each
// file's frame count, in file order.
func placeParts(parts []Part, opts ExportOptions) ([]placement, []int) {
	chunk, file := opts.FirstChunk, opts.FirstFile
	var out []placement
	var files []int
	var bytes int64
	for i, p := range parts {
		n := p.Episode.Frames
		if i > 0 {
			frames := files[len(files)-1]
			if opts.MaxFileFrames > 0 && frames+n > opts.MaxFileFrames || bytes+p.Bytes >= opts.MaxFileBytes {
				chunk, file = lerobot.NextChunkFile(chunk, file, opts.ChunkSize)
				files = append(files, 0)
				bytes = 0
			}
		} else {
			files = append(files, 0)
		}
		out = append(out, placement{chunk: chunk, file: file, first: files[len(files)-1]})
		files[len(files)-1] += n
		bytes += p.Bytes
	}
	return out, files
}

// PlaceParts joins parts, in order, into the output files FilePath names
// (see placeParts for where one file ends), and returns the episodes with
// their placement and the files written. The parts are left in place.
func PlaceParts(ctx context.Context, parts []Part, opts ExportOptions) ([]EpisodeResult, []OutputFileResult, error) {
	if opts.FilePath == nil {
		return nil, nil, errors.New("video: FilePath is required")
	}
	opts, _, err := normalized(opts)
	if err != nil {
		return nil, nil, err
	}
	where, frames := placeParts(parts, opts)
	episodes := make([]EpisodeResult, len(parts))
	var files []OutputFileResult
	var j *Joiner
	closeFile := func() error {
		if j == nil {
			return nil
		}
		err := j.Close()
		f := &files[len(files)-1]
		j = nil
		if err != nil {
			return fmt.Errorf("video: %w", err)
		}
		st, err := os.Stat(f.Path)
		if err != nil {
			return fmt.Errorf("video: %w", err)
		}
		f.Bytes = st.Size()
		return nil
	}
	defer func() {
		if j != nil {
			j.Abort()
		}
	}()
	for i, p := range parts {
		w := where[i]
		if j == nil || w.first == 0 {
			if err := closeFile(); err != nil {
				return nil, nil, err
			}
			path := opts.FilePath(w.chunk, w.file)
			if j, err = NewJoiner(path, opts.FPS, frames[len(files)]); err != nil {
				return nil, nil, fmt.Errorf("video: %w", err)
			}
			files = append(files, OutputFileResult{Chunk: w.chunk, File: w.file, Path: path})
		}
		jp, err := j.Append(ctx, p.Path)
		if err != nil {
			return nil, nil, fmt.Errorf("video: episode %d: %w", i, err)
		}
		if jp.FirstFrame != w.first || jp.Frames != p.Episode.Frames {
			return nil, nil, fmt.Errorf("video: episode %d: joined as frames %d+%d, planned %d+%d", i, jp.FirstFrame, jp.Frames, w.first, p.Episode.Frames)
		}
		r := p.Episode
		r.Chunk, r.File, r.FirstFrame = w.chunk, w.file, w.first
		r.FromTimestamp = float64(w.first) / float64(opts.FPS)
		r.ToTimestamp = float64(w.first+r.Frames) / float64(opts.FPS)
		episodes[i] = r
		files[len(files)-1].Frames += r.Frames
	}
	if err := closeFile(); err != nil {
		return nil, nil, err
	}
	return episodes, files, nil
}

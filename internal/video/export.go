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
		return res, fmt.Errorf("video: FPS %d outside [1, %d]", opts.FPS, lerobot.MaxFPS)
	}
	if opts.FilePath == nil {
		return res, errors.New("video: FilePath is required")
	}
	if len(sources) == 0 {
		return res, errors.New("video: no source files")
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
		return res, fmt.Errorf("video: invalid options (source fps %d, max bytes %d, chunk size %d, size %dx%d, first file %d)",
			opts.SourceFPS, opts.MaxFileBytes, opts.ChunkSize, opts.Width, opts.Height, opts.FirstFile)
	}
	enc, err := opts.Encoder.normalized()
	if err != nil {
		return res, fmt.Errorf("video: %w", err)
	}
	x := &exporter{opts: opts, enc: enc, chunk: opts.FirstChunk, file: opts.FirstFile, convSeq: -1}
	x.period = new(big.Rat).SetFrac64(1e9, int64(opts.SourceFPS))
	var last int64
	for e, ep := range episodes {
		n, first, end := ep.bounds(opts.FPS)
		if n == 0 {
			return res, fmt.Errorf("video: episode %d has no frames", e)
		}
		if e > 0 && first < last {
			return res, fmt.Errorf("video: episode %d frame 0: time %d before the previous frame's %d", e, first, last)
		}
		for k, t := range ep.Times {
			if k > 0 && t < ep.Times[k-1] {
				return res, fmt.Errorf("video: episode %d frame %d: time %d before the previous frame's %d", e, k, t, ep.Times[k-1])
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
			return res, errors.New("video: the sources hold no frames")
		}
		return res, fmt.Errorf("video: %w", err)
	}
	x.w, x.h = opts.Width, opts.Height
	if x.w == 0 || x.h == 0 {
		x.w, x.h = x.next.frame.Width()&^1, x.next.frame.Height()&^1
	}
	if x.w < 2 || x.h < 2 {
		return res, fmt.Errorf("video: output size %dx%d too small", x.w, x.h)
	}
	if err := enc.CheckOutputSize(x.w, x.h); err != nil {
		return res, err
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
				return res, fmt.Errorf("video: %w", err)
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
			return EpisodeResult{}, fmt.Errorf("video: %w", err)
		}
		out, err := openOutput(path, x.spec)
		if err != nil {
			return EpisodeResult{}, fmt.Errorf("video: %w", err)
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
			return r, fmt.Errorf("video: episode %d frame %d: %w", e, k, err)
		}
		if gap {
			r.addGap(k)
		}
		if chosen.seq != lastSeq {
			r.SourceFrames++
			lastSeq = chosen.seq
		}
		if x.opts.RecordChoices {
			r.Choices = append(r.Choices, chosen.ref)
		}
		if err := x.convert(chosen); err != nil {
			return r, fmt.Errorf("video: episode %d frame %d: %w", e, k, err)
		}
		if len(samples) > 0 && samples[0] == k {
			for len(samples) > 0 && samples[0] == k {
				if err := x.sample(&acc); err != nil {
					return r, fmt.Errorf("video: episode %d frame %d: stats: %w", e, k, err)
				}
				samples = samples[1:]
			}
		}
		f := astiav.AllocFrame()
		if err := f.Ref(x.conv); err != nil {
			f.Free()
			return r, fmt.Errorf("video: episode %d frame %d: %w", e, k, err)
		}
		f.SetPts(int64(x.fileFrames))
		f.SetPictureType(astiav.PictureTypeNone)
		f.SetKeyFrame(false)
		err = x.out.send(f)
		f.Free()
		if err != nil {
			return r, fmt.Errorf("video: episode %d frame %d: %w", e, k, err)
		}
		x.fileFrames++
		x.done++
		if x.opts.Progress != nil {
			x.opts.Progress(x.done, x.total)
		}
	}
	var err error
	if r.Stats, err = acc.stats(); err != nil {
		return r, fmt.Errorf("video: episode %d: %w", e, err)
	}
	return r, nil
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

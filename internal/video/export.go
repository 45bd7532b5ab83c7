package video

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"time"

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
	// Final, when not nil, says whether the file is complete: until it
	// does, the file may not exist yet or still grow, and is read as it
	// grows where its container allows it (a followed session's camera).
	// nil: the file is complete.
	Final func() bool
}

// EpisodeTimes gives the journal times T_k (ns) of an episode's frames,
// non-decreasing: either listed in Times, or, when Times is nil, as the
// frame clock T_k = lerobot.FrameTime(Start, k, fps) of the export's fps for
// k in [0, Length). The exporter gives the clock, which is computed frame by
// frame, so that no episode's frame times are held in memory; a list is for
// tests that need irregular times.
type EpisodeTimes struct {
	Times  []int64
	Start  int64
	Length int
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
	// DecoderThreads is the decoders' thread count; 0 means
	// DefaultDecoderThreads, whatever the machine.
	DecoderThreads int
	// MaxFileBytes: a new output file starts before an episode when the
	// current file's payload plus the episode's (known exactly: each
	// episode is encoded on its own first) would reach it.
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
	// PartsDir is where the episodes' parts are written before they are
	// joined into the output files (created when missing; a directory of
	// its own inside it is removed at the end); "" means the system's
	// temporary directory. Exports put it beside the output, on its file
	// system.
	PartsDir string
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
	// MoreSources, when set, makes the list of sources grow (a followed
	// session's camera, whose next file a recorder restart adds): at the end
	// of the files it has, the pass asks it for the list so far (the
	// sources given are a prefix of it) and waits until the list grows or
	// is final.
	MoreSources func() (sources []Source, final bool)
	// DecodeAll decodes the sources to their ends after the last episode,
	// so that SourceReport covers every frame and every cut file; by
	// default decoding stops once the last target frame is settled.
	DecodeAll bool

	// stallForTesting, when it returns true for an episode, makes that
	// part's encoder stop answering (ErrEncoderHung after
	// stallTimeoutForTesting, 50 ms when 0).
	stallForTesting        func(episode int) bool
	stallTimeoutForTesting time.Duration
}

// exporter holds the state of one camera's pass over its sources.
type exporter struct {
	opts ExportOptions
	enc  EncoderOptions
	spec encoderSpec
	w, h int
	src  *prefetcher
	prev *heldFrame
	next *heldFrame

	conv    *astiav.Frame // chosen source frame at output size, yuv420p
	convSeq int
	sws     *scaler
	out     Colour    // the output's colour (outputColour of the first frame's)
	toRGB   yuvMatrix // the source's matrix (BT.601, or BT.709 when it says so), for the stats' RGB

	done, total int
	period      *big.Rat // one nominal source period, ns
}

// ExportCamera decodes one camera's files once, in order, picks for every
// frame of every episode the source frame nearest to its time T_k (the
// earlier on a tie), encodes each episode on its own (a Part) and joins the
// parts into constant-rate mp4 files with pts = frame index in time base
// 1/FPS. See the package documentation for the algorithm. It is safe to run
// one ExportCamera per goroutine.
func ExportCamera(ctx context.Context, sources []Source, episodes []EpisodeTimes, opts ExportOptions) (res CameraResult, err error) {
	opts, _, err = opts.normalized()
	if err != nil {
		return res, err
	}
	if opts.FilePath == nil {
		return res, errors.New("video: FilePath is required")
	}
	if len(sources) == 0 {
		return res, errors.New("video: no source files")
	}
	var last int64
	total := 0
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
		total += n
	}
	c, err := NewCameraEncoder(sources, opts)
	if err != nil {
		return res, err
	}
	defer c.Close()
	c.x.total = total
	// The parts go when the files are joined.
	if opts.PartsDir != "" {
		if err := os.MkdirAll(opts.PartsDir, 0o755); err != nil {
			return res, fmt.Errorf("video: %w", err)
		}
	}
	partsDir, err := os.MkdirTemp(opts.PartsDir, "parts-")
	if err != nil {
		return res, fmt.Errorf("video: %w", err)
	}
	defer os.RemoveAll(partsDir)
	// One pass encodes the episodes in order, each episode's flush
	// overlapping the next one's encoding (at most two encoders at once).
	// An episode whose encoder hung is encoded again afterwards, by a
	// fresh pass: the pass itself goes on from where that episode ended.
	parts := make([]Part, len(episodes))
	var redo []int
	var flush func() (Part, error)
	flushed := -1
	collect := func() error {
		if flush == nil {
			return nil
		}
		p, err := flush()
		flush = nil
		switch {
		case errors.Is(err, ErrEncoderHung):
			redo = append(redo, flushed)
		case err != nil:
			return err
		default:
			parts[flushed] = p
		}
		return nil
	}
	for e, ep := range episodes {
		n, _, _ := ep.bounds(opts.FPS)
		w, err := c.beginPart(e, ep.Start, ep.Times, n, filepath.Join(partsDir, PartName(e)))
		if err != nil {
			return res, err
		}
		next, err := w.FinishAsync(ctx, n)
		if err := collect(); err != nil {
			return res, err
		}
		if errors.Is(err, ErrEncoderHung) {
			redo = append(redo, e)
			continue
		}
		if err != nil {
			return res, err
		}
		flush, flushed = next, e
	}
	if err := collect(); err != nil {
		return res, err
	}
	if len(redo) > maxEncoderRestarts {
		return res, fmt.Errorf("video: %d episodes' encoders hung: %w", len(redo), ErrEncoderHung)
	}
	for _, e := range redo {
		slog.Warn("encoder hung; encoding the episode again", "episode", e)
		p, err := encodeAgain(ctx, sources, episodes[e], e, filepath.Join(partsDir, "again-"+PartName(e)), opts)
		if err != nil {
			return res, err
		}
		parts[e] = p
	}
	if res, err = c.Finish(opts.DecodeAll); err != nil {
		return res, err
	}
	if res.Episodes, res.Files, err = PlaceParts(ctx, parts, opts); err != nil {
		return res, err
	}
	return res, nil
}

// maxEncoderRestarts bounds how many episodes of one camera ExportCamera
// encodes again after their encoder hung (ErrEncoderHung).
const maxEncoderRestarts = 3

// encodeAgain encodes episode e alone by a fresh pass over the sources.
func encodeAgain(ctx context.Context, sources []Source, ep EpisodeTimes, e int, path string, opts ExportOptions) (Part, error) {
	opts.Progress = nil // the episode's frames were counted once
	c, err := NewCameraEncoder(sources, opts)
	if err != nil {
		return Part{}, err
	}
	defer c.Close()
	return c.EncodePart(ctx, e, ep, path)
}

// PartName is the file name of episode e's part.
func PartName(e int) string { return fmt.Sprintf("episode-%06d.mp4", e) }

// encoderSpec builds the output encoder description and fixes the output
// colour from the first source frame's (outputColour): the range is always
// limited ("tv"), and the matrix, primaries and transfer are tagged where
// the source states them, so that what is written says what it is.
func (x *exporter) encoderSpec(first *heldFrame) encoderSpec {
	opts := x.enc.codecOptions()
	x.out = outputColour(first.colour)
	opts["color_range"] = strconv.Itoa(int(x.out.Range))
	x.toRGB = bt601Matrix
	if x.out.Space == astiav.ColorSpaceBt709 {
		x.toRGB = bt709Matrix
	}
	if x.out.Space != astiav.ColorSpaceUnspecified {
		opts["colorspace"] = strconv.Itoa(int(x.out.Space))
	}
	if x.out.Primaries != astiav.ColorPrimariesUnspecified {
		opts["color_primaries"] = strconv.Itoa(int(x.out.Primaries))
	}
	if x.out.Transfer != astiav.ColorTransferCharacteristicUnspecified {
		opts["color_trc"] = strconv.Itoa(int(x.out.Transfer))
	}
	threads := 0 // SVT-AV1 takes its threads from svtav1-params lp
	if x.enc.Codec == EncoderX264 {
		threads = x.enc.Threads // normalized: never 0
	}
	return encoderSpec{
		encoder: x.enc.Codec, format: "mp4",
		width: x.w, height: x.h,
		timeBase:       astiav.NewRational(1, x.opts.FPS),
		frameRate:      astiav.NewRational(x.opts.FPS, 1),
		threads:        threads,
		options:        opts,
		packetDuration: 1,
	}
}

func (x *exporter) release() {
	if x.prev != x.next {
		x.prev.free()
	}
	x.next.free()
	if x.conv != nil {
		x.conv.Free()
	}
	x.sws.free()
	x.src.close()
}

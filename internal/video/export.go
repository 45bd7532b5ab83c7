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
	"github.com/ceres-robotics/ceres-export/internal/media"
)

// bounds returns the episode's frame count and first and last frame times.
func bounds(e EpisodeTimes, fps int) (n int, first, last int64) {
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

	stall stallHook
}

// stallHook, in tests, makes the encoder of an episode stop answering.
type stallHook struct {
	// episode, when it returns true for an episode, makes that part's
	// encoder stop answering (ErrEncoderHung after timeout, 50 ms when 0).
	episode func(e int) bool
	timeout time.Duration
}

// ExportCamera decodes one camera's files once, in order, picks for every
// frame of every episode the source frame nearest to its time T_k (the
// earlier on a tie), encodes each episode on its own (a Part) and joins the
// parts into constant-rate mp4 files with pts = frame index in time base
// 1/FPS. See the package documentation for the algorithm. It is safe to run
// one ExportCamera per goroutine.
func ExportCamera(ctx context.Context, sources []Source, episodes []EpisodeTimes, opts ExportOptions) (CameraResult, error) {
	return exportCamera(ctx, sources, episodes, opts, stallHook{})
}

// exportCamera is ExportCamera with a test's stall hook.
func exportCamera(ctx context.Context, sources []Source, episodes []EpisodeTimes, opts ExportOptions, stall stallHook) (res CameraResult, err error) {
	opts, _, err = normalized(opts)
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
		n, first, end := bounds(ep, opts.FPS)
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
	c, err := newCameraEncoder(sources, opts, stall)
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
		n, _, _ := bounds(ep, opts.FPS)
		w, err := c.beginPart(e, ep.Start, ep.Times, n, filepath.Join(partsDir, media.PartName(e)))
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
		p, err := encodeAgain(ctx, sources, episodes[e], e, filepath.Join(partsDir, "again-"+media.PartName(e)), opts, stall)
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
func encodeAgain(ctx context.Context, sources []Source, ep EpisodeTimes, e int, path string, opts ExportOptions, stall stallHook) (Part, error) {
	opts.Progress = nil // the episode's frames were counted once
	c, err := newCameraEncoder(sources, opts, stall)
	if err != nil {
		return Part{}, err
	}
	defer c.Close()
	return c.EncodePart(ctx, e, ep, path)
}

// encoderSpec builds the output encoder description and fixes the output
// colour from the first source frame's (outputColour): the range is always
// limited ("tv"), and the matrix, primaries and transfer are tagged where
// the source states them, so that what is written says what it is.
func (x *exporter) encoderSpec(first *heldFrame) encoderSpec {
	opts := codecOptions(x.enc)
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

package video

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"strconv"

	"github.com/asticode/go-astiav"
)

// SynthCodec names the codec and container of a synthetic camera file.
type SynthCodec string

// Synthetic camera file kinds, as browsers' MediaRecorder writes them.
const (
	// SynthVP8 is VP8 in WebM, time base 1/1000 (the default).
	SynthVP8 SynthCodec = "vp8"
	// SynthVP9 is VP9 in WebM, time base 1/1000.
	SynthVP9 SynthCodec = "vp9"
	// SynthH264 is H.264 with B-frames in a fragmented MP4, time base
	// 1/90000, so that decode order differs from presentation order.
	SynthH264 SynthCodec = "h264"
	// SynthAV1 is AV1 (SVT-AV1) in WebM, time base 1/1000, as Chromium
	// records it.
	SynthAV1 SynthCodec = "av1"
)

// SynthScene names what a synthetic camera shows.
type SynthScene string

const (
	// SceneBands is moving colour gradients, a moving bright square and
	// the code band with the frame's number (the default).
	SceneBands SynthScene = "bands"
	// SceneNatural looks like a camera's view and carries no code band:
	// smooth shaded shapes over a textured background, drifting a few
	// pixels per frame, with a little sensor noise. Only its content tells
	// its frames apart.
	SceneNatural SynthScene = "natural"
	// SceneStill is SceneNatural holding still: consecutive frames differ
	// by the sensor noise alone, as a camera looking at a table between
	// moves.
	SceneStill SynthScene = "still"
)

// SynthOptions describes a synthetic camera file. The zero value of each field
// is its documented default.
type SynthOptions struct {
	// Codec selects codec and container; "" means SynthVP8.
	Codec SynthCodec
	// Width and Height of the picture; 0 means 320×240. Must be even and at
	// least 40×24 (the code band needs room).
	Width, Height int
	// PTS are the presentation times of the frames, in ns from the start of
	// the file, strictly increasing (gaps stand for dropped frames). They are
	// rounded to the container's time base (WebM: whole milliseconds); the
	// result reports the stored values. Required.
	PTS []int64
	// FirstCode is the code drawn into frame 0; frame i carries FirstCode+i.
	FirstCode uint32
	// NominalFPS is the frame rate the stream states, and steers x264's
	// rate control (libvpx's counts one time-base tick per frame, see
	// encoderSpec.tickDurations); 0 means 30.
	NominalFPS int
	// CutTailBytes, when > 0, removes that many bytes from the end of the
	// finished file, as a crash during recording leaves it.
	CutTailBytes int64
	// Scene is what the frames show; "" means SceneBands.
	Scene SynthScene
	// FullRange writes the levels full range (0 to 255) and tags the
	// stream pc range and BT.709, as Chromium records VP9 and AV1 (and
	// VP8, whose bitstream cannot say so: only the WebM's Colour element
	// does); the picture is the same as the limited-range file's
	// (DrawSynthetic).
	FullRange bool
	// MislabelRange, with FullRange, writes the full-range levels but
	// states limited range and no matrix: a camera whose stream misstates
	// its range, so that an export of it carries the stretched contrast
	// (for the tests of verify's level check).
	MislabelRange bool
	// Indexed writes the file as a seekable muxer finishes it, with its
	// index at the end: WebM with Cues and Duration, MP4 with its moov
	// after the media data (faststart off), instead of a live WebM or a
	// fragmented MP4.
	Indexed bool
}

// SynthResult tells what WriteSynthetic stored.
type SynthResult struct {
	// TimeBase of the stored video stream, as num/den seconds.
	TimeBaseNum, TimeBaseDen int
	// PTS of each frame in TimeBase units as a demuxer reads them back (before
	// any cut), in presentation order; frame i carries code FirstCode+i.
	PTS []int64
	// Bytes is the final file size (after any cut).
	Bytes int64
}

// WriteSynthetic writes a camera file the way a browser records one: frames
// at the given presentation times, each showing a moving colourful background
// and a code band with its frame number (see ReadCode). The output is
// deterministic: encoders run single-threaded with bit-exact flags.
func WriteSynthetic(ctx context.Context, path string, opts SynthOptions) (SynthResult, error) {
	if opts.Codec == "" {
		opts.Codec = SynthVP8
	}
	if opts.Width == 0 && opts.Height == 0 {
		opts.Width, opts.Height = 320, 240
	}
	if opts.NominalFPS == 0 {
		opts.NominalFPS = 30
	}
	if opts.Scene == "" {
		opts.Scene = SceneBands
	}
	if opts.Scene != SceneBands && opts.Scene != SceneNatural && opts.Scene != SceneStill {
		return SynthResult{}, fmt.Errorf("video: synthetic %s: unknown scene %q", path, opts.Scene)
	}
	if opts.Width%2 != 0 || opts.Height%2 != 0 || opts.Width < 40 || opts.Height < 24 {
		return SynthResult{}, fmt.Errorf("video: synthetic %s: size %dx%d must be even and at least 40x24", path, opts.Width, opts.Height)
	}
	if len(opts.PTS) == 0 {
		return SynthResult{}, fmt.Errorf("video: synthetic %s: no frames", path)
	}
	spec := encoderSpec{
		width: opts.Width, height: opts.Height,
		frameRate: astiav.NewRational(opts.NominalFPS, 1),
		threads:   1,
		bitexact:  true,
	}
	switch opts.Codec {
	case SynthVP8, SynthVP9:
		spec.format = "webm"
		spec.timeBase = astiav.NewRational(1, 1000)
		// Realtime like a browser, but at a fixed speed: with a positive
		// cpu-used, libvpx's VP8 realtime mode picks its speed from how
		// long frames take to encode, so output would depend on machine
		// load; a negative value pins it.
		spec.options = map[string]string{"deadline": "realtime", "cpu-used": "-8", "lag-in-frames": "0", "b": "1M"}
		spec.encoder = "libvpx"
		spec.tickDurations = true
		if opts.Codec == SynthVP9 {
			spec.encoder = "libvpx-vp9"
			spec.options["row-mt"] = "0"
		}
		// MediaRecorder output has no Cues and no Duration: write it as a
		// live stream.
		spec.muxOptions = map[string]string{"live": "1"}
		if opts.Indexed {
			spec.muxOptions = nil
		}
	case SynthAV1:
		spec.format = "webm"
		spec.timeBase = astiav.NewRational(1, 1000)
		spec.encoder = "libsvtav1"
		spec.options = map[string]string{"preset": "12", "crf": "30", "g": "60", "svtav1-params": "lp=1"}
		spec.muxOptions = map[string]string{"live": "1"}
		if opts.Indexed {
			spec.muxOptions = nil
		}
	case SynthH264:
		spec.format = "mp4"
		spec.encoder = "libx264"
		spec.timeBase = astiav.NewRational(1, 90000)
		// mbtree off: with B-frames on small pictures (measured at 160x120
		// to 192x128, not at 256x256) libx264's macroblock-tree lookahead
		// reads heap bytes it never wrote, so the file changed with
		// MALLOC_PERTURB_ and with what the process had freed before.
		// cpu-independent: the same file on every CPU, as exports are
		// (x264CPUIndependent).
		spec.options = map[string]string{"preset": "veryfast", "bf": "2", "g": "30", "crf": "23", "x264-params": "mbtree=0:" + x264CPUIndependent}
		spec.muxOptions = map[string]string{"movflags": "frag_keyframe+empty_moov+default_base_moof"}
		if opts.Indexed {
			spec.muxOptions = nil
		}
	default:
		return SynthResult{}, fmt.Errorf("video: synthetic %s: unknown codec %q", path, opts.Codec)
	}
	if opts.FullRange && !opts.MislabelRange {
		maps.Copy(spec.options, map[string]string{
			"color_range":     strconv.Itoa(int(astiav.ColorRangeJpeg)),
			"colorspace":      strconv.Itoa(int(astiav.ColorSpaceBt709)),
			"color_primaries": strconv.Itoa(int(astiav.ColorPrimariesBt709)),
			"color_trc":       strconv.Itoa(int(astiav.ColorTransferCharacteristicBt709)),
		})
	}
	res := SynthResult{TimeBaseNum: spec.timeBase.Num(), TimeBaseDen: spec.timeBase.Den()}
	for i, ns := range opts.PTS {
		// Round to the nearest tick, half up.
		num := int64(spec.timeBase.Den())
		den := int64(spec.timeBase.Num()) * 1e9
		pts := (2*ns*num + den) / (2 * den)
		if i > 0 && pts <= res.PTS[i-1] {
			return SynthResult{}, fmt.Errorf("video: synthetic %s: frame %d pts %d ns not after the previous frame in time base %d/%d", path, i, ns, spec.timeBase.Num(), spec.timeBase.Den())
		}
		res.PTS = append(res.PTS, pts)
	}
	out, err := openOutput(path, spec)
	if err != nil {
		return SynthResult{}, fmt.Errorf("video: synthetic: %w", err)
	}
	defer out.free()
	for i, pts := range res.PTS {
		if err := ctx.Err(); err != nil {
			return SynthResult{}, err
		}
		f := astiav.AllocFrame()
		f.SetWidth(opts.Width)
		f.SetHeight(opts.Height)
		f.SetPixelFormat(astiav.PixelFormatYuv420P)
		if err := f.AllocBuffer(0); err != nil {
			f.Free()
			return SynthResult{}, fmt.Errorf("video: synthetic %s: frame %d: %w", path, i, err)
		}
		DrawSynthetic(f, opts.Scene, i, opts.FirstCode+uint32(i))
		if opts.FullRange {
			toFullRange(f)
			if !opts.MislabelRange {
				f.SetColorRange(astiav.ColorRangeJpeg)
				f.SetColorSpace(astiav.ColorSpaceBt709)
			}
		}
		f.SetPts(pts)
		err := out.send(f)
		f.Free()
		if err != nil {
			return SynthResult{}, fmt.Errorf("video: synthetic: %w", err)
		}
	}
	if err := out.finish(); err != nil {
		return SynthResult{}, fmt.Errorf("video: synthetic: %w", err)
	}
	// Read the stored timestamps back: muxers may shift them (the mp4
	// muxer moves B-frame streams so that dts starts at 0, which puts the
	// first pts one frame late, as browsers' mp4s show too).
	stored := res.PTS[:0:0]
	err = DecodeEach(ctx, path, func(f DecodedFrame) error {
		stored = append(stored, f.PTS)
		return nil
	})
	if err != nil {
		return SynthResult{}, fmt.Errorf("video: synthetic: read back: %w", err)
	}
	if len(stored) != len(res.PTS) {
		return SynthResult{}, fmt.Errorf("video: synthetic %s: read back %d frames, wrote %d", path, len(stored), len(res.PTS))
	}
	res.PTS = stored
	st, err := os.Stat(path)
	if err != nil {
		return SynthResult{}, fmt.Errorf("video: synthetic: %w", err)
	}
	res.Bytes = st.Size()
	if opts.CutTailBytes > 0 {
		if opts.CutTailBytes >= res.Bytes {
			return SynthResult{}, errors.New("synthetic " + path + ": CutTailBytes is not less than the file size")
		}
		res.Bytes -= opts.CutTailBytes
		if err := os.Truncate(path, res.Bytes); err != nil {
			return SynthResult{}, fmt.Errorf("video: synthetic: %w", err)
		}
	}
	return res, nil
}

// DrawSynthetic paints frame n of a scene into a limited-range yuv420p
// frame; code is the number the code band carries (SceneBands only). A
// full-range synthetic file holds the same picture in full-range levels.
func DrawSynthetic(f *astiav.Frame, scene SynthScene, n int, code uint32) {
	switch scene {
	case SceneNatural:
		drawNatural(f, n)
	case SceneStill:
		drawNatural(f, 0)
		addNoise(f, n)
	default:
		drawSynthetic(f, n, code)
	}
}

// drawSynthetic paints frame n: smooth moving colour gradients, a moving
// bright square, and the code band.
func drawSynthetic(f *astiav.Frame, n int, code uint32) {
	w, h := f.Width(), f.Height()
	cw, ch := (w+1)/2, (h+1)/2
	y, ls := plane(f, 0, h)
	u, cls := plane(f, 1, ch)
	v, _ := plane(f, 2, ch)
	sq := h / 4
	sx := (n * 3) % (w - sq)
	sy := h/codeBandDiv + (n*2)%(h-h/codeBandDiv-sq)
	for yy := 0; yy < h; yy++ {
		row := y[yy*ls:]
		for xx := 0; xx < w; xx++ {
			val := 40 + (xx*150/w+yy*40/h+n*2)%170
			if xx >= sx && xx < sx+sq && yy >= sy && yy < sy+sq {
				val = 220
			}
			row[xx] = byte(val)
		}
	}
	for yy := 0; yy < ch; yy++ {
		for xx := 0; xx < cw; xx++ {
			u[yy*cls+xx] = byte(64 + (xx*128/cw+n)%128)
			v[yy*cls+xx] = byte(64 + (yy*128/ch+2*n)%128)
		}
	}
	drawCode(y, ls, u, v, cls, w, h, code)
}

// drawNatural paints frame n of the natural scene: a shaded background
// with a fine texture, a dark disc and a light box drifting across it,
// and sensor noise that differs per frame.
func drawNatural(f *astiav.Frame, n int) {
	w, h := f.Width(), f.Height()
	cw, ch := (w+1)/2, (h+1)/2
	y, ls := plane(f, 0, h)
	u, cls := plane(f, 1, ch)
	v, _ := plane(f, 2, ch)
	// Drift: the background pans 1 px a frame, the objects 3 and 2.
	dx := n
	cx, cy, r := (w/4+3*n)%w, h/2+int(float64(h/6)*math.Sin(float64(n)/15)), h/5
	bx, by, bs := w-1-(2*n+w/3)%w, h/4, h/4
	for yy := range h {
		row := y[yy*ls:]
		for xx := range w {
			sx := xx + dx
			// Shading and a texture of 8 px period, like a wooden table.
			val := 70.0 + 60.0*float64(yy)/float64(h) + 14*math.Sin(float64(sx)/4+3*math.Sin(float64(yy)/23)) + 6*math.Sin(float64(sx*sx%997)/50)
			if ddx, ddy := xx-cx, yy-cy; ddx*ddx+ddy*ddy < r*r {
				val = 40 + 30*float64(ddx+r)/float64(2*r)
			}
			if xx >= bx && xx < bx+bs && yy >= by && yy < by+bs {
				val = 190 + 20*math.Sin(float64(xx-bx)/3)
			}
			row[xx] = byte(min(235, max(16, val)))
		}
	}
	for yy := range ch {
		for xx := range cw {
			uu, vv := 118+int(8*math.Sin(float64(xx+dx/2)/9)), 136+int(6*math.Cos(float64(yy)/7))
			if ddx, ddy := 2*xx-cx, 2*yy-cy; ddx*ddx+ddy*ddy < r*r {
				uu, vv = 150, 110
			}
			if 2*xx >= bx && 2*xx < bx+bs && 2*yy >= by && 2*yy < by+bs {
				uu, vv = 100, 170
			}
			u[yy*cls+xx], v[yy*cls+xx] = byte(uu), byte(vv)
		}
	}
	addNoise(f, n)
}

// addNoise adds frame n's sensor noise (±2 levels of luma, seeded by n).
func addNoise(f *astiav.Frame, n int) {
	w, h := f.Width(), f.Height()
	y, ls := plane(f, 0, h)
	s := uint32(n)*2654435761 + 1
	for yy := range h {
		row := y[yy*ls : yy*ls+w]
		for xx := range row {
			s ^= s << 13
			s ^= s >> 17
			s ^= s << 5
			row[xx] = byte(min(235, max(16, int(row[xx])+int(s%5)-2)))
		}
	}
}

// toFullRange rewrites a limited-range yuv420p picture's levels as full
// range: the same picture, as a camera that records full range stores it.
func toFullRange(f *astiav.Frame) {
	w, h := f.Width(), f.Height()
	cw, ch := (w+1)/2, (h+1)/2
	y, ls := plane(f, 0, h)
	u, cls := plane(f, 1, ch)
	v, _ := plane(f, 2, ch)
	for yy := range h {
		for xx, p := range y[yy*ls : yy*ls+w] {
			y[yy*ls+xx] = byte(min(255, max(0, ((int(p)-16)*255*2+219)/(2*219))))
		}
	}
	for _, c := range [][]byte{u, v} {
		for yy := range ch {
			for xx, p := range c[yy*cls : yy*cls+cw] {
				d := (int(p) - 128) * 255
				if d >= 0 {
					d = (2*d + 224) / (2 * 224)
				} else {
					d = -((-2*d + 224) / (2 * 224))
				}
				c[yy*cls+xx] = byte(min(255, max(0, 128+d)))
			}
		}
	}
}

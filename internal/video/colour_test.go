package video

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/asticode/go-astiav"

	"github.com/ceres-robotics/ceres-export/internal/media"
)

// colourSources are the source colours a browser records, as synthetic
// cameras: limited range (the default synthetic cameras), full range
// tagged in the bitstream (Chromium's VP9 and AV1, H.264 as yuvj420p),
// and full range that only the WebM's Colour element states (Chromium's
// VP8).
var colourSources = []struct {
	name  string
	opts  SynthOptions
	space astiav.ColorSpace // the matrix the export must tag
}{
	{"vp8 full (WebM Colour only)", SynthOptions{Codec: SynthVP8, FullRange: true}, astiav.ColorSpaceBt709},
	{"vp9 full", SynthOptions{Codec: SynthVP9, FullRange: true}, astiav.ColorSpaceBt709},
	{"av1 full", SynthOptions{Codec: SynthAV1, FullRange: true}, astiav.ColorSpaceBt709},
	{"h264 full", SynthOptions{Codec: SynthH264, FullRange: true}, astiav.ColorSpaceBt709},
}

// exportPlanes writes a synthetic camera, exports it with x264 at 30 fps
// (frame k shows source frame k) and returns each exported frame's
// planes and colour.
func exportPlanes(t *testing.T, opts SynthOptions, frames int) ([]media.Planes, []Colour) {
	t.Helper()
	ctx := context.Background()
	opts.PTS = make([]int64, frames)
	for i := range opts.PTS {
		opts.PTS[i] = int64(i) * 1_000_000_000 / 30
	}
	src := filepath.Join(t.TempDir(), "camera")
	if _, err := WriteSynthetic(ctx, src, opts); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out.mp4")
	if _, err := ExportCamera(ctx, []Source{{Path: src, StartT: journalBase}}, []EpisodeTimes{{Times: clockTimes(journalBase, frames, 30)}}, ExportOptions{
		FPS: 30, Encoder: EncoderOptions{Codec: EncoderX264}, FilePath: func(int, int) string { return out },
	}); err != nil {
		t.Fatal(err)
	}
	var conv Converter
	defer conv.Close()
	var planes []media.Planes
	var colours []Colour
	err := DecodeEach(ctx, out, func(f DecodedFrame) error {
		p, err := conv.Planes(f, opts.Width, opts.Height)
		planes, colours = append(planes, p), append(colours, f.Colour)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(planes) != frames {
		t.Fatalf("%d frames exported, want %d", len(planes), frames)
	}
	return planes, colours
}

// Every source colour lands on the same levels: each exported frame of a
// full-range camera has the levels of the export of the same picture
// recorded limited range by the same codec (gain and mean of 8×8 block
// means, which the encoder keeps), and the file is tagged limited range
// with the source's matrix. A full-range source passed through unchanged
// has 1.16 times the contrast.
func TestExportLevelsPerSourceColour(t *testing.T) {
	const frames, w, h = 8, 160, 120
	for _, tc := range colourSources {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.Width, opts.Height, opts.Scene = w, h, SceneNatural
			got, colours := exportPlanes(t, opts, frames)
			opts.FullRange = false
			want, _ := exportPlanes(t, opts, frames)
			for k := range got {
				if colours[k].Range != astiav.ColorRangeMpeg || colours[k].Space != tc.space {
					t.Errorf("frame %d: colour %s, want range tv, matrix %s", k, colours[k], tc.space)
				}
				for i, pl := range [][2][]byte{{got[k].Y, want[k].Y}, {got[k].U, want[k].U}, {got[k].V, want[k].V}} {
					pw, ph := w, h
					if i > 0 {
						pw, ph = w/2, h/2
					}
					gain, offset := levelFit(media.BlockMeans(pl[0], pw, ph, 8), media.BlockMeans(pl[1], pw, ph, 8))
					// Chroma varies less, so its gain is less sure; full
					// range passed through is 1.14 on chroma.
					tol := 0.04
					if i > 0 {
						tol = 0.07
					}
					if math.Abs(gain-1) > tol || math.Abs(offset) > 1.5 {
						t.Errorf("frame %d plane %d: levels are %.3f × the limited-range recording's %+.2f, want 1 ± %.2f and ±1.5", k, i, gain, offset, tol)
					}
				}
			}
		})
	}
}

func meanAbsDiff(a, b []byte) float64 {
	var s float64
	for i := range a {
		s += math.Abs(float64(a[i]) - float64(b[i]))
	}
	return s / float64(len(a))
}

// swscale (FFmpeg 7.1) converts levels between ranges but no matrix from
// YUV to YUV: a BT.601 picture scaled with BT.709 as the output's
// coefficients, read as BT.709, is further from the picture's RGB (1.8
// levels mean absolute difference, measured) than a conversion that keeps
// the matrix (0). This is why the exporter keeps (and tags) the source's
// matrix instead of converting to BT.709; if a later swscale converts,
// this test says so.
func TestScalerKeepsMatrix(t *testing.T) {
	const w, h = 64, 48
	f := astiav.AllocFrame()
	defer f.Free()
	f.SetWidth(w)
	f.SetHeight(h)
	f.SetPixelFormat(astiav.PixelFormatYuv420P)
	if err := f.AllocBuffer(0); err != nil {
		t.Fatal(err)
	}
	DrawSynthetic(f, SceneNatural, 3, 0)
	f.SetColorSpace(astiav.ColorSpaceBt470Bg)
	in := Colour{Range: astiav.ColorRangeMpeg, Space: astiav.ColorSpaceBt470Bg}
	out := Colour{Range: astiav.ColorRangeMpeg, Space: astiav.ColorSpaceBt709}
	s, err := newScaler(scalerKey{w: w, h: h, format: astiav.PixelFormatYuv420P, in: in, dw: w, dh: h, out: out})
	if err != nil {
		t.Fatal(err)
	}
	defer s.free()
	g, err := s.scale(f)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Free()
	a, err := DecodedFrame{Frame: f}.RGBA()
	if err != nil {
		t.Fatal(err)
	}
	b, err := DecodedFrame{Frame: g}.RGBA()
	if err != nil {
		t.Fatal(err)
	}
	if d := meanAbsDiff(a.Pix, b.Pix) * 4 / 3; d < 1 {
		t.Errorf("the BT.709 conversion is %.2f levels from the BT.601 picture's RGB: swscale converts matrices now; convert to BT.709", d)
	}
}

// levelFit returns the least-squares gain of got against want around
// their means and the mean difference got − want.
func levelFit(got, want []float64) (gain, offset float64) {
	var sg, sw float64
	for i := range got {
		sg += got[i]
		sw += want[i]
	}
	n := float64(max(1, len(got)))
	mg, mw := sg/n, sw/n
	var cov, vw float64
	for i := range got {
		dw := want[i] - mw
		cov += (got[i] - mg) * dw
		vw += dw * dw
	}
	if vw == 0 {
		return 1, mg - mw
	}
	return cov / vw, mg - mw
}

package video

// The scaler below is swscale driven through cgo: go-astiav v0.39 has no
// sws_setColorspaceDetails, so its SoftwareScaleContext converts with
// swscale's defaults (limited range in and out unless the pixel format is
// a yuvj one), which passes a full-range yuv420p frame through with its
// levels unchanged.

//#cgo pkg-config: libswscale libavutil
//#include <libswscale/swscale.h>
//#include <libavutil/frame.h>
//#include <libavutil/pixdesc.h>
//#include <libavutil/opt.h>
//static struct SwsContext *ceres_sws_new(int sw, int sh, int sf, int dw, int dh, int df,
//		int srcSpace, int srcFull, int dstSpace, int dstFull) {
//	struct SwsContext *c = sws_alloc_context();
//	if (!c) return NULL;
//	// The ranges are set before initialisation: with equal sizes and
//	// formats swscale otherwise picks a plain copy, which no later
//	// sws_setColorspaceDetails undoes.
//	if (av_opt_set_int(c, "srcw", sw, 0) < 0 || av_opt_set_int(c, "srch", sh, 0) < 0 ||
//		av_opt_set_int(c, "src_format", sf, 0) < 0 || av_opt_set_int(c, "dstw", dw, 0) < 0 ||
//		av_opt_set_int(c, "dsth", dh, 0) < 0 || av_opt_set_int(c, "dst_format", df, 0) < 0 ||
//		av_opt_set_int(c, "sws_flags", SWS_BICUBIC, 0) < 0 ||
//		av_opt_set_int(c, "src_range", srcFull, 0) < 0 || av_opt_set_int(c, "dst_range", dstFull, 0) < 0 ||
//		sws_init_context(c, NULL, NULL) < 0 ||
//		sws_setColorspaceDetails(c, sws_getCoefficients(srcSpace), srcFull,
//			sws_getCoefficients(dstSpace), dstFull, 0, 1 << 16, 1 << 16) < 0) {
//		sws_freeContext(c);
//		return NULL;
//	}
//	return c;
//}
//static void ceres_set_colour(AVFrame *f, int prim, int trc) { f->color_primaries = prim; f->color_trc = trc; }
import "C"

import (
	"fmt"

	"github.com/asticode/go-astiav"
)

// Colour is what a picture's samples mean: the range of its levels, the
// matrix of its YUV, its primaries and transfer (FFmpeg's enums; the
// unspecified value where nothing says).
type Colour struct {
	Range     astiav.ColorRange
	Space     astiav.ColorSpace
	Primaries astiav.ColorPrimaries
	Transfer  astiav.ColorTransferCharacteristic
}

// String names the colour as ffprobe does: range/matrix/primaries/transfer.
func (c Colour) String() string {
	name := func(p *C.char) string {
		if p == nil {
			return "unknown"
		}
		return C.GoString(p)
	}
	return fmt.Sprintf("%s/%s/%s/%s", c.Range, c.Space,
		name(C.av_color_primaries_name(C.enum_AVColorPrimaries(c.Primaries))),
		name(C.av_color_transfer_name(C.enum_AVColorTransferCharacteristic(c.Transfer))))
}

// Full reports whether the levels span 0 to 255 (pc, JPEG range).
func (c Colour) Full() bool { return c.Range == astiav.ColorRangeJpeg }

// sourceColour resolves what a decoded source frame's samples mean from
// the frame (what the decoder read from the bitstream), the container
// (the stream's parameters: a WebM Colour element, an mp4 colr box) and
// the pixel format:
//
//   - each property comes from the frame where it states one, else from
//     the container;
//   - except for VP8, whose bitstream holds no colour description:
//     FFmpeg's decoder reports bt470bg and limited range for every VP8
//     frame, so there the container's statement wins where it makes one
//     (Chromium's VP8 WebM says bt709 and full range, and its levels are
//     full range, measured in the browser recordings test);
//   - a yuvj pixel format is full range;
//   - a range nothing states is limited, the range of yuv420p video.
func sourceColour(f *astiav.Frame, cp *astiav.CodecParameters) Colour {
	cs, prim, trc := frameColors(f)
	fr := Colour{Range: f.ColorRange(), Space: astiav.ColorSpace(cs),
		Primaries: astiav.ColorPrimaries(prim), Transfer: astiav.ColorTransferCharacteristic(trc)}
	var ct Colour
	if cp != nil {
		ct = Colour{Range: cp.ColorRange(), Space: cp.ColorSpace(), Primaries: cp.ColorPrimaries(), Transfer: cp.ColorTransferCharacteristic()}
	}
	first, second := fr, ct
	if cp != nil && cp.CodecID() == astiav.CodecIDVp8 {
		first, second = ct, fr
	}
	c := first
	if c.Range == astiav.ColorRangeUnspecified {
		c.Range = second.Range
	}
	if c.Space == astiav.ColorSpaceUnspecified {
		c.Space = second.Space
	}
	if c.Primaries == astiav.ColorPrimariesUnspecified {
		c.Primaries = second.Primaries
	}
	if c.Transfer == astiav.ColorTransferCharacteristicUnspecified {
		c.Transfer = second.Transfer
	}
	switch f.PixelFormat() {
	case astiav.PixelFormatYuvj420P, astiav.PixelFormatYuvj422P, astiav.PixelFormatYuvj444P,
		astiav.PixelFormatYuvj440P, astiav.PixelFormatYuvj411P:
		c.Range = astiav.ColorRangeJpeg
	}
	if c.Range != astiav.ColorRangeJpeg {
		c.Range = astiav.ColorRangeMpeg
	}
	return c
}

// outputColour is the colour the exporter writes for a source of colour
// src: limited range always (yuv420p as LeRobot's writer makes it, and the
// only range every player and both of LeRobot's decoders read alike), the
// source's matrix, primaries and transfer. The matrix is kept, not
// converted to BT.709: swscale (FFmpeg 7.1) converts levels between
// ranges but applies no matrix change from YUV to YUV
// (TestScalerKeepsMatrix), and the tag makes a decoder use the right one.
func outputColour(src Colour) Colour {
	out := src
	out.Range = astiav.ColorRangeMpeg
	return out
}

// scaler converts frames of one size, pixel format and colour to the
// output's size, yuv420p and colour.
type scaler struct {
	c   *C.struct_SwsContext
	key scalerKey
}

// scalerKey is what a scaler is made for.
type scalerKey struct {
	w, h   int
	format astiav.PixelFormat
	in     Colour
	dw, dh int
	out    Colour
}

// swsSpace is the swscale coefficient table (SWS_CS_*, numbered as
// FFmpeg's AVColorSpace) for a matrix; unspecified is BT.601, swscale's
// and every FFmpeg-based player's default.
func swsSpace(s astiav.ColorSpace) C.int {
	if s == astiav.ColorSpaceUnspecified {
		return C.SWS_CS_DEFAULT
	}
	return C.int(s)
}

func newScaler(k scalerKey) (*scaler, error) {
	full := func(c Colour) C.int {
		if c.Full() {
			return 1
		}
		return 0
	}
	c := C.ceres_sws_new(C.int(k.w), C.int(k.h), C.int(k.format), C.int(k.dw), C.int(k.dh), C.int(astiav.PixelFormatYuv420P),
		swsSpace(k.in.Space), full(k.in), swsSpace(k.out.Space), full(k.out))
	if c == nil {
		return nil, fmt.Errorf("scaler %dx%d %s %s to %dx%d yuv420p %s: swscale refused", k.w, k.h, k.format, k.in, k.dw, k.dh, k.out)
	}
	return &scaler{c: c, key: k}, nil
}

// scale converts src into a fresh frame, tagged with the output colour.
func (s *scaler) scale(src *astiav.Frame) (*astiav.Frame, error) {
	dst := astiav.AllocFrame()
	dst.SetWidth(s.key.dw)
	dst.SetHeight(s.key.dh)
	dst.SetPixelFormat(astiav.PixelFormatYuv420P)
	if err := dst.AllocBuffer(0); err != nil {
		dst.Free()
		return nil, err
	}
	if ret := C.sws_scale_frame(s.c, (*C.AVFrame)(dst.UnsafePointer()), (*C.AVFrame)(src.UnsafePointer())); ret < 0 {
		dst.Free()
		return nil, fmt.Errorf("scale: %w", astiav.Error(int(ret)))
	}
	setColour(dst, s.key.out)
	return dst, nil
}

func (s *scaler) free() {
	if s != nil && s.c != nil {
		C.sws_freeContext(s.c)
		s.c = nil
	}
}

// setColour tags a frame with colour c.
func setColour(f *astiav.Frame, c Colour) {
	f.SetColorRange(c.Range)
	f.SetColorSpace(c.Space)
	C.ceres_set_colour((*C.AVFrame)(f.UnsafePointer()), C.int(c.Primaries), C.int(c.Transfer))
}

// needsConversion reports whether a source frame must go through the
// scaler to be an output frame: a size, pixel format or range not the
// output's.
func needsConversion(f *astiav.Frame, in Colour, w, h int) bool {
	return f.Width() != w || f.Height() != h || f.PixelFormat() != astiav.PixelFormatYuv420P || in.Full()
}

package video

// go-astiav (v0.39 too) has no accessor for the linked libraries' versions.

//#cgo pkg-config: libavcodec libavformat libavutil libswscale libswresample libavfilter libavdevice SvtAv1Enc x264 vpx dav1d
//#include <stdint.h>
//#include <libavcodec/avcodec.h>
//#include <libavformat/avformat.h>
//#include <libavutil/avutil.h>
//#include <libswscale/swscale.h>
//#include <libswresample/swresample.h>
//#include <libavfilter/avfilter.h>
//#include <libavdevice/avdevice.h>
//#include <EbSvtAv1Enc.h>
//#include <x264.h>
//#include <x264_config.h>
//#include <vpx/vpx_codec.h>
//#include <dav1d/dav1d.h>
//static const char *ceres_x264_version(void) { return X264_POINTVER; }
import "C"

import (
	"fmt"
	"strings"

	"github.com/asticode/go-astiav"
)

// Library is one C library this binary runs with (FFmpeg's, or a codec
// library FFmpeg was built with), as it reports its own version at run
// time: the library linked in, statically or loaded shared, not the
// headers built against. x264 alone has no such call (see Libraries).
type Library struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Libraries returns the FFmpeg release and the versions of FFmpeg's
// libraries, then of the codec libraries export and synth reach through
// it, named as release/libs.lock names them: svt-av1, x264, libvpx and
// dav1d. x264's version is its header's (X264_POINTVER): x264 has no call
// that reports it, but its headers rename x264_encoder_open after the build
// number, so a binary cannot link an x264 of another build than the header
// says.
func Libraries() (release string, libs []Library) {
	av := func(name string, n C.uint) Library {
		return Library{name, fmt.Sprintf("%d.%d.%d", n>>16, (n>>8)&0xff, n&0xff)}
	}
	// svt-av1 and libvpx put a "v" before the number; dav1d does not.
	str := func(name string, s *C.char) Library {
		return Library{name, strings.TrimPrefix(C.GoString(s), "v")}
	}
	return C.GoString(C.av_version_info()), []Library{
		av("libavcodec", C.avcodec_version()),
		av("libavformat", C.avformat_version()),
		av("libavutil", C.avutil_version()),
		av("libswscale", C.swscale_version()),
		av("libswresample", C.swresample_version()),
		av("libavfilter", C.avfilter_version()),
		av("libavdevice", C.avdevice_version()),
		str("svt-av1", C.svt_av1_get_version()),
		str("x264", C.ceres_x264_version()),
		str("libvpx", C.vpx_codec_version_str()),
		str("dav1d", C.dav1d_version()),
	}
}

// Encoders returns which of the encoders export can use this FFmpeg has,
// in EncoderSVTAV1, EncoderX264 order.
func Encoders() map[string]bool {
	out := map[string]bool{}
	for _, name := range []string{EncoderSVTAV1, EncoderX264} {
		out[name] = astiav.FindEncoderByName(name) != nil
	}
	return out
}

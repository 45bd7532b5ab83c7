package video

// go-astiav v0.16 has no accessor for the linked libraries' versions.

//#cgo pkg-config: libavcodec libavformat libavutil libswscale
//#include <libavcodec/avcodec.h>
//#include <libavformat/avformat.h>
//#include <libavutil/avutil.h>
//#include <libswscale/swscale.h>
import "C"

import (
	"fmt"

	"github.com/asticode/go-astiav"
)

// Library is one FFmpeg library this binary runs with, as it reports its
// own version at run time (the shared library loaded, not the headers
// built against).
type Library struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Libraries returns the FFmpeg release and its libraries' versions.
func Libraries() (release string, libs []Library) {
	v := func(name string, n C.uint) Library {
		return Library{name, fmt.Sprintf("%d.%d.%d", n>>16, (n>>8)&0xff, n&0xff)}
	}
	return C.GoString(C.av_version_info()), []Library{
		v("libavcodec", C.avcodec_version()),
		v("libavformat", C.avformat_version()),
		v("libavutil", C.avutil_version()),
		v("libswscale", C.swscale_version()),
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

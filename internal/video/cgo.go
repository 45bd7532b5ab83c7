package video

// The helpers below fill gaps in go-astiav v0.39 (see docs/video.md): it
// has no accessor for best_effort_timestamp, a frame's flags (FFmpeg 7's
// AV_FRAME_FLAG_KEY), its colour primaries or transfer characteristic, and
// no way to write into or read a frame's planes in place.

//#cgo pkg-config: libavutil
//#include <libavutil/frame.h>
//static int64_t ceres_best_effort_ts(AVFrame *f) { return f->best_effort_timestamp; }
//static uint8_t *ceres_plane(AVFrame *f, int i) { return f->data[i]; }
//static int ceres_linesize(AVFrame *f, int i) { return f->linesize[i]; }
//static int ceres_primaries(AVFrame *f) { return f->color_primaries; }
//static int ceres_trc(AVFrame *f) { return f->color_trc; }
//static int ceres_key_flag(AVFrame *f) { return (f->flags & AV_FRAME_FLAG_KEY) != 0; }
//static void ceres_clear_key_flag(AVFrame *f) { f->flags &= ~AV_FRAME_FLAG_KEY; }
import "C"

import (
	"unsafe"

	"github.com/asticode/go-astiav"
)

// noPTS is FFmpeg's AV_NOPTS_VALUE.
const noPTS = int64(-0x7fffffffffffffff - 1)

// framePTS returns the frame's presentation timestamp: best_effort_timestamp,
// falling back to pts; ok is false when neither is set.
func framePTS(f *astiav.Frame) (int64, bool) {
	ts := int64(C.ceres_best_effort_ts((*C.AVFrame)(f.UnsafePointer())))
	if ts == noPTS {
		ts = f.Pts()
	}
	return ts, ts != noPTS
}

// plane returns plane i of a frame as a byte slice of linesize*rows bytes;
// valid while the frame holds its buffers.
func plane(f *astiav.Frame, i, rows int) ([]byte, int) {
	cf := (*C.AVFrame)(f.UnsafePointer())
	p := C.ceres_plane(cf, C.int(i))
	ls := int(C.ceres_linesize(cf, C.int(i)))
	if p == nil || ls <= 0 || rows <= 0 {
		return nil, 0
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), ls*rows), ls
}

// frameColors returns the frame's colour space, primaries and transfer
// characteristic as FFmpeg enum values (go-astiav v0.39 has a getter for
// the space only).
func frameColors(f *astiav.Frame) (cs, prim, trc int) {
	cf := (*C.AVFrame)(f.UnsafePointer())
	return int(f.ColorSpace()), int(C.ceres_primaries(cf)), int(C.ceres_trc(cf))
}

// clearKeyFrame marks a frame as not a key frame, so that the encoder alone
// decides where key frames go. A frame sent to the encoder shares the
// decoded source frame's properties, and a decoded key frame says so twice
// in FFmpeg 7: in the deprecated key_frame field, which the encoder folds
// into flags when it takes the frame, and in flags' AV_FRAME_FLAG_KEY. Both
// are cleared.
func clearKeyFrame(f *astiav.Frame) {
	f.SetKeyFrame(false)
	C.ceres_clear_key_flag((*C.AVFrame)(f.UnsafePointer()))
}

// isKeyFrame reports whether the frame is flagged a key frame (either way,
// see clearKeyFrame).
func isKeyFrame(f *astiav.Frame) bool {
	return f.KeyFrame() || C.ceres_key_flag((*C.AVFrame)(f.UnsafePointer())) != 0
}

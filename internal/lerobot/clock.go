package lerobot

import (
	"fmt"
	"math"
	"math/bits"
)

// nsPerSecond is the journal clock's resolution: times are integer
// nanoseconds.
const nsPerSecond = 1_000_000_000

// MaxFPS is the highest dataset rate the frame clock accepts: one frame per
// nanosecond of journal time. Above it two frames would share a journal time
// and the 128-bit arithmetic below could overflow.
const MaxFPS = nsPerSecond

// checkFPS panics on a rate outside [1, MaxFPS]: such a rate is a programming
// error (callers reject it with an error before any clock call).
func checkFPS(fps int) {
	if fps < 1 || fps > MaxFPS {
		panic(fmt.Sprintf("lerobot: fps %d outside [1, %d]", fps, MaxFPS))
	}
}

// Length returns the number of frames of the window [start, end) at fps frames
// per second: floor((end - start) * fps / 1e9). It is 0 when end <= start.
// The product is formed in 128 bits, so any pair of int64 times is exact; a
// result above math.MaxInt (only possible on 32-bit platforms or for windows
// of centuries at MaxFPS) saturates at math.MaxInt. Length panics if fps is
// outside [1, MaxFPS].
func Length(start, end int64, fps int) int {
	checkFPS(fps)
	if end <= start {
		return 0
	}
	// end > start, so the unsigned difference is the exact width even where
	// the signed subtraction would overflow.
	width := uint64(end) - uint64(start)
	hi, lo := bits.Mul64(width, uint64(fps))
	// hi < fps <= 1e9, so the quotient fits in 64 bits and Div64 cannot
	// panic.
	q, _ := bits.Div64(hi, lo, nsPerSecond)
	if q > math.MaxInt {
		return math.MaxInt
	}
	return int(q)
}

// FrameTime returns the journal time of frame k of a window that starts at
// start: T_k = start + round(k * 1e9 / fps) ns, computed from k alone so that
// no error accumulates over long windows. The rounding is exact integer
// arithmetic, half up: an offset of exactly n + 1/2 ns (for example k = 1 at
// fps 1024, 976562.5 ns) becomes n + 1. FrameTime panics if k is negative, if
// fps is outside [1, MaxFPS], or if the result overflows int64 (which no frame
// k < Length(start, end, fps) can do, since such a frame lies before end).
func FrameTime(start int64, k, fps int) int64 {
	checkFPS(fps)
	if k < 0 {
		panic(fmt.Sprintf("lerobot: negative frame index %d", k))
	}
	// round(k*1e9/fps) half up = floor((2*k*1e9 + fps) / (2*fps)).
	hi, lo := bits.Mul64(uint64(k), 2*nsPerSecond)
	var carry uint64
	lo, carry = bits.Add64(lo, uint64(fps), 0)
	hi += carry
	// Div64 needs hi < divisor, i.e. a quotient that fits in 64 bits; a
	// huge k at a low fps breaks that, and its time would overflow anyway.
	div := 2 * uint64(fps)
	if hi >= div {
		panic(fmt.Sprintf("lerobot: frame %d at %d fps overflows the journal clock", k, fps))
	}
	offset, _ := bits.Div64(hi, lo, div)
	if offset > math.MaxInt64 || start > 0 && offset > uint64(math.MaxInt64-start) {
		panic(fmt.Sprintf("lerobot: frame %d at %d fps from %d overflows the journal clock", k, fps, start))
	}
	return start + int64(offset)
}

// LastFrameTime returns the time of the last frame of an episode of length
// frames starting at start: FrameTime(start, length-1, fps). It panics if
// length < 1.
func LastFrameTime(start int64, length, fps int) int64 {
	if length < 1 {
		panic(fmt.Sprintf("lerobot: episode of %d frames has no last frame", length))
	}
	return FrameTime(start, length-1, fps)
}

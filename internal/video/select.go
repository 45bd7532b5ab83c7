package video

import (
	"errors"
	"io"
	"math/big"

	"github.com/asticode/go-astiav"
)

// pick advances the sources to target and returns the nearest frame (the
// earlier on a tie) and whether it lies more than one source period away.
func (x *exporter) pick(target *big.Rat) (*heldFrame, bool, error) {
	if err := x.advance(target); err != nil {
		return nil, false, err
	}
	var chosen *heldFrame
	switch {
	case x.prev == nil:
		chosen = x.next // before the camera starts: the first frame
	case x.next == nil:
		chosen = x.prev // after the last frame
	default:
		dPrev := new(big.Rat).Sub(target, x.prev.t)
		dNext := new(big.Rat).Sub(x.next.t, target)
		chosen = x.prev
		if dNext.Cmp(dPrev) < 0 {
			chosen = x.next
		}
	}
	d := new(big.Rat).Sub(target, chosen.t)
	d.Abs(d)
	return chosen, d.Cmp(x.period) > 0, nil
}

// advance reads the sources until x.prev is the last frame at or before
// target and x.next the first after it (nil after the last frame).
func (x *exporter) advance(target *big.Rat) error {
	for x.next != nil && x.next.t.Cmp(target) <= 0 {
		x.prev.free() // x.conv holds its own reference
		x.prev = x.next
		n, err := x.src.next()
		if errors.Is(err, io.EOF) {
			x.next = nil
			break
		}
		if err != nil {
			return err
		}
		x.next = n
	}
	return nil
}

// convert makes x.conv hold the chosen frame at output size in yuv420p and
// the output's colour (outputColour: limited range), reusing it while the
// same source frame repeats. A frame already so passes through untouched;
// any other goes through the scaler once. A fresh frame is allocated per
// source frame, because the encoder keeps references to the frames it was
// sent.
func (x *exporter) convert(h *heldFrame) error {
	if h.seq == x.convSeq {
		return nil
	}
	src := h.frame
	var dst *astiav.Frame
	if !needsConversion(src, h.colour, x.w, x.h) {
		dst = astiav.AllocFrame()
		if err := dst.Ref(src); err != nil {
			dst.Free()
			return err
		}
	} else {
		key := scalerKey{w: src.Width(), h: src.Height(), format: src.PixelFormat(), in: h.colour, dw: x.w, dh: x.h, out: x.out}
		if x.sws == nil || key != x.sws.key {
			x.sws.free()
			x.sws = nil
			s, err := newScaler(key)
			if err != nil {
				return err
			}
			x.sws = s
		}
		var err error
		if dst, err = x.sws.scale(src); err != nil {
			return err
		}
	}
	if x.conv != nil {
		x.conv.Free()
	}
	x.conv, x.convSeq = dst, h.seq
	return nil
}

// sample adds x.conv to the episode's statistics. Only the pixels
// LeRobot's stride keeps are converted to RGB (BT.601 limited range, or
// BT.709 when the source says so), in integer arithmetic: converting the
// whole picture would cost as much as a tenth of an x264 encode.
func (x *exporter) sample(acc *imageAccumulator) error {
	w, h := x.w, x.h
	yp, yls := plane(x.conv, 0, h)
	up, cls := plane(x.conv, 1, (h+1)/2)
	vp, _ := plane(x.conv, 2, (h+1)/2)
	if yp == nil || up == nil || vp == nil {
		return errors.New("frame has no planes")
	}
	acc.addYUV420(yp, yls, up, vp, cls, w, h, statsStride(w, h), x.toRGB)
	return nil
}

package video

import (
	"fmt"

	"github.com/ceres-robotics/ceres-export/internal/media"
)

// Converter brings decoded frames into the exporter's output colour at a
// chosen size, with the scaler the exporter uses, so that a source frame
// and the exported frame made from it can be compared level for level.
// The zero value is ready; Close releases it.
type Converter struct {
	s *scaler
}

// Planes returns f converted to the output colour (outputColour of
// f.Colour) at w×h (even).
func (c *Converter) Planes(f DecodedFrame, w, h int) (media.Planes, error) {
	src := f.Frame
	p := media.Planes{W: w, H: h}
	fr := src
	if needsConversion(src, f.Colour, w, h) {
		key := scalerKey{w: src.Width(), h: src.Height(), format: src.PixelFormat(), in: f.Colour, dw: w, dh: h, out: outputColour(f.Colour)}
		if c.s == nil || c.s.key != key {
			c.s.free()
			c.s = nil
			s, err := newScaler(key)
			if err != nil {
				return p, fmt.Errorf("video: frame %d: %w", f.Index, err)
			}
			c.s = s
		}
		var err error
		if fr, err = c.s.scale(src); err != nil {
			return p, fmt.Errorf("video: frame %d: %w", f.Index, err)
		}
		defer fr.Free()
	}
	cw, ch := (w+1)/2, (h+1)/2
	for i, dst := range []*[]byte{&p.Y, &p.U, &p.V} {
		pw, ph := w, h
		if i > 0 {
			pw, ph = cw, ch
		}
		pl, ls := plane(fr, i, ph)
		if pl == nil {
			return p, fmt.Errorf("video: frame %d has no plane %d", f.Index, i)
		}
		*dst = make([]byte, pw*ph)
		for y := range ph {
			copy((*dst)[y*pw:(y+1)*pw], pl[y*ls:y*ls+pw])
		}
	}
	return p, nil
}

// Close releases the converter's scaler.
func (c *Converter) Close() {
	c.s.free()
	c.s = nil
}

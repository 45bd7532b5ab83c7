package video

import (
	"fmt"
	"math"
)

// Planes is a picture in the exporter's output colour (yuv420p, limited
// range), its planes packed without padding: Y is W×H, U and V are
// ((W+1)/2)×((H+1)/2).
type Planes struct {
	W, H    int
	Y, U, V []byte
}

// Converter brings decoded frames into the exporter's output colour at a
// chosen size, with the scaler the exporter uses, so that a source frame
// and the exported frame made from it can be compared level for level.
// The zero value is ready; Close releases it.
type Converter struct {
	s *scaler
}

// Planes returns f converted to the output colour (outputColour of
// f.Colour) at w×h (even).
func (c *Converter) Planes(f DecodedFrame, w, h int) (Planes, error) {
	src := f.Frame
	p := Planes{W: w, H: h}
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

// PrintSize is the size at which verify compares an exported frame with
// source frames: the output size w×h scaled down by a whole factor to at
// most 160 pixels wide (even). Scaling averages away most of the coding
// noise and keeps the structure that tells neighbouring frames apart.
func PrintSize(w, h int) (int, int) {
	s := max(1, (w+159)/160)
	return max(2, w/s&^1), max(2, h/s&^1)
}

// LumaPSNR is the peak signal-to-noise ratio of a's luma against b's, in
// dB (100 for identical pictures); a and b are the same size.
func LumaPSNR(a, b Planes) float64 {
	var se float64
	for i := range a.Y {
		d := float64(a.Y[i]) - float64(b.Y[i])
		se += d * d
	}
	if se == 0 {
		return 100
	}
	return min(100, 10*math.Log10(255*255*float64(len(a.Y))/se))
}

// LevelSums compares exported frames' levels with their source frames',
// pooled over many frames: a range or colour error is the whole camera's,
// while one frame's contrast moves with its coding. The zero value is
// ready.
type LevelSums struct {
	n, sg, sw, sww, swg float64
	su, sv              float64
	frames              int
}

// Add adds one exported frame (got) and the source frame it shows (want),
// of the same size: their luma 8×8 block means (which coding keeps, while
// it smooths what lies within a block) and chroma means.
func (s *LevelSums) Add(got, want Planes) {
	g, w := blockMeans(got.Y, got.W, got.H, 8), blockMeans(want.Y, want.W, want.H, 8)
	for i := range g {
		s.n++
		s.sg += g[i]
		s.sw += w[i]
		s.sww += w[i] * w[i]
		s.swg += w[i] * g[i]
	}
	s.su += mean(got.U) - mean(want.U)
	s.sv += mean(got.V) - mean(want.V)
	s.frames++
}

// Frames is how many frame pairs were added.
func (s *LevelSums) Frames() int { return s.frames }

// Levels returns the least-squares contrast (gain) of the exported luma
// against the source's (1.164 when full-range levels pass as limited
// range, 0.859 the other way), the mean luma difference exported − source
// in levels, and the chroma planes' mean differences (a colour cast).
func (s *LevelSums) Levels() (gain, offset, du, dv float64) {
	if s.frames == 0 {
		return 1, 0, 0, 0
	}
	mg, mw := s.sg/s.n, s.sw/s.n
	cov, vw := s.swg/s.n-mw*mg, s.sww/s.n-mw*mw
	gain = 1
	if vw > 0 {
		gain = cov / vw
	}
	f := float64(s.frames)
	return gain, mg - mw, s.su / f, s.sv / f
}

func mean(p []byte) float64 {
	var s int
	for _, v := range p {
		s += int(v)
	}
	return float64(s) / float64(max(1, len(p)))
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

// blockMeans returns the means of a w×h plane's b×b blocks (the whole
// plane as one block when it is smaller).
func blockMeans(p []byte, w, h, b int) []float64 {
	if w < b || h < b {
		return []float64{mean(p)}
	}
	var out []float64
	for by := 0; by+b <= h; by += b {
		for bx := 0; bx+b <= w; bx += b {
			var s int
			for y := by; y < by+b; y++ {
				for _, v := range p[y*w+bx : y*w+bx+b] {
					s += int(v)
				}
			}
			out = append(out, float64(s)/float64(b*b))
		}
	}
	return out
}

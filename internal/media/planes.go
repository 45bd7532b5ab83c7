package media

import "math"

// Planes is a picture in the exporter's output colour (yuv420p, limited
// range), its planes packed without padding: Y is W×H, U and V are
// ((W+1)/2)×((H+1)/2).
type Planes struct {
	W, H    int
	Y, U, V []byte
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
	g, w := BlockMeans(got.Y, got.W, got.H, 8), BlockMeans(want.Y, want.W, want.H, 8)
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

// BlockMeans returns the means of a w×h plane's b×b blocks (the whole
// plane as one block when it is smaller).
func BlockMeans(p []byte, w, h, b int) []float64 {
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

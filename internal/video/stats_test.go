package video

import (
	"math"
	"math/rand"
	"sort"
	"testing"
)

func TestStatsSampleIndices(t *testing.T) {
	// Counts from LeRobot's estimate_num_samples docstring, where exact:
	// int(n**0.75) with at least min(n, 100). The docstring's "~500 → 100"
	// is loose (int(500**0.75) = 105), and 10000**0.75 evaluates to
	// 999.9999999999998 in Python's float pow as in Go's, so 999.
	for _, tc := range []struct{ n, want int }{
		{1, 1}, {2, 2}, {50, 50}, {100, 100}, {464, 100}, {500, 105}, {1000, 177}, {2000, 299}, {5000, 594}, {10000, 999}, {20000, 1681},
	} {
		idx := statsSampleIndices(tc.n)
		if len(idx) != tc.want {
			t.Errorf("n=%d: %d samples, want %d", tc.n, len(idx), tc.want)
			continue
		}
		if idx[0] != 0 || idx[len(idx)-1] != tc.n-1 || !sort.IntsAreSorted(idx) {
			t.Errorf("n=%d: indices %v...", tc.n, idx[:min(5, len(idx))])
		}
		// round(i*(n-1)/(num-1)) within half a step of the exact value.
		for i, v := range idx {
			if len(idx) == 1 {
				break
			}
			exact := float64(i) * float64(tc.n-1) / float64(len(idx)-1)
			if math.Abs(float64(v)-exact) > 0.5 {
				t.Errorf("n=%d: index %d = %d, exact %v", tc.n, i, v, exact)
			}
		}
	}
	// numpy rounds half to even: linspace(0, 3, 3) = [0, 1.5, 3] → [0, 2, 3].
	if got := statsSampleIndices(4); len(got) != 4 {
		t.Errorf("n=4: %v", got)
	}
}

func TestStatsStride(t *testing.T) {
	for _, tc := range []struct{ w, h, want int }{
		{160, 120, 1}, {299, 200, 1}, {300, 200, 2}, {640, 480, 4}, {1280, 720, 8}, {480, 640, 4},
	} {
		if got := statsStride(tc.w, tc.h); got != tc.want {
			t.Errorf("%dx%d: stride %d, want %d", tc.w, tc.h, got, tc.want)
		}
	}
}

func TestImageStatsAgainstDirect(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	const w, h, frames = 64, 48, 7
	var acc imageAccumulator
	var vals [3][]float64
	for f := 0; f < frames; f++ {
		pix := make([]byte, w*h*3)
		for i := range pix {
			// A skewed distribution so the quantiles differ.
			pix[i] = byte(rng.Intn(64) + rng.Intn(64)*(i%3+1))
		}
		acc.addRGB(pix, w*3, w, h, 1)
		for i := 0; i < w*h; i++ {
			for c := 0; c < 3; c++ {
				vals[c] = append(vals[c], float64(pix[3*i+c]))
			}
		}
	}
	s, err := acc.stats()
	if err != nil {
		t.Fatal(err)
	}
	if s.Count != frames {
		t.Errorf("count %d", s.Count)
	}
	for c := 0; c < 3; c++ {
		v := vals[c]
		sort.Float64s(v)
		var sum, sq float64
		for _, x := range v {
			sum += x
			sq += x * x
		}
		n := float64(len(v))
		mean := sum / n
		std := math.Sqrt(sq/n - mean*mean)
		near := func(name string, got, want, tol float64) {
			if math.Abs(got-want) > tol {
				t.Errorf("channel %d %s = %v, want %v", c, name, got, want)
			}
		}
		near("min", s.Min[c], v[0]/255, 1e-12)
		near("max", s.Max[c], v[len(v)-1]/255, 1e-12)
		near("mean", s.Mean[c], mean/255, 1e-9)
		near("std", s.Std[c], std/255, 1e-9)
		// The histogram quantile lies within one bin of the order statistic
		// (values are integers, bins are (max-min)/5000 wide).
		bin := (v[len(v)-1] - v[0]) / 5000 / 255
		for _, q := range []struct {
			name string
			got  float64
			p    float64
		}{{"q01", s.Q01[c], 0.01}, {"q10", s.Q10[c], 0.10}, {"q50", s.Q50[c], 0.50}, {"q90", s.Q90[c], 0.90}, {"q99", s.Q99[c], 0.99}} {
			k := int(math.Ceil(q.p*n)) - 1
			near(q.name, q.got, v[k]/255, bin+1e-9)
		}
	}
}

// refYUVPixel converts one limited-range YUV pixel as the formula reads
// (coefficients ×256, rounded, clamped), independent of the tables.
func refYUVPixel(y, u, v byte, bt709 bool) [3]byte {
	cy, crv, cgu, cgv, cbu := 298, 409, 100, 208, 516
	if bt709 {
		cy, crv, cgu, cgv, cbu = 298, 459, 55, 136, 541
	}
	l := cy * (int(y) - 16)
	uu, vv := int(u)-128, int(v)-128
	clamp := func(x int) byte {
		x = (x + 128) >> 8
		return byte(min(max(x, 0), 255))
	}
	return [3]byte{clamp(l + crv*vv), clamp(l - cgu*uu - cgv*vv), clamp(l + cbu*uu)}
}

func TestAddYUV420AgainstFormula(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for _, tc := range []struct {
		w, h, pad, stride int
		bt709             bool
	}{
		{16, 8, 0, 1, false},
		{64, 36, 16, 1, true},
		{640, 360, 32, 4, false},
		{302, 170, 2, 2, true},
		{30, 22, 0, 3, false},
	} {
		yls, cls := tc.w+tc.pad, (tc.w+1)/2+tc.pad
		yp := make([]byte, yls*tc.h)
		up := make([]byte, cls*((tc.h+1)/2))
		vp := make([]byte, cls*((tc.h+1)/2))
		for _, p := range [][]byte{yp, up, vp} {
			for i := range p {
				p[i] = byte(rng.Intn(256))
			}
			// Runs of one value, as in flat picture areas.
			for i := 0; i+8 < len(p); i += 24 {
				for j := 1; j < 8; j++ {
					p[i+j] = p[i]
				}
			}
		}
		var want [3][256]int64
		for y := 0; y < tc.h; y += tc.stride {
			for x := 0; x < tc.w; x += tc.stride {
				px := refYUVPixel(yp[y*yls+x], up[(y/2)*cls+x/2], vp[(y/2)*cls+x/2], tc.bt709)
				for c := range 3 {
					want[c][px[c]]++
				}
			}
		}
		var acc imageAccumulator
		m := bt601Matrix
		if tc.bt709 {
			m = bt709Matrix
		}
		acc.addYUV420(yp, yls, up, vp, cls, tc.w, tc.h, tc.stride, m)
		acc.addYUV420(yp, yls, up, vp, cls, tc.w, tc.h, tc.stride, m)
		for c := range 3 {
			for b := range 256 {
				if acc.counts[c][b] != 2*want[c][b] {
					t.Fatalf("%dx%d stride %d bt709 %v: channel %d value %d counted %d, want %d",
						tc.w, tc.h, tc.stride, tc.bt709, c, b, acc.counts[c][b], 2*want[c][b])
				}
			}
		}
		if acc.frames != 2 {
			t.Errorf("frames %d", acc.frames)
		}
	}
}

// addRGB adds one packed RGB24 picture (stride ls), subsampled by stride.
func (a *imageAccumulator) addRGB(pix []byte, ls, w, h, stride int) {
	for y := 0; y < h; y += stride {
		row := pix[y*ls:]
		for x := 0; x < w; x += stride {
			p := row[3*x : 3*x+3]
			a.counts[0][p[0]]++
			a.counts[1][p[1]]++
			a.counts[2][p[2]]++
		}
	}
	a.frames++
}

package video

import (
	"errors"
	"math"
)

// quantileBins is the histogram size of LeRobot's RunningQuantileStats.
const quantileBins = 5000

// statsSampleIndices returns LeRobot's sampled frame indices for an episode
// of n frames (compute_stats.sample_indices with estimate_num_samples:
// min 100, max 10000, power 0.75): round(linspace(0, n-1, num)), numpy's
// round-half-to-even.
func statsSampleIndices(n int) []int {
	if n <= 0 {
		return nil
	}
	minS := 100
	if n < minS {
		minS = n
	}
	num := int(math.Pow(float64(n), 0.75))
	if num > 10000 {
		num = 10000
	}
	if num < minS {
		num = minS
	}
	out := make([]int, num)
	if num == 1 {
		return out // linspace(0, n-1, 1) = [0]
	}
	step := float64(n-1) / float64(num-1)
	for i := range out {
		out[i] = int(math.RoundToEven(float64(i) * step))
	}
	out[num-1] = n - 1
	return out
}

// statsStride is LeRobot's auto_downsample_height_width: frames whose larger
// side is at least 300 px are subsampled every int(larger/150) pixels.
func statsStride(w, h int) int {
	if max(w, h) < 300 {
		return 1
	}
	if w > h {
		return w / 150
	}
	return h / 150
}

// frameCounts are one frame's value counts per channel (a frame sampled at
// LeRobot's stride holds fewer than 2³² pixels).
type frameCounts [3][256]uint32

// frameCounts returns the counts a holds, which must be one frame's.
func (a *imageAccumulator) frameCounts() *frameCounts {
	var c frameCounts
	for ch := range a.counts {
		for v, n := range a.counts[ch] {
			c[ch][v] = uint32(n)
		}
	}
	return &c
}

// addCounts adds one frame's counts.
func (a *imageAccumulator) addCounts(c *frameCounts) {
	for ch := range c {
		for v, n := range c[ch] {
			a.counts[ch][v] += int64(n)
		}
	}
	a.frames++
}

// imageAccumulator gathers value counts per channel over sampled frames.
type imageAccumulator struct {
	counts [3][256]int64
	frames int64
}

// yuvMatrix holds the coefficients (×256) of a limited-range YUV→RGB
// conversion: R = y·Y' + rv·V', G = y·Y' − gu·U' − gv·V', B = y·Y' + bu·U'.
type yuvMatrix struct{ y, rv, gu, gv, bu int }

var (
	bt601Matrix = yuvMatrix{298, 409, 100, 208, 516}
	bt709Matrix = yuvMatrix{298, 459, 55, 136, 541}
)

// addYUV420 adds one yuv420p picture (planes y, u, v with line sizes yls and
// cls), subsampled by stride, converted to RGB by m in integer arithmetic
// (rounded, clamped to 0..255).
func (a *imageAccumulator) addYUV420(yp []byte, yls int, up, vp []byte, cls int, w, h, stride int, m yuvMatrix) {
	clamp := clampRGB
	for yy := 0; yy < h; yy += stride {
		yr := yp[yy*yls : yy*yls+w]
		ur := up[(yy/2)*cls : (yy/2)*cls+(w+1)/2]
		vr := vp[(yy/2)*cls : (yy/2)*cls+(w+1)/2]
		for xx := 0; xx < len(yr); xx += stride {
			l := m.y * (int(yr[xx]) - 16)
			u := int(ur[xx/2]) - 128
			v := int(vr[xx/2]) - 128
			a.counts[0][clamp(l+m.rv*v)]++
			a.counts[1][clamp(l-m.gu*u-m.gv*v)]++
			a.counts[2][clamp(l+m.bu*u)]++
		}
	}
	a.frames++
}

// stats computes LeRobot's statistics from the counts: exact min, max, mean
// and population std (LeRobot ≥ 0.5 computes in float; 0.4.4 squared uint8
// values and overflowed, fixed upstream in PR #3697), and quantiles from a
// 5000-bin histogram over [min-1e-10, max+1e-10] with linear interpolation
// inside the bin, as RunningQuantileStats does for a single batch.
func (a *imageAccumulator) stats() (ImageStats, error) {
	var s ImageStats
	if a.frames == 0 {
		return s, errors.New("image stats: no frames sampled")
	}
	s.Count = a.frames
	for c := 0; c < 3; c++ {
		var n, sum, sumSq int64
		lo, hi := -1, -1
		for v, k := range a.counts[c] {
			if k == 0 {
				continue
			}
			if lo < 0 {
				lo = v
			}
			hi = v
			n += k
			sum += k * int64(v)
			sumSq += k * int64(v) * int64(v)
		}
		mean := float64(sum) / float64(n)
		// Each product here and in quantiles is wrapped in float64(...): arm64
		// would fuse it into the next add, skipping its rounding, and
		// videos.json must be the same bytes on every architecture.
		variance := float64(sumSq)/float64(n) - float64(mean*mean)
		s.Min[c] = float64(lo) / 255
		s.Max[c] = float64(hi) / 255
		s.Mean[c] = mean / 255
		s.Std[c] = math.Sqrt(math.Max(0, variance)) / 255
		q := a.quantiles(c, float64(lo), float64(hi), n, []float64{0.01, 0.10, 0.50, 0.90, 0.99})
		s.Q01[c], s.Q10[c], s.Q50[c], s.Q90[c], s.Q99[c] = q[0]/255, q[1]/255, q[2]/255, q[3]/255, q[4]/255
	}
	return s, nil
}

// quantiles replays numpy: edges = linspace(lo-1e-10, hi+1e-10, bins+1),
// histogram, cumsum, searchsorted(left), interpolate.
func (a *imageAccumulator) quantiles(c int, lo, hi float64, n int64, qs []float64) []float64 {
	first, last := lo-1e-10, hi+1e-10
	step := (last - first) / quantileBins
	edge := func(i int) float64 {
		if i == quantileBins {
			return last
		}
		return first + float64(float64(i)*step)
	}
	var hist [quantileBins]int64
	for v, k := range a.counts[c] {
		if k == 0 {
			continue
		}
		x := float64(v)
		// numpy's uniform-bin index with its edge corrections.
		i := int((x - first) * (quantileBins / (last - first)))
		if i >= quantileBins {
			i = quantileBins - 1
		}
		if i > 0 && x < edge(i) {
			i--
		}
		if i < quantileBins-1 && x >= edge(i+1) {
			i++
		}
		hist[i] += k
	}
	out := make([]float64, len(qs))
	for j, q := range qs {
		target := float64(q * float64(n))
		var cum int64
		idx := quantileBins
		var before int64
		for i := 0; i < quantileBins; i++ {
			if float64(cum+hist[i]) >= target {
				idx, before = i, cum
				break
			}
			cum += hist[i]
		}
		switch {
		case idx == 0:
			out[j] = edge(0)
		case idx >= quantileBins:
			out[j] = edge(quantileBins)
		case hist[idx] == 0:
			out[j] = edge(idx)
		default:
			frac := (target - float64(before)) / float64(hist[idx])
			out[j] = edge(idx) + float64(frac*(edge(idx+1)-edge(idx)))
		}
	}
	return out
}

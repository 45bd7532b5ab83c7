package shard

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
)

// QuantileNames are LeRobot's DEFAULT_QUANTILES as stats keys, in order.
var QuantileNames = [5]string{"q01", "q10", "q50", "q90", "q99"}

// quantileLevels are the probabilities of QuantileNames.
var quantileLevels = [5]float64{0.01, 0.10, 0.50, 0.90, 0.99}

// Stats are LeRobot's statistics of one feature over one episode or over the
// whole shard. Every slice has one element per vector element (per colour
// channel for a video feature, whose JSON form is nested [[[v]]] per channel).
type Stats struct {
	Min, Max, Mean, Std []float64
	// Count is the number of frames (for videos: sampled frames).
	Count int64
	// Quantiles holds q01, q10, q50, q90, q99 (see QuantileNames).
	Quantiles [5][]float64
}

// QuantileAggregation says how per-episode quantiles are combined into the
// shard's quantiles.
type QuantileAggregation int

const (
	// QuantileWeightedMean takes the count-weighted mean of the episodes'
	// quantiles, as LeRobot's compute_stats.aggregate_feature_stats does in
	// 0.4.4 and 0.6.1 alike.
	QuantileWeightedMean QuantileAggregation = iota
	// QuantileEnvelope takes the minimum across episodes for q<=50 and the
	// maximum for q>50: a conservative bound, which no LeRobot release this
	// project runs computes (0.4.4 and 0.6.1 take the weighted mean).
	QuantileEnvelope
)

// ParseQuantileAggregation parses the name of an aggregation as merge's
// --quantiles gives it: weighted-mean (or "") or envelope.
func ParseQuantileAggregation(s string) (QuantileAggregation, error) {
	switch s {
	case "weighted-mean", "":
		return QuantileWeightedMean, nil
	case "envelope":
		return QuantileEnvelope, nil
	}
	return 0, fmt.Errorf("%q: want weighted-mean or envelope", s)
}

// ErrStatsContradictRows marks statistics handed to WriteEpisode
// (EpisodeMeta.Stats) that the episode's rows contradict.
var ErrStatsContradictRows = errors.New("statistics its rows contradict")

// agreesWith checks statistics s, handed in for a feature of width n,
// against rows, those the episode's rows give: the same count, and min,
// max, mean and std equal up to the rounding of sums taken in another
// order and precision (a writer that sums float32 values in float32); every quantile within [min, max].
func (s *Stats) agreesWith(rows Stats, n int) error {
	if err := s.validate(n); err != nil {
		return err
	}
	if s.Count != rows.Count {
		return fmt.Errorf("count is %d, the rows give %d", s.Count, rows.Count)
	}
	close := func(a, b float64) bool {
		return math.Abs(a-b) <= 1e-5*max(1, math.Abs(a), math.Abs(b))
	}
	for _, c := range []struct {
		name       string
		said, rows []float64
	}{{"min", s.Min, rows.Min}, {"max", s.Max, rows.Max}, {"mean", s.Mean, rows.Mean}, {"std", s.Std, rows.Std}} {
		for i := range c.said {
			if i < len(c.rows) && !close(c.said[i], c.rows[i]) {
				return fmt.Errorf("%s[%d] is %v, the rows give %v", c.name, i, c.said[i], c.rows[i])
			}
		}
	}
	for qi, q := range s.Quantiles {
		for i, v := range q {
			// float32 slack: writers keep min and max as float32 values.
			if v < float64(float32(s.Min[i]))-1e-6*max(1, math.Abs(s.Min[i])) || v > float64(float32(s.Max[i]))+1e-6*max(1, math.Abs(s.Max[i])) {
				return fmt.Errorf("%s[%d] is %v, outside [min %v, max %v]", QuantileNames[qi], i, v, s.Min[i], s.Max[i])
			}
		}
	}
	return nil
}

// validate checks that s is usable for a feature of width n.
func (s *Stats) validate(n int) error {
	if s.Count <= 0 {
		return fmt.Errorf("count %d must be positive", s.Count)
	}
	check := func(name string, v []float64) error {
		if len(v) != n {
			return fmt.Errorf("%s has %d values, want %d", name, len(v), n)
		}
		for i, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%s[%d] is %v", name, i, x)
			}
		}
		return nil
	}
	for _, c := range []struct {
		name string
		v    []float64
	}{{"min", s.Min}, {"max", s.Max}, {"mean", s.Mean}, {"std", s.Std}} {
		if err := check(c.name, c.v); err != nil {
			return err
		}
	}
	for i, q := range s.Quantiles {
		if err := check(QuantileNames[i], q); err != nil {
			return err
		}
	}
	return nil
}

// clone returns a deep copy of s.
func (s Stats) clone() Stats {
	c := Stats{Min: cloneF(s.Min), Max: cloneF(s.Max), Mean: cloneF(s.Mean), Std: cloneF(s.Std), Count: s.Count}
	for i := range s.Quantiles {
		c.Quantiles[i] = cloneF(s.Quantiles[i])
	}
	return c
}

func cloneF(v []float64) []float64 { return append([]float64(nil), v...) }

// aggregateStats combines the shard's running stats a with an episode's b
// the way LeRobot's aggregate_feature_stats combines [a, b]: min of mins,
// max of maxes, count-weighted mean, pooled variance
// sum((std_i^2 + (mean_i - mean)^2) * n_i) / N, counts summed, quantiles by q.
//
// Every float product in the statistics is wrapped in float64(...) before
// it is added or subtracted: the Go spec lets arm64 fuse x*y + z into one
// multiply-add (amd64 does not), which skips the product's rounding and
// changes the last digit of meta/stats.json; an explicit conversion forces
// that rounding, so every architecture writes the same bytes.
func aggregateStats(a, b Stats, q QuantileAggregation) Stats {
	n := len(a.Mean)
	out := Stats{
		Min: make([]float64, n), Max: make([]float64, n), Mean: make([]float64, n), Std: make([]float64, n),
		Count: a.Count + b.Count,
	}
	na, nb, total := float64(a.Count), float64(b.Count), float64(a.Count+b.Count)
	for i := 0; i < n; i++ {
		out.Min[i] = math.Min(a.Min[i], b.Min[i])
		out.Max[i] = math.Max(a.Max[i], b.Max[i])
		mean := (float64(a.Mean[i]*na) + float64(b.Mean[i]*nb)) / total
		da, db := a.Mean[i]-mean, b.Mean[i]-mean
		sa := float64(a.Std[i]*a.Std[i]) + float64(da*da)
		sb := float64(b.Std[i]*b.Std[i]) + float64(db*db)
		v := (float64(sa*na) + float64(sb*nb)) / total
		out.Mean[i] = mean
		out.Std[i] = math.Sqrt(v)
	}
	for j := range out.Quantiles {
		out.Quantiles[j] = make([]float64, n)
		for i := 0; i < n; i++ {
			x, y := a.Quantiles[j][i], b.Quantiles[j][i]
			switch {
			case q == QuantileEnvelope && quantileLevels[j] <= 0.5:
				out.Quantiles[j][i] = math.Min(x, y)
			case q == QuantileEnvelope:
				out.Quantiles[j][i] = math.Max(x, y)
			default:
				out.Quantiles[j][i] = (float64(x*na) + float64(y*nb)) / total
			}
		}
	}
	return out
}

// statsScratch holds the histogram and one dimension's values, reused
// between features and episodes.
type statsScratch struct {
	hist []float64 // all zero between dimensions
	used []uint64  // bit i: hist[i] is not zero
	dim  []float64
}

// columnStats computes a feature's stats over one episode (rows frames):
// each dimension's values are taken out as float64 by the dtype table
// (lerobot.Values.Dimension), so no dtype is spelled here.
func columnStats(f Feature, c *ColumnData, rows int, s *statsScratch) Stats {
	values := f.Dtype.Values()
	if !f.Dtype.Numeric() || values == nil {
		panic("shard: no stats for dtype " + string(f.Dtype))
	}
	n := f.width()
	return statsOf(func(d int, dst []float64) { values.Dimension(c.v, d, n, rows, dst) }, rows, n, s)
}

// statsOf reproduces LeRobot's get_feature_stats for one episode of a
// vector feature (RunningQuantileStats fed the whole episode as one batch):
//
//	min, max                          per element
//	mean = sum(x)/N, std = population standard deviation (two-pass, float64)
//	edges = linspace(min-1e-10, max+1e-10, 5001)   (edges[i] = i*step + lo)
//	hist  = np.histogram(x, edges)    bins [e_i, e_i+1), the last one closed
//	q(p): target = p*N; i = first bin with cumsum >= target;
//	      i == 0 -> edges[0]; empty bin -> edges[i];
//	      else edges[i] + (target - cumsum[i-1]) / hist[i] * step_i
//	N < 2: std = 0 and every quantile = mean (_compute_basic_stats).
//
// LeRobot 0.4.4 accumulates float32 features in float32 and uses
// E[x^2]-E[x]^2; computing in float64 differs from it only by float32
// rounding, and quantiles land in the same histogram bin.
//
// dim(d, x) stores dimension d's rows values, as float64, in x.
func statsOf(dim func(d int, x []float64), rows, n int, s *statsScratch) Stats {
	st := Stats{
		Min: make([]float64, n), Max: make([]float64, n), Mean: make([]float64, n), Std: make([]float64, n),
		Count: int64(rows),
	}
	for j := range st.Quantiles {
		st.Quantiles[j] = make([]float64, n)
	}
	const bins = defaultQuantileBinCount
	if len(s.hist) != bins {
		s.hist = make([]float64, bins)
		s.used = make([]uint64, (bins+63)/64)
	}
	if cap(s.dim) < rows {
		s.dim = make([]float64, rows)
	}
	v := s.dim[:rows]
	for d := 0; d < n; d++ {
		dim(d, v)
		lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
		for _, x := range v {
			if x < lo {
				lo = x
			}
			if x > hi {
				hi = x
			}
			sum += x
		}
		mean := sum / float64(rows)
		st.Min[d], st.Max[d], st.Mean[d] = lo, hi, mean
		if rows < 2 {
			for j := range st.Quantiles {
				st.Quantiles[j][d] = mean
			}
			continue
		}
		var ss float64
		for _, x := range v {
			dx := x - mean
			ss += float64(dx * dx)
		}
		st.Std[d] = math.Sqrt(ss / float64(rows))

		start, stop := lo-1e-10, hi+1e-10
		step := (stop - start) / bins
		// edge(i) = i*step + start (numpy linspace), the last edge is stop.
		edge := func(i int) float64 {
			if i == bins {
				return stop
			}
			return float64(float64(i)*step) + start
		}
		hist, used := s.hist, s.used
		inv := 1 / step
		for _, x := range v {
			i := int((x - start) * inv)
			i = max(0, min(i, bins-1))
			for i > 0 && x < edge(i) {
				i--
			}
			for i < bins-1 && x >= edge(i+1) {
				i++
			}
			hist[i]++
			used[i>>6] |= 1 << (i & 63)
		}
		histQuantiles(hist, used, edge, float64(rows), st.Quantiles[:], d)
	}
	return st
}

// histQuantiles is RunningQuantileStats._compute_single_quantile for every
// level at once (the targets ascend, so one cumulative pass serves all):
// out[j][d] = quantile quantileLevels[j] of count values.
//
// It visits only the bins that used marks: an episode of a few hundred
// frames fills a few hundred of the 5,000 bins, and clearing and walking
// all of them, for every dimension of every feature, cost more than the
// rest of the statistics. Skipping empty bins changes nothing: the
// cumulative count only grows at a filled bin, so a target is first
// reached at one (LeRobot's empty-bin case cannot arise in this walk).
// It leaves hist and used all zero for the next dimension.
func histQuantiles(hist []float64, used []uint64, edge func(int) float64, count float64, out [][]float64, d int) {
	j, cum := 0, 0.0
	for w, word := range used {
		for ; word != 0; word &= word - 1 {
			i := w<<6 + bits.TrailingZeros64(word)
			h := hist[i]
			hist[i] = 0
			before := cum
			cum += h
			for j < len(quantileLevels) && cum >= quantileLevels[j]*count {
				target := float64(quantileLevels[j] * count)
				if i == 0 {
					out[j][d] = edge(0)
				} else {
					out[j][d] = edge(i) + float64((target-before)/h*(edge(i+1)-edge(i)))
				}
				j++
			}
		}
		used[w] = 0
	}
	for ; j < len(quantileLevels); j++ {
		out[j][d] = edge(len(hist))
	}
}

// statsJSON renders s as LeRobot's stats dict: min, max, mean, std, count,
// q01..q99, all numbers as LeRobot 0.6 writes them (0.4.4 kept min and max
// as ints for integer dtypes and booleans for bool); a video feature's
// values are nested per channel.
func statsJSON(f Feature, s Stats) JSONObject {
	vec := func(v []float64) any {
		if f.Dtype == lerobot.Video {
			out := make([]any, len(v))
			for i, x := range v {
				out[i] = []any{[]float64{x}}
			}
			return out
		}
		return cloneF(v)
	}
	o := JSONObject{
		{"min", vec(s.Min)}, {"max", vec(s.Max)},
		{"mean", vec(s.Mean)}, {"std", vec(s.Std)},
		{"count", []int64{s.Count}},
	}
	for j, name := range QuantileNames {
		o = append(o, JSONField{name, vec(s.Quantiles[j])})
	}
	return o
}

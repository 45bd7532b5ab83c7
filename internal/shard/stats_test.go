package shard

import (
	"math"
	"math/rand"
	"sort"
	"strconv"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
)

// directStats computes min, max, mean and population std of element d by
// plain definitions, and the exact empirical quantile: the smallest value
// whose rank reaches p*N (what the histogram estimate approximates).
func directStats(v []float64, rows, n, d int) (lo, hi, mean, std float64, q [5]float64) {
	col := make([]float64, rows)
	for k := range col {
		col[k] = v[k*n+d]
	}
	lo, hi = col[0], col[0]
	var sum float64
	for _, x := range col {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
		sum += x
	}
	mean = sum / float64(rows)
	var ss float64
	for _, x := range col {
		ss += (x - mean) * (x - mean)
	}
	std = math.Sqrt(ss / float64(rows))
	sorted := append([]float64(nil), col...)
	sort.Float64s(sorted)
	for j, p := range quantileLevels {
		rank := int(math.Ceil(p*float64(rows))) - 1
		q[j] = sorted[max(0, rank)]
	}
	return
}

func TestStatsAgainstDirect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		rows int
		gen  func(r *rand.Rand, k, d int) float64
	}{
		{"normal", 1000, func(r *rand.Rand, k, d int) float64 { return r.NormFloat64() * float64(d+1) }},
		{"skewed", 333, func(r *rand.Rand, k, d int) float64 { return r.ExpFloat64() * 1e3 }},
		{"constant", 50, func(r *rand.Rand, k, d int) float64 { return 4.5 }},
		{"ramp", 2, func(r *rand.Rand, k, d int) float64 { return float64(k) }},
		{"ties", 400, func(r *rand.Rand, k, d int) float64 { return float64(r.Intn(5)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 3
			r := rand.New(rand.NewSource(1))
			v := make([]float64, tc.rows*n)
			for k := 0; k < tc.rows; k++ {
				for d := 0; d < n; d++ {
					v[k*n+d] = tc.gen(r, k, d)
				}
			}
			st := statsOfValues(lerobot.Float64, v, tc.rows, n)
			if st.Count != int64(tc.rows) {
				t.Errorf("count %d", st.Count)
			}
			for d := 0; d < n; d++ {
				lo, hi, mean, std, q := directStats(v, tc.rows, n, d)
				if st.Min[d] != lo || st.Max[d] != hi {
					t.Errorf("d=%d min/max %v/%v, want %v/%v", d, st.Min[d], st.Max[d], lo, hi)
				}
				if !near(st.Mean[d], mean, 1e-12) || !near(st.Std[d], std, 1e-12) {
					t.Errorf("d=%d mean/std %v/%v, want %v/%v", d, st.Mean[d], st.Std[d], mean, std)
				}
				bin := (hi - lo + 2e-10) / defaultQuantileBinCount
				for j := range q {
					if math.Abs(st.Quantiles[j][d]-q[j]) > bin*1.000001 {
						t.Errorf("d=%d %s = %v, exact %v, more than one bin (%v) apart", d, QuantileNames[j], st.Quantiles[j][d], q[j], bin)
					}
				}
			}
		})
	}
}

func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// TestStatsSingleFrame is LeRobot's _compute_basic_stats: std 0, quantiles = mean.
func TestStatsSingleFrame(t *testing.T) {
	t.Parallel()
	st := statsOfValues(lerobot.Float32, []float32{1.5, -2}, 1, 2)
	for d, want := range []float64{1.5, -2} {
		if st.Min[d] != want || st.Max[d] != want || st.Mean[d] != want || st.Std[d] != 0 {
			t.Errorf("d=%d: %+v", d, st)
		}
		for j := range st.Quantiles {
			if st.Quantiles[j][d] != want {
				t.Errorf("d=%d %s = %v", d, QuantileNames[j], st.Quantiles[j][d])
			}
		}
	}
}

// TestAggregateMatchesDirect: aggregating episode stats pairwise (as LeRobot
// does when saving each episode) gives the direct stats of all rows for
// min, max, mean, std and count; quantiles follow the chosen rule.
func TestAggregateMatchesDirect(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewSource(3))
	var all []float64
	var eps []Stats
	for e, rows := range []int{10, 250, 1, 77} {
		v := make([]float64, rows)
		for k := range v {
			v[k] = r.NormFloat64()*float64(e+1) + float64(e)
		}
		all = append(all, v...)
		eps = append(eps, statsOfValues(lerobot.Float64, v, rows, 1))
	}
	for _, mode := range []QuantileAggregation{QuantileWeightedMean, QuantileEnvelope} {
		agg := eps[0].clone()
		for _, s := range eps[1:] {
			agg = aggregateStats(agg, s, mode)
		}
		lo, hi, mean, std, _ := directStats(all, len(all), 1, 0)
		if agg.Min[0] != lo || agg.Max[0] != hi || agg.Count != int64(len(all)) {
			t.Errorf("mode %d: min/max/count %v/%v/%d", mode, agg.Min[0], agg.Max[0], agg.Count)
		}
		if !near(agg.Mean[0], mean, 1e-12) || !near(agg.Std[0], std, 1e-12) {
			t.Errorf("mode %d: mean/std %v/%v, want %v/%v", mode, agg.Mean[0], agg.Std[0], mean, std)
		}
		for j := range agg.Quantiles {
			var want float64
			switch {
			case mode == QuantileEnvelope && quantileLevels[j] <= 0.5:
				want = math.Inf(1)
				for _, s := range eps {
					want = math.Min(want, s.Quantiles[j][0])
				}
			case mode == QuantileEnvelope:
				want = math.Inf(-1)
				for _, s := range eps {
					want = math.Max(want, s.Quantiles[j][0])
				}
			default:
				for _, s := range eps {
					want += s.Quantiles[j][0] * float64(s.Count)
				}
				want /= float64(len(all))
			}
			if !near(agg.Quantiles[j][0], want, 1e-12) {
				t.Errorf("mode %d %s = %v, want %v", mode, QuantileNames[j], agg.Quantiles[j][0], want)
			}
		}
	}
}

func TestPyFloatRepr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0.0"}, {math.Copysign(0, -1), "-0.0"}, {1, "1.0"}, {-2.5, "-2.5"}, {0.1, "0.1"},
		{1e-4, "0.0001"}, {1e-5, "1e-05"}, {1.5e-7, "1.5e-07"}, {123456.789, "123456.789"},
		{1e15, "1000000000000000.0"}, {1e16, "1e+16"}, {1.2345e17, "1.2345e+17"},
		{float64(float32(0.1)), "0.10000000149011612"}, {math.MaxFloat64, "1.7976931348623157e+308"},
		{5e-324, "5e-324"}, {100, "100.0"},
	} {
		if got := pyFloatRepr(tc.f); got != tc.want {
			t.Errorf("pyFloatRepr(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

func TestPyJSON(t *testing.T) {
	t.Parallel()
	v := JSONObject{
		{"s", "a\"b\\c\n\t\x01é€😀\u007f"}, {"n", nil}, {"e", []int{}}, {"o", JSONObject{}},
		{"l", []any{1, 2.0, true}}, {"m", map[string]any{"b": 1, "a": 2}},
	}
	got, err := marshalPyJSON(v, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	// Python: json.dumps(v) (ensure_ascii=True, default separators).
	want := `{"s": "a\"b\\c\n\t\u0001\u00e9\u20ac\ud83d\ude00\u007f", "n": null, "e": [], "o": {}, "l": [1, 2.0, true], "m": {"a": 2, "b": 1}}`
	if string(got) != want {
		t.Errorf("compact:\n got %s\nwant %s", got, want)
	}
	got, err = marshalPyJSON(JSONObject{{"a", []int{1}}, {"b", "é\u007f"}, {"c", JSONObject{}}}, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	// Python: json.dumps(v, indent=4, ensure_ascii=False).
	want = "{\n    \"a\": [\n        1\n    ],\n    \"b\": \"é\u007f\",\n    \"c\": {}\n}"
	if string(got) != want {
		t.Errorf("indented:\n got %q\nwant %q", got, want)
	}
	if _, err := marshalPyJSON([]float64{math.NaN()}, 4, false); err == nil {
		t.Error("NaN accepted")
	}
	if _, err := marshalPyJSON(JSONObject{{"x", math.Inf(1)}}, 4, false); err == nil {
		t.Error("Inf accepted")
	}
}

// FuzzPyFloatRepr checks that every finite float's repr parses back to it
// and has Python's shape (a '.' or an exponent).
func FuzzPyFloatRepr(f *testing.F) {
	for _, seed := range []float64{0, 1, 0.1, 1e-5, 1e16, -3.75, 5e-324, math.MaxFloat64} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		s := pyFloatRepr(x)
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || back != x {
			t.Fatalf("repr %q of %v parses to %v, %v", s, x, back, err)
		}
		hasDot, hasExp := false, false
		for _, c := range s {
			hasDot = hasDot || c == '.'
			hasExp = hasExp || c == 'e'
		}
		if !hasDot && !hasExp {
			t.Fatalf("repr %q of %v looks like an int", s, x)
		}
	})
}

// statsOfValues is the stats of v as a column of dtype, rows rows of width n.
func statsOfValues[T any](dtype lerobot.Dtype, v []T, rows, n int) Stats {
	c := ColumnOf(v)
	return columnStats(Feature{Name: "x", Dtype: dtype, Shape: []int{n}}, &c, rows, &statsScratch{})
}

// lerobotQuantiles is RunningQuantileStats' estimate as LeRobot computes it
// (np.histogram over linspace(min-1e-10, max+1e-10, bins+1), cumsum, then
// per level the first bin whose cumulative count reaches p*N), walking every
// bin: the reference for histQuantiles, which visits only the filled ones.
func lerobotQuantiles(col []float64) [5]float64 {
	const bins = defaultQuantileBinCount
	lo, hi := col[0], col[0]
	for _, x := range col {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	// np.linspace(lo-1e-10, hi+1e-10, bins+1): i*step + start, the last
	// edge exactly stop.
	edges := make([]float64, bins+1)
	step := (hi + 1e-10 - (lo - 1e-10)) / bins
	for i := range edges {
		edges[i] = float64(i)*step + (lo - 1e-10)
	}
	edges[bins] = hi + 1e-10
	edge := func(i int) float64 { return edges[i] }
	hist := make([]float64, bins)
	for _, x := range col {
		// np.histogram: bins [e_i, e_i+1), the last one closed.
		i := sort.SearchFloat64s(edges, x)
		if i == len(edges) || edges[i] != x {
			i--
		}
		hist[min(max(i, 0), bins-1)]++
	}
	var q [5]float64
	for j, p := range quantileLevels {
		target := p * float64(len(col))
		cum, i := 0.0, 0
		for ; i < bins; i++ {
			if cum+hist[i] >= target {
				break
			}
			cum += hist[i]
		}
		switch {
		case i == bins:
			q[j] = edge(bins)
		case i == 0:
			q[j] = edge(0)
		case hist[i] == 0:
			q[j] = edge(i)
		default:
			q[j] = edge(i) + (target-cum)/hist[i]*(edge(i+1)-edge(i))
		}
	}
	return q
}

// TestQuantilesAreLeRobots compares the quantiles bit for bit with the
// all-bins reference, for several columns and dimensions through one
// scratch, so that a histogram left dirty by one dimension shows in the next.
func TestQuantilesAreLeRobots(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewSource(7))
	gens := []struct {
		name string
		gen  func(k int) float64
	}{
		{"normal", func(k int) float64 { return r.NormFloat64() }},
		{"ties", func(k int) float64 { return float64(r.Intn(3)) }},
		{"ramp", func(k int) float64 { return float64(k) * 0.25 }},
		{"outlier", func(k int) float64 {
			if k == 3 {
				return 1e6
			}
			return r.Float64()
		}},
		{"constant", func(k int) float64 { return -7 }},
	}
	var scratch statsScratch
	for _, rows := range []int{2, 3, 10, 64, 101, 999, 5000, 12345} {
		for _, g := range gens {
			const n = 4
			v := make([]float64, rows*n)
			for k := 0; k < rows; k++ {
				for d := 0; d < n; d++ {
					v[k*n+d] = g.gen(k) * float64(d+1)
				}
			}
			c := ColumnOf(v)
			st := columnStats(Feature{Name: "x", Dtype: lerobot.Float64, Shape: []int{n}}, &c, rows, &scratch)
			for d := 0; d < n; d++ {
				col := make([]float64, rows)
				for k := range col {
					col[k] = v[k*n+d]
				}
				want := lerobotQuantiles(col)
				for j := range want {
					if got := st.Quantiles[j][d]; got != want[j] {
						t.Errorf("%s rows=%d d=%d %s = %v, LeRobot's %v", g.name, rows, d, QuantileNames[j], got, want[j])
					}
				}
			}
		}
	}
	for i, h := range scratch.hist {
		if h != 0 || scratch.used[i>>6] != 0 {
			t.Fatalf("bin %d left filled: the next dimension would count it", i)
		}
	}
}

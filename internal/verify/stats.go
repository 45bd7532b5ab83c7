package verify

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
)

// statNames are the keys of every feature's stats (LeRobot's basic stats
// and DEFAULT_QUANTILES).
var statNames = []string{"min", "max", "mean", "std", "count", "q01", "q10", "q50", "q90", "q99"}

// orderedStats must satisfy min ≤ q01 ≤ q10 ≤ q50 ≤ q90 ≤ q99 ≤ max.
var orderedStats = []string{"min", "q01", "q10", "q50", "q90", "q99", "max"}

// nonFinite stands in for NaN and ±Infinity, which Python's json writes as
// bare tokens that encoding/json rejects.
const nonFinite = "\uE000nonfinite:"

// nonFiniteTokens are the bare tokens Python's json writes for non-finite
// numbers, longest first.
var nonFiniteTokens = [][]byte{[]byte("-Infinity"), []byte("Infinity"), []byte("NaN")}

// replaceNonFinite turns the bare tokens NaN, Infinity and -Infinity outside
// strings into marker strings, so the document parses and each can be
// reported where it is.
func replaceNonFinite(b []byte) []byte {
	// Most documents hold none (a merge verifies every source's): those
	// are returned as they are, unscanned.
	if !bytes.Contains(b, []byte("NaN")) && !bytes.Contains(b, []byte("Infinity")) {
		return b
	}
	var out bytes.Buffer
	out.Grow(len(b))
	inStr, esc := false, false
	for i := 0; i < len(b); i++ {
		ch := b[i]
		if inStr {
			out.WriteByte(ch)
			switch {
			case esc:
				esc = false
			case ch == '\\':
				esc = true
			case ch == '"':
				inStr = false
			}
			continue
		}
		if ch == '"' {
			inStr = true
			out.WriteByte(ch)
			continue
		}
		matched := false
		for _, tok := range nonFiniteTokens {
			if bytes.HasPrefix(b[i:], tok) {
				out.WriteString(strconv.Quote(nonFinite + string(tok)))
				i += len(tok) - 1
				matched = true
				break
			}
		}
		if !matched {
			out.WriteByte(ch)
		}
	}
	return out.Bytes()
}

// checkStats checks meta/stats.json and, in full mode, recomputes the
// statistics of the data features.
func (c *checker) checkStats() error {
	if c.info == nil || !c.hasFile(statsPath) {
		return nil
	}
	raw, err := input.ReadFile(filepath.Join(c.dir, statsPath))
	if err != nil {
		c.errorf("stats.unreadable", statsPath, loc{}, "%v", err)
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(replaceNonFinite(raw)))
	dec.UseNumber()
	var doc map[string]map[string]any
	if err := dec.Decode(&doc); err != nil {
		c.errorf("stats.unreadable", statsPath, loc{}, "want {feature: {stat: list}}: %v", err)
		return nil
	}
	for _, f := range c.info.Features {
		if f.Dtype == lerobot.String {
			continue
		}
		st, ok := doc[f.Name]
		if !ok {
			c.errorf("stats.missing", statsPath, loc{}, "feature %q has no statistics (training normalisation and merge need them)", f.Name)
			continue
		}
		vals := map[string][]float64{}
		good := true
		for _, name := range statNames {
			v, ok := st[name]
			if !ok {
				c.errorf("stats.missing", statsPath, loc{}, "%s.%s is missing", f.Name, name)
				good = false
				continue
			}
			xs, ok := c.statValues(f, name, v)
			if !ok {
				good = false
				continue
			}
			vals[name] = xs
		}
		if !good {
			continue
		}
		c.checkStatOrder(f, vals)
		count := int64(vals["count"][0])
		if f.Dtype.Visual() {
			if count <= 0 {
				c.errorf("stats.count", statsPath, loc{}, "%s.count is %d, want the number of sampled frames (> 0)", f.Name, count)
			}
			for _, name := range statNames {
				if name == "count" || name == "std" {
					continue
				}
				for ch, x := range vals[name] {
					if x < -slack(x, 0) || x > 1+slack(x, 1) {
						c.errorf("stats.range", statsPath, loc{}, "%s.%s[%d] is %v; image statistics are in 0..1", f.Name, name, ch, x)
					}
				}
			}
			continue
		}
		if count != c.info.TotalFrames {
			c.errorf("stats.count", statsPath, loc{}, "%s.count is %d, want total_frames %d", f.Name, count, c.info.TotalFrames)
		}
		if !c.opts.Quick {
			c.recomputeStats(f, vals)
		}
	}
	return nil
}

// statValues checks the shape of one stat and returns its values.
func (c *checker) statValues(f *feature, name string, v any) ([]float64, bool) {
	list, ok := v.([]any)
	isImage := f.Dtype.Visual()
	want := f.width()
	if name == "count" {
		want = 1
	} else if isImage {
		want = 3
	}
	if !ok || len(list) != want {
		shape := "[n]"
		switch {
		case name == "count":
			shape = "[count]"
		case isImage:
			shape = "(3,1,1) [[[r]],[[g]],[[b]]]"
		}
		c.errorf("stats.shape", statsPath, loc{}, "%s.%s is %s, want %d values %s", f.Name, name, truncate(jsonText(v), 80), want, shape)
		return nil, false
	}
	out := make([]float64, 0, want)
	for i, e := range list {
		if isImage && name != "count" {
			// (3,1,1): [[x]]
			l1, ok1 := e.([]any)
			if ok1 && len(l1) == 1 {
				if l2, ok2 := l1[0].([]any); ok2 && len(l2) == 1 {
					e = l2[0]
					goto scalar
				}
			}
			c.errorf("stats.shape", statsPath, loc{}, "%s.%s[%d] is %s, want [[x]] (shape (3,1,1))", f.Name, name, i, jsonText(e))
			return nil, false
		}
	scalar:
		switch x := e.(type) {
		case json.Number:
			fv, err := x.Float64()
			if err != nil {
				c.errorf("stats.shape", statsPath, loc{}, "%s.%s[%d] is %s, not a number", f.Name, name, i, x)
				return nil, false
			}
			if name == "count" {
				if _, err := strconv.ParseInt(string(x), 10, 64); err != nil {
					c.errorf("stats.count", statsPath, loc{}, "%s.count is %s, want an integer", f.Name, x)
					return nil, false
				}
			}
			out = append(out, fv)
		case string:
			if len(x) > len(nonFinite) && x[:len(nonFinite)] == nonFinite {
				c.errorf("stats.nonfinite", statsPath, loc{}, "%s.%s[%d] is %s; stats.json must not contain NaN or Infinity", f.Name, name, i, x[len(nonFinite):])
				return nil, false
			}
			c.errorf("stats.shape", statsPath, loc{}, "%s.%s[%d] is the string %q, want a number", f.Name, name, i, x)
			return nil, false
		case bool:
			// numpy bool min/max serialise as true/false.
			if x {
				out = append(out, 1)
			} else {
				out = append(out, 0)
			}
		default:
			c.errorf("stats.shape", statsPath, loc{}, "%s.%s[%d] is %s, want a number", f.Name, name, i, jsonText(e))
			return nil, false
		}
	}
	return out, true
}

// checkStatOrder checks min ≤ q01 ≤ ... ≤ q99 ≤ max, mean in [min, max] and
// std ≥ 0 element by element. The order is checked to float32 precision:
// LeRobot's writer keeps an image's min and max as float32 values beside
// float64 quantiles (measured: min 0.78431374 > q01 0.78431373 in a
// dataset LeRobot 0.6.1 wrote), and a merge with such a dataset aggregates
// both.
func (c *checker) checkStatOrder(f *feature, vals map[string][]float64) {
	n := len(vals["min"])
	for i := 0; i < n; i++ {
		for j := 1; j < len(orderedStats); j++ {
			a, b := orderedStats[j-1], orderedStats[j]
			if vals[a][i] > vals[b][i]+float32Slack(vals[a][i], vals[b][i]) {
				c.errorf("stats.order", statsPath, loc{}, "%s[%d]: %s %v > %s %v", f.Name, i, a, vals[a][i], b, vals[b][i])
			}
		}
		m := vals["mean"][i]
		if m < vals["min"][i]-slack(m, vals["min"][i]) || m > vals["max"][i]+slack(m, vals["max"][i]) {
			c.errorf("stats.order", statsPath, loc{}, "%s[%d]: mean %v outside [min %v, max %v]", f.Name, i, m, vals["min"][i], vals["max"][i])
		}
		if vals["std"][i] < 0 {
			c.errorf("stats.order", statsPath, loc{}, "%s[%d]: std %v is negative", f.Name, i, vals["std"][i])
		}
	}
}

// slack is the rounding allowance between two statistics computed in
// different orders.
// float32Slack is float32's rounding of the larger of a and b, and at
// least slack's.
func float32Slack(a, b float64) float64 {
	return math.Max(slack(a, b), 0x1p-23*math.Max(math.Abs(a), math.Abs(b)))
}

func slack(a, b float64) float64 {
	return 1e-9 * math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// recomputeStats compares min, max, mean and std with the data (count is
// checked against total_frames by the caller). min and max must be exact
// (at float32 precision for float32 features); mean and std are sums in
// another order, so they get a small tolerance. Quantiles come from a
// histogram in LeRobot and are only checked for order.
func (c *checker) recomputeStats(f *feature, vals map[string][]float64) {
	if c.data == nil {
		return
	}
	data, ok := c.data.Values[f.Name]
	if !ok {
		return
	}
	w := f.width()
	rows := len(data) / w
	if rows == 0 || int64(rows) != c.data.Rows {
		return
	}
	for d := 0; d < w; d++ {
		lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
		for r := 0; r < rows; r++ {
			x := data[r*w+d]
			lo = math.Min(lo, x)
			hi = math.Max(hi, x)
			sum += x
		}
		mean := sum / float64(rows)
		ss := 0.0
		for r := 0; r < rows; r++ {
			dx := data[r*w+d] - mean
			// float64(...) stops arm64 fusing the multiply-add, so the
			// check recomputes exactly what export wrote on any machine.
			ss += float64(dx * dx)
		}
		std := math.Sqrt(ss / float64(rows))
		// LeRobot computes statistics from the values before they are
		// stored (timestamp = frame_index / fps in float64, sensor values
		// before the cast to float32), so a float32 feature's min and max
		// are equal at float32 precision and its mean and std within the
		// rounding of float32 values.
		exact := func(got, want float64) bool {
			if f.Dtype == lerobot.Float32 {
				return float32(got) == float32(want)
			}
			return got == want
		}
		scale := math.Max(math.Abs(lo), math.Abs(hi))
		tol := 1e-9 * math.Max(1e-12, math.Max(math.Abs(mean), scale))
		if f.Dtype == lerobot.Float32 || f.Dtype == "float16" {
			tol = 1e-6 * math.Max(1e-12, scale)
		}
		for _, s := range []struct {
			name      string
			got, want float64
			ok        bool
		}{
			{"min", vals["min"][d], lo, exact(vals["min"][d], lo)},
			{"max", vals["max"][d], hi, exact(vals["max"][d], hi)},
			{"mean", vals["mean"][d], mean, math.Abs(vals["mean"][d]-mean) <= tol},
			// Per-episode stds pooled in another order differ in the last digits.
			{"std", vals["std"][d], std, math.Abs(vals["std"][d]-std) <= math.Max(tol, 1e-6*std)},
		} {
			if !s.ok {
				c.errorf("stats.mismatch", statsPath, loc{}, "%s.%s[%d] is %v, but the data give %v", f.Name, s.name, d, s.got, s.want)
			}
		}
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

package shard

import (
	"strings"
	"testing"
)

// merge's --quantiles names; anything else is refused, naming the value.
func TestParseQuantileAggregation(t *testing.T) {
	for _, c := range []struct {
		in   string
		want QuantileAggregation
		err  string
	}{
		{"", QuantileWeightedMean, ""},
		{"weighted-mean", QuantileWeightedMean, ""},
		{"envelope", QuantileEnvelope, ""},
		{"mean", 0, `"mean": want weighted-mean or envelope`},
	} {
		got, err := ParseQuantileAggregation(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

package shard

import (
	"fmt"
	"math"
	"testing"
)

// archValues is fixed data whose statistics depend on every product being
// rounded before it is added: values with long binary fractions (thirds,
// sevenths), built by division only, since a division is never fused.
func archValues(rows, seed int) []float64 {
	v := make([]float64, rows)
	for i := range v {
		v[i] = float64((i*7919+seed*104729)%1013)/3 - float64((i*31+seed)%97)/7
	}
	return v
}

func archStats(rows, seed int) Stats {
	v := archValues(rows, seed)
	var s statsScratch
	return statsOf(func(_ int, x []float64) { copy(x, v) }, rows, 1, &s)
}

// statsBits flattens s into the bits of every float it holds, in the order
// min, max, mean, std, q01..q99.
func statsBits(s Stats) []uint64 {
	var out []uint64
	for _, f := range [][]float64{s.Min, s.Max, s.Mean, s.Std, s.Quantiles[0], s.Quantiles[1], s.Quantiles[2], s.Quantiles[3], s.Quantiles[4]} {
		for _, x := range f {
			out = append(out, math.Float64bits(x))
		}
	}
	return out
}

// TestStatsSameBitsOnEveryArch pins the exact bits of per-episode and
// aggregated statistics to those amd64 computes. On arm64 (run it with
// GOARCH=arm64 go test -exec qemu-aarch64-static) the compiler may fuse
// x*y + z into one multiply-add, skipping a rounding, unless the product
// is wrapped in an explicit float64 conversion; a fused site changes the
// last digits here, and meta/stats.json would differ between machines.
func TestStatsSameBitsOnEveryArch(t *testing.T) {
	tests := []struct {
		name  string
		stats func() Stats
		want  []uint64 // computed on amd64, which never fuses
	}{
		{"episode", func() Stats { return archStats(1000, 1) }, []uint64{0xc0290c30c30c30c3, 0x4074e6db6db6db6e, 0x406438b9af72015e, 0x405868e22e48686c, 0xc0146567bef04406, 0x403af5995dae196f, 0x40643d9028e1c994, 0x40728d1a59d6c9b8, 0x4074700f869a3af8}},
		{"weighted mean of two episodes", func() Stats {
			return aggregateStats(archStats(1000, 1), archStats(333, 2), QuantileWeightedMean)
		}, []uint64{0xc0290c30c30c30c3, 0x4074e6db6db6db6e, 0x40642fd8ee9418b1, 0x4058639e50a643e6, 0xc013f2eab9d12c02, 0x403a2ee9b79dfd70, 0x40643231ec3a7abd, 0x407287af2ecfc4c0, 0x40746e80355a40e6}},
		{"envelope of three episodes", func() Stats {
			a := aggregateStats(archStats(1000, 1), archStats(333, 2), QuantileEnvelope)
			return aggregateStats(a, archStats(77, 3), QuantileEnvelope)
		}, []uint64{0xc0290c30c30c30c3, 0x4074e6db6db6db6e, 0x406429c1b7575fac, 0x4058616f9cf4854c, 0xc0146567bef04406, 0x4037da42070b360e, 0x4063565dc765ad26, 0x40728d1a59d6c9b8, 0x4074700f869a3af8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := statsBits(tt.stats())
			if len(got) != len(tt.want) {
				t.Fatalf("got %d values, want %d: %s", len(got), len(tt.want), fmt.Sprintf("%#x", got))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("value %d: got %#x (%v), want %#x (%v)", i, got[i], math.Float64frombits(got[i]), tt.want[i], math.Float64frombits(tt.want[i]))
				}
			}
		})
	}
}

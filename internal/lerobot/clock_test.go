package lerobot

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// refLength is floor((end - start) * fps / 1e9) in arbitrary precision.
func refLength(start, end int64, fps int) *big.Int {
	d := new(big.Int).Sub(big.NewInt(end), big.NewInt(start))
	if d.Sign() <= 0 {
		return new(big.Int)
	}
	d.Mul(d, big.NewInt(int64(fps)))
	return d.Quo(d, big.NewInt(nsPerSecond)) // d >= 0: truncation is floor
}

// refFrameTime is start + round(k * 1e9 / fps), half up, in arbitrary
// precision: floor(k*1e9/fps + 1/2).
func refFrameTime(start int64, k, fps int) *big.Int {
	r := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(int64(k)), big.NewInt(nsPerSecond)), big.NewInt(int64(fps)))
	r.Add(r, big.NewRat(1, 2))
	q := new(big.Int).Quo(r.Num(), r.Denom()) // r >= 0: truncation is floor
	return q.Add(q, big.NewInt(start))
}

func TestLengthTable(t *testing.T) {
	t.Parallel()
	const s = int64(nsPerSecond)
	tests := []struct {
		name       string
		start, end int64
		fps        int
		want       int
	}{
		{"tiny-session episode", 8 * s, 9 * s, 10, 10},
		{"one second at 30", 0, s, 30, 30},
		{"just under a frame", 0, s/30 + 0, 30, 0}, // 33,333,333 ns < 1e9/30
		{"just over a frame", 0, s/30 + 1, 30, 1},  // 33,333,334 ns
		{"zero width", 5 * s, 5 * s, 30, 0},
		{"negative width", 6 * s, 5 * s, 30, 0},
		{"10 h at 30", 0, 36000 * s, 30, 1_080_000},
		{"10 h at 29", 1, 36000*s + 1, 29, 1_044_000},
		{"10 h at 7", 0, 36000 * s, 7, 252_000},
		{"whole int64 range at 1 fps", math.MinInt64, math.MaxInt64, 1, 18_446_744_073},
		{"max fps", 0, 1000, MaxFPS, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Length(tt.start, tt.end, tt.fps)
			if got != tt.want {
				t.Errorf("Length(%d, %d, %d) = %d, want %d", tt.start, tt.end, tt.fps, got, tt.want)
			}
			if ref := refLength(tt.start, tt.end, tt.fps); ref.Cmp(big.NewInt(int64(got))) != 0 {
				t.Errorf("Length(%d, %d, %d) = %d, reference %v", tt.start, tt.end, tt.fps, got, ref)
			}
		})
	}
}

func TestFrameTimeTable(t *testing.T) {
	t.Parallel()
	const s = int64(nsPerSecond)
	tests := []struct {
		name  string
		start int64
		k     int
		fps   int
		want  int64
	}{
		{"tiny-session frame 0 is exactly 8 s", 8 * s, 0, 10, 8 * s},
		{"tiny-session frame 9", 8 * s, 9, 10, 8*s + 900_000_000},
		{"fps 30 frame 1 rounds down", 0, 1, 30, 33_333_333}, // 33,333,333.33
		{"fps 30 frame 2 rounds up", 0, 2, 30, 66_666_667},   // 66,666,666.67
		{"fps 30 frame 30 is exact", 0, 30, 30, s},           // no accumulated error
		{"fps 7 frame 1", 0, 1, 7, 142_857_143},              // 142,857,142.86
		{"fps 7 frame 3", 0, 3, 7, 428_571_429},              // 428,571,428.57
		{"fps 29 frame 1", 0, 1, 29, 34_482_759},             // 34,482,758.62
		{"fps 29 frame 5", 0, 5, 29, 172_413_793},            // 172,413,793.10
		{"half-ns tie rounds up", 0, 1, 1024, 976_563},       // 976,562.5
		{"half-ns tie k=3 rounds up", 0, 3, 1024, 2_929_688}, // 2,929,687.5
		{"10 h at 30, last frame", 0, 1_079_999, 30, 35_999_966_666_667},
		{"10 h at 29 lands on whole seconds", 5 * s, 29 * 36000, 29, 5*s + 36000*s},
		{"negative start", -s, 1, 10, -s + 100_000_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FrameTime(tt.start, tt.k, tt.fps)
			if got != tt.want {
				t.Errorf("FrameTime(%d, %d, %d) = %d, want %d", tt.start, tt.k, tt.fps, got, tt.want)
			}
			if ref := refFrameTime(tt.start, tt.k, tt.fps); ref.Cmp(big.NewInt(got)) != 0 {
				t.Errorf("FrameTime(%d, %d, %d) = %d, reference %v", tt.start, tt.k, tt.fps, got, ref)
			}
		})
	}
}

// TestFrameClockAgainstReference compares both functions with the
// arbitrary-precision definitions over seeded random windows, rates and
// frame indices, and checks that every frame k < Length lies in [s, e) and
// that frame times strictly increase.
func TestFrameClockAgainstReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	fpsChoices := []int{1, 7, 10, 24, 25, 29, 30, 60, 100, 120, 1000, 1024, 44100, MaxFPS}
	for i := 0; i < 20000; i++ {
		fps := fpsChoices[rng.IntN(len(fpsChoices))]
		if i%4 == 0 {
			fps = 1 + rng.IntN(MaxFPS)
		}
		start := rng.Int64N(1<<62) - 1<<61
		width := rng.Int64N(36000 * nsPerSecond) // up to 10 h
		if i%3 == 0 {
			width = rng.Int64N(3 * nsPerSecond)
		}
		end := start + width
		n := Length(start, end, fps)
		if ref := refLength(start, end, fps); ref.Cmp(big.NewInt(int64(n))) != 0 {
			t.Fatalf("Length(%d, %d, %d) = %d, reference %v", start, end, fps, n, ref)
		}
		if n == 0 {
			continue
		}
		for _, k := range []int{0, 1, n / 2, n - 2, n - 1, rng.IntN(n)} {
			if k < 0 {
				continue
			}
			got := FrameTime(start, k, fps)
			if ref := refFrameTime(start, k, fps); ref.Cmp(big.NewInt(got)) != 0 {
				t.Fatalf("FrameTime(%d, %d, %d) = %d, reference %v", start, k, fps, got, ref)
			}
			if got < start || got >= end {
				t.Fatalf("frame %d of [%d, %d) at %d fps lies at %d, outside the window", k, start, end, fps, got)
			}
			if k > 0 && fps <= MaxFPS && FrameTime(start, k-1, fps) >= got {
				t.Fatalf("frame %d at %d fps does not come after frame %d", k, fps, k-1)
			}
		}
	}
}

// TestFrameTimeLongWindowNoDrift walks every frame of a 10 h episode at
// fps 30 and checks that whole seconds land exactly and that consecutive
// frames are 33 or 34 ms apart, as exact rounding requires.
func TestFrameTimeLongWindowNoDrift(t *testing.T) {
	t.Parallel()
	const s = int64(nsPerSecond)
	start, end, fps := 7*s+123, 7*s+123+36000*s, 30
	n := Length(start, end, fps)
	if n != 36000*30 {
		t.Fatalf("Length = %d, want %d", n, 36000*30)
	}
	prev := FrameTime(start, 0, fps)
	if prev != start {
		t.Fatalf("T_0 = %d, want %d", prev, start)
	}
	for k := 1; k < n; k++ {
		tk := FrameTime(start, k, fps)
		if d := tk - prev; d != 33_333_333 && d != 33_333_334 {
			t.Fatalf("T_%d - T_%d = %d ns", k, k-1, d)
		}
		if k%fps == 0 && tk != start+int64(k/fps)*s {
			t.Fatalf("T_%d = %d, want exactly %d", k, tk, start+int64(k/fps)*s)
		}
		prev = tk
	}
	if prev >= end {
		t.Fatalf("last frame at %d, not before end %d", prev, end)
	}
}

func TestClockPanics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		call func()
	}{
		{"Length fps 0", func() { Length(0, 1, 0) }},
		{"Length fps over max", func() { Length(0, 1, MaxFPS+1) }},
		{"FrameTime fps 0", func() { FrameTime(0, 1, 0) }},
		{"FrameTime negative k", func() { FrameTime(0, -1, 30) }},
		{"FrameTime overflow", func() { FrameTime(math.MaxInt64-10, 1, 1) }},
		{"FrameTime huge k", func() { FrameTime(0, math.MaxInt, 1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			tt.call()
		})
	}
}

// BenchmarkFrameTime measures FrameTime and reports its speed relative to
// the arbitrary-precision definition (refFrameTime) timed in the same run.
func BenchmarkFrameTime(b *testing.B) {
	const refRuns = 20000
	refStart := time.Now()
	var sink int64
	for i := range refRuns {
		sink += refFrameTime(5, i, 29).Int64()
	}
	refPerOp := float64(time.Since(refStart).Nanoseconds()) / refRuns
	n := 0
	for b.Loop() {
		sink += FrameTime(5, n%1_000_000, 29)
		n++
	}
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(n)
	b.ReportMetric(refPerOp/perOp, "x-faster-than-big.Rat")
	if sink == 42 {
		b.Log(sink)
	}
}

func TestFrameTimes(t *testing.T) {
	t.Parallel()
	var got []int64
	for k := range 4 {
		got = append(got, FrameTime(1000, k, 30))
	}
	want := []int64{1000, 1000 + 33333333, 1000 + 66666667, 1000 + 100000000}
	if !slices.Equal(got, want) {
		t.Errorf("FrameTime(1000, 0..3, 30) = %v, want %v", got, want)
	}
	for _, n := range []int{1, 4, 90} {
		if got, want := LastFrameTime(5, n, 29), FrameTime(5, n-1, 29); got != want {
			t.Errorf("LastFrameTime(5, %d, 29) = %d, want %d", n, got, want)
		}
	}
}

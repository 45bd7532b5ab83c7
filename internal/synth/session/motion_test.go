package session

import (
	"context"
	"math"
	"testing"

	"github.com/ceres-robotics/ceres-export/journal"
)

// An arm session moves like an arm: every joint moves, within one turn
// (radians), smoothly (no sample-to-sample jump near its range), and its
// position tracks its commanded target; the gripper reports contact when
// its joint closes. These are the properties kinematic checkers test
// (lerobot-lint, run on make demo's dataset in the conformance run).
func TestArmMotion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := Options{Seed: 4, Cameras: 1, Width: 64, Height: 64, Motion: MotionArm}
	if _, _, err := Write(dir, opts); err != nil {
		t.Fatal(err)
	}
	j, err := journal.Open(context.Background(), dir, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Info.RobotType != "synthetic-arm" {
		t.Errorf("robot type %q", j.Info.RobotType)
	}
	for _, s := range j.Info.Streams {
		if s.ID == gripperStream && len(s.Fields) != 2 {
			t.Errorf("gripper fields %+v: an arm session has no debug fields", s.Fields)
		}
	}
	n := len(ArmJoints)
	var pos, tgt [][]float64 // per joint
	pos, tgt = make([][]float64, n), make([][]float64, n)
	c, err := j.Samples(armStream)
	if err != nil {
		t.Fatal(err)
	}
	for c.Next() {
		b := c.Batch()
		for i := 0; i < b.Len(); i++ {
			for k := 0; k < n; k++ {
				pos[k] = append(pos[k], b.Float64At(0, n*i+k))
				tgt[k] = append(tgt[k], b.Float64At(1, n*i+k))
			}
		}
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if len(pos[0]) < 1000 {
		t.Fatalf("%d arm samples", len(pos[0]))
	}
	for k, name := range ArmJoints {
		lo, hi, jump := math.Inf(1), math.Inf(-1), 0.0
		for i, v := range pos[k] {
			lo, hi = min(lo, v), max(hi, v)
			if i > 0 {
				jump = max(jump, math.Abs(v-pos[k][i-1]))
			}
		}
		if std := stddev(pos[k]); std < 0.05 {
			t.Errorf("%s: std %.3f rad: a dead joint", name, std)
		}
		if lo < -math.Pi || hi > math.Pi {
			t.Errorf("%s: range [%.2f, %.2f] rad, want within one turn", name, lo, hi)
		}
		if jump > 0.05*(hi-lo) {
			t.Errorf("%s: a jump of %.3f rad in 20 ms against a range of %.3f", name, jump, hi-lo)
		}
		if r := correlation(pos[k], tgt[k]); r < 0.95 {
			t.Errorf("%s: position tracks target with correlation %.3f, want >= 0.95", name, r)
		}
	}
	// Contact follows the gripper joint.
	g, err := j.Samples(gripperStream)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var closed, samples int
	for g.Next() {
		b := g.Batch()
		for i := 0; i < b.Len(); i++ {
			samples++
			if b.Float64At(0, i) == 1 {
				closed++
				if b.Float64At(1, i) <= 0 {
					t.Fatalf("gripper closed with force %v", b.Float64At(1, i))
				}
			}
		}
	}
	if closed == 0 || closed == samples {
		t.Errorf("gripper closed in %d of %d samples, want some but not all", closed, samples)
	}
}

func stddev(v []float64) float64 {
	var m, s float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(v)))
}

func correlation(a, b []float64) float64 {
	var ma, mb float64
	for i := range a {
		ma += a[i]
		mb += b[i]
	}
	ma, mb = ma/float64(len(a)), mb/float64(len(b))
	var sab, saa, sbb float64
	for i := range a {
		sab += (a[i] - ma) * (b[i] - mb)
		saa += (a[i] - ma) * (a[i] - ma)
		sbb += (b[i] - mb) * (b[i] - mb)
	}
	return sab / math.Sqrt(saa*sbb)
}

package session

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ceres-robotics/ceres-export/journal"
)

// Motion says what the sensor values of a synthetic session are.
type Motion string

const (
	// MotionIndex (the default) codes every value with the index of its
	// sample (imu accel[0], gripper counter, force less a quarter), so that
	// tests can prove which sample reached each row. The values move like
	// nothing real: kinematic checkers (lerobot-lint) rightly call them
	// dead joints and encoder wraparounds.
	MotionIndex Motion = "index"
	// MotionArm is a six-joint arm whose joint positions follow commanded
	// targets with a servo's lag, its last joint a gripper, and a phone's
	// IMU riding on it: smooth, bounded, in radians, every joint moving.
	// It is what a new user's first dataset (make demo) is made of.
	MotionArm Motion = "arm"
)

// ParseMotion parses synth --motion.
func ParseMotion(s string) (Motion, error) {
	switch Motion(s) {
	case "", MotionIndex:
		return MotionIndex, nil
	case MotionArm:
		return MotionArm, nil
	}
	return "", fmt.Errorf("synth: motion %q: want index or arm", s)
}

// armStream is the arm's stream in MotionArm sessions.
const armStream = "arm"

// ArmJoints names the arm's joints, the last one its gripper (SO-101's
// names, which lerobot-lint's profiles recognise).
var ArmJoints = []string{"shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"}

// servoLag is the arm's servo time constant: a position follows its
// target as a first-order lag.
const servoLag = 0.08 // seconds

// armStreams are a MotionArm session's sensor streams.
func armStreams() []journal.Stream {
	return []journal.Stream{
		{ID: imuStream, Kind: journal.KindSensor, RateHz: 100, Fields: []journal.Field{
			{Name: "accel", Dtype: journal.DtypeFloat32, Shape: []int{3}, Names: []string{"x", "y", "z"}, Unit: "m/s^2"},
			{Name: "gyro", Dtype: journal.DtypeFloat32, Shape: []int{3}, Names: []string{"x", "y", "z"}, Unit: "rad/s"},
		}},
		{ID: armStream, Kind: journal.KindSensor, RateHz: 50, Fields: []journal.Field{
			{Name: "position", Dtype: journal.DtypeFloat32, Shape: []int{len(ArmJoints)}, Names: ArmJoints, Unit: "rad"},
			{Name: "target", Dtype: journal.DtypeFloat32, Shape: []int{len(ArmJoints)}, Names: ArmJoints, Unit: "rad"},
		}},
		{ID: gripperStream, Kind: journal.KindSensor, RateHz: 10, Fields: []journal.Field{
			{Name: "closed", Dtype: journal.DtypeBool},
			{Name: "force", Dtype: journal.DtypeFloat64, Unit: "N"},
		}},
	}
}

// wave is one sinusoid of a joint's target.
type wave struct{ amp, omega, phase float64 }

// armMotion is the arm's commanded trajectory: per joint a centre and two
// sinusoids, drawn from the seed.
type armMotion struct {
	centre [6]float64
	waves  [6][2]wave
}

func newArmMotion(seed uint64) *armMotion {
	m := &armMotion{}
	next := func() float64 { // a cheap deterministic stream in [0, 1)
		seed = seed*6364136223846793005 + 1442695040888963407
		return float64(seed>>11) / (1 << 53)
	}
	centres := [6]float64{0, -0.6, 0.9, 0.3, 0, 0.6}
	for j := range m.centre {
		m.centre[j] = centres[j]
		for k := range m.waves[j] {
			m.waves[j][k] = wave{
				amp:   (0.15 + float64(0.25*next())) / float64(k+1),
				omega: 2 * math.Pi * (0.08 + float64(0.25*next())) * float64(k+1),
				phase: 2 * math.Pi * next(),
			}
		}
	}
	return m
}

// target is joint j's commanded position at t seconds; position is where a
// servo of time constant servoLag following it stands: each sinusoid
// scaled by 1/√(1+(ωτ)²) and delayed by atan(ωτ), the first-order lag's
// steady state.
func (m *armMotion) target(j int, t float64) float64 {
	v := m.centre[j]
	for _, w := range m.waves[j] {
		// float64(...) stops arm64 fusing multiply-adds, so a seed makes
		// the same session on every architecture.
		v += float64(w.amp * math.Sin(float64(w.omega*t)+w.phase))
	}
	return v
}

func (m *armMotion) position(j int, t float64) float64 {
	v := m.centre[j]
	for _, w := range m.waves[j] {
		wt := w.omega * servoLag
		v += float64(w.amp / math.Sqrt(1+float64(wt*wt)) * math.Sin(float64(w.omega*t)+w.phase-math.Atan(wt)))
	}
	return v
}

// gripClosed is the gripper joint's position from which the gripper holds
// what it grasped.
const gripClosed = 0.85

// armGens are the sample generators of a MotionArm session's streams.
func armGens(session journal.Session, seed uint64) []*sensorGen {
	m := newArmMotion(seed)
	var gens []*sensorGen
	for i, s := range session.Streams {
		switch s.ID {
		case imuStream:
			gens = append(gens, &sensorGen{index: uint16(i), id: s.ID, period: 10 * millisecond, seed: seed,
				fill: func(b *sampleBatch, _ int, t int64) {
					ts := float64(t) / float64(second)
					// The phone rides on the wrist: gravity plus the wrist's
					// swing, and the wrist joints' rates.
					flex, roll := m.position(3, ts), m.position(4, ts)
					b.fields[0] = putF32(b.fields[0], float32(9.81*math.Sin(flex)))
					b.fields[0] = putF32(b.fields[0], float32(9.81*math.Sin(roll)*math.Cos(flex)))
					b.fields[0] = putF32(b.fields[0], float32(9.81*math.Cos(roll)*math.Cos(flex)))
					const dt = 0.01
					b.fields[1] = putF32(b.fields[1], float32((m.position(4, ts+dt)-roll)/dt))
					b.fields[1] = putF32(b.fields[1], float32((m.position(3, ts+dt)-flex)/dt))
					b.fields[1] = putF32(b.fields[1], float32((m.position(0, ts+dt)-m.position(0, ts))/dt))
				}})
		case armStream:
			gens = append(gens, &sensorGen{index: uint16(i), id: s.ID, period: 20 * millisecond, offset: 3 * millisecond, seed: seed ^ 0xa4a,
				fill: func(b *sampleBatch, _ int, t int64) {
					ts := float64(t) / float64(second)
					for j := range ArmJoints {
						b.fields[0] = putF32(b.fields[0], float32(m.position(j, ts)))
					}
					for j := range ArmJoints {
						b.fields[1] = putF32(b.fields[1], float32(m.target(j, ts)))
					}
				}})
		case gripperStream:
			gens = append(gens, &sensorGen{index: uint16(i), id: s.ID, period: 100 * millisecond, offset: 5 * millisecond, seed: seed ^ 0xabcdef,
				fill: func(b *sampleBatch, _ int, t int64) {
					g := m.position(len(ArmJoints)-1, float64(t)/float64(second))
					closed, force := byte(0), 0.0
					if g > gripClosed {
						closed, force = 1, 20*(g-gripClosed)
					}
					b.fields[0] = append(b.fields[0], closed)
					b.fields[1] = binary.LittleEndian.AppendUint64(b.fields[1], math.Float64bits(force))
				}})
		}
	}
	return gens
}

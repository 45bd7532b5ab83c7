// Package session is a synthetic CERES session without its camera files'
// pictures: the journal driven by a task specification (sensor streams at
// nominal rates with jitter, retries, annotations, optional faults) and the
// plan of every camera file it names (its frames' times and codes). It
// compiles without FFmpeg; package synth encodes the planned camera files
// (video) and is what callers use. Sensor values carry the index of the
// sample they came from, so tests can prove which sample ended up in each
// exported row.
//
// A session is deterministic for a given seed and options.
package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"

	"github.com/ceres-robotics/ceres-export/internal/textout"
	"github.com/ceres-robotics/ceres-export/journal"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// Codec names the codec and container of a synthetic camera file.
type Codec string

// The camera codecs: VP8 and VP9 in WebM as browsers record them, H.264 in
// MP4 as phones do.
const (
	CodecVP8  Codec = "vp8"
	CodecVP9  Codec = "vp9"
	CodecH264 Codec = "h264"
	CodecAV1  Codec = "av1"
)

// Container is the file extension and container of the codec's files.
func (c Codec) Container() string {
	if c == CodecH264 {
		return "mp4"
	}
	return "webm"
}

// ExampleSpec is the complete version 1 example of the task-specification
// contract, the default specification of a synthetic session.
const ExampleSpec = `{
  "schema": "ceres-task-specification",
  "version": 1,
  "runTitle": "Sample transfer",
  "runDescription": "Move each sample into the rack",
  "cycleCount": 2,
  "tasks": [
    {
      "id": "pick",
      "type": "timed",
      "label": "Pick sample",
      "instructions": "Pick one sample",
      "durationS": 12.5,
      "repeatCount": 3,
      "resetTimeS": 5
    },
    {
      "id": "inspect",
      "type": "open",
      "label": "Inspect sample",
      "instructions": "Inspect until complete",
      "repeatCount": 1,
      "resetTimeS": 5
    },
    {
      "id": "pause",
      "type": "pause",
      "label": "Inter-cycle pause",
      "instructions": "Wait",
      "durationS": 2
    }
  ]
}
`

// Options describes a synthetic session. The zero value of each field is its
// documented default.
type Options struct {
	// Seed drives every random choice.
	Seed uint64
	// Spec is the task specification JSON; nil means ExampleSpec.
	Spec []byte
	// Cycles, when > 0, overrides the specification's cycleCount (to make
	// long sessions for benchmarks).
	Cycles int
	// TimeScale multiplies every duration of the specification (tasks,
	// resets, pauses, open-task lengths); 0 means 1. Tests use small scales
	// to make short sessions.
	TimeScale float64
	// Cameras is the number of video streams ("front", "wrist", "cam2", ...);
	// 0 means none.
	Cameras int
	// CameraCodec is the camera files' codec and container; "" means VP8 in
	// WebM.
	CameraCodec Codec
	// IndexedCameras writes the camera files as a seekable muxer finishes
	// them, index at the end (WebM with Cues, MP4 with moov after the
	// media data), instead of as MediaRecorder streams them.
	IndexedCameras bool
	// CameraScene is what the cameras show: "" or "bands" (the code band
	// with each frame's number, over moving gradients), "natural" (a
	// camera-like view without code band, so that only content tells
	// frames apart) or "still" (natural, not moving).
	CameraScene string
	// CameraFullRange records the cameras full range, tagged pc and
	// BT.709, as Chromium records VP9 and AV1.
	CameraFullRange bool
	// CameraStartError states each camera file's start this many ns later
	// in the journal than its first frame was taken (a recorder whose
	// camera clock is off); 0 for a true session. The frames are the same.
	CameraStartError int64
	// Width and Height of the camera pictures; 0 means 320×240.
	Width, Height int
	// CameraFPS is the cameras' nominal rate; 0 means 30.
	CameraFPS int
	// CameraFiles is the number of files each camera records, as after
	// recorder restarts; 0 means 1.
	CameraFiles int
	// NoRetries turns retries off. Otherwise the first attempts of the run
	// are retried (once while recording, once after it ended) and later ones
	// at random.
	NoRetries bool
	// Faults to inject.
	Faults Faults
	// SegmentSize is the journal's segment rolling size; 0 means the writer's
	// default.
	SegmentSize int64
	// Preallocate writes the journal as a recorder that reserves each
	// segment's space does: every segment is SegmentSize bytes of zeros from
	// its start and records are written into it in place, so its size never
	// changes while it records.
	Preallocate bool
	// Motion is what the sensor values are: MotionIndex ("", the default)
	// codes them with their sample's index, MotionArm moves an arm.
	Motion Motion
	// AllDtypes adds a sensor stream "probe" with a field of every journal
	// dtype the others lack (int64, and vectors of int32, uint8, bool and
	// float64), so that conformance checks cover every dtype an export holds.
	AllDtypes bool
}

// Faults are the damages a crash or a bad disk leaves.
type Faults struct {
	// Crash stops the recorder in the middle of an attempt: the attempt has
	// no attempt_end, the journal has no END and ends in a torn record.
	Crash bool
	// CutCamera cuts the last file of the first camera short, as a crash
	// during recording leaves it.
	CutCamera bool
	// Corrupt flips a byte inside a record in the middle of the first
	// segment (the session then needs salvage to be read).
	Corrupt bool
	// Restart crashes the recorder half way through the session, tearing
	// the record it was appending, and restarts it at once: the restarted
	// recorder starts a new segment with the session's SESSION record and
	// records the rest of the session (docs/journal-format.md, "A recorder
	// restart").
	Restart bool
}

func (o Options) timeScale() float64 {
	if o.TimeScale > 0 {
		return o.TimeScale
	}
	return 1
}

func (o Options) cameraFPS() int {
	if o.CameraFPS > 0 {
		return o.CameraFPS
	}
	return 30
}

// Result tells what Write produced.
type Result struct {
	Dir       string           `json:"dir"`
	SessionID string           `json:"session_id"`
	SpecHash  string           `json:"spec_hash"`
	Events    int              `json:"events"`
	Samples   map[string]int   `json:"samples"`   // per sensor stream
	Frames    map[string]int   `json:"frames"`    // per camera, frames across its files
	Media     []string         `json:"media"`     // camera files, relative to Dir
	Faults    []string         `json:"faults"`    // what was damaged, in words
	End       int64            `json:"end"`       // time of the last event (ns)
	Truncated map[string]int64 `json:"truncated"` // camera file → bytes cut off
}

// WriteText writes the Result as synth's text: the session, its
// specification's hash, what it holds and the faults injected.
func (r *Result) WriteText(w io.Writer) error {
	t := textout.New(w)
	t.Printf("session %s written to %s\n", r.SessionID, r.Dir)
	t.Printf("  task specification %s\n", r.SpecHash)
	t.Printf("  %d events, samples %v, camera frames %v, %.1f s\n", r.Events, r.Samples, r.Frames, float64(r.End)/1e9)
	for _, f := range r.Faults {
		t.Printf("  fault: %s\n", f)
	}
	return t.Err()
}

// Write writes a session's journal into dir, which must not exist or be
// empty, and returns the camera files the journal names, still to be
// encoded (package synth does; the journal's faults that touch it are
// applied, the camera files' are theirs).
func Write(dir string, opts Options) (*Result, []CameraFile, error) {
	return WritePaced(dir, opts, nil)
}

// WritePaced is Write with pace called before the records up to each
// moment of the session are appended (t, in ns of the session's clock,
// rises by about half a second a call, the batches a recorder flushes),
// and once more with the END's time: a live writer sleeps there until the wall
// clock reaches t, and grows the camera files. The bytes written are
// Write's whatever pace does; an error from pace stops the writing.
func WritePaced(dir string, opts Options, pace func(t int64) error) (*Result, []CameraFile, error) {
	specJSON := opts.Spec
	if specJSON == nil {
		specJSON = []byte(ExampleSpec)
	}
	if opts.Cycles > 0 {
		var err error
		if specJSON, err = withCycleCount(specJSON, opts.Cycles); err != nil {
			return nil, nil, err
		}
	}
	spec, err := taskspec.Parse(specJSON)
	if err != nil {
		return nil, nil, fmt.Errorf("synth: task specification: %w", err)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, nil, fmt.Errorf("synth: %s is not empty", dir)
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x63657265732d6a6e))

	tl := buildTimeline(spec, opts, rng)
	if opts.Faults.Crash {
		t, err := tl.crashTime(rng)
		if err != nil {
			return nil, nil, err
		}
		tl.crashAt(t)
	}
	session := sessionRecord(opts)
	res := &Result{
		Dir:       dir,
		SessionID: session.SessionID,
		SpecHash:  spec.Hash(),
		Samples:   map[string]int{},
		Frames:    map[string]int{},
		Truncated: map[string]int64{},
		End:       tl.end,
	}
	cams, err := planCameras(session, opts, tl.end, rng)
	if err != nil {
		return nil, nil, err
	}
	if err := writeJournal(dir, session, spec, specJSON, tl, cams, opts, res, pace); err != nil {
		return nil, nil, err
	}
	if opts.Faults.Corrupt {
		if err := corruptFirstSegment(dir, res); err != nil {
			return nil, nil, err
		}
	}
	return res, cams, nil
}

// withCycleCount rewrites the specification's cycleCount.
func withCycleCount(specJSON []byte, cycles int) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(specJSON, &doc); err != nil {
		return nil, fmt.Errorf("synth: task specification: %w", err)
	}
	doc["cycleCount"] = cycles
	return json.MarshalIndent(doc, "", "  ")
}

// Stream layout of a synthetic session. The sensor values reveal their
// sample: imu accel[0] is the sample's index in its stream, and so are
// gripper counter, and force minus one quarter.
const (
	imuStream     = "imu"
	gripperStream = "gripper"
	probeStream   = "probe"
	audioStream   = "mic"
)

var cameraNames = []string{"front", "wrist"}

func cameraName(i int) string {
	if i < len(cameraNames) {
		return cameraNames[i]
	}
	return fmt.Sprintf("cam%d", i)
}

func sessionRecord(opts Options) journal.Session {
	w, h := opts.Width, opts.Height
	if w == 0 || h == 0 {
		w, h = 320, 240
	}
	robot := "phone-demonstrator"
	streams := []journal.Stream{
		{ID: imuStream, Kind: journal.KindSensor, RateHz: 100, Fields: []journal.Field{
			{Name: "accel", Dtype: journal.DtypeFloat32, Shape: []int{3}, Names: []string{"x", "y", "z"}, Unit: "m/s^2"},
			{Name: "gyro", Dtype: journal.DtypeFloat32, Shape: []int{3}, Names: []string{"x", "y", "z"}, Unit: "rad/s"},
		}},
		{ID: gripperStream, Kind: journal.KindSensor, RateHz: 10, Fields: []journal.Field{
			{Name: "closed", Dtype: journal.DtypeBool},
			{Name: "counter", Dtype: journal.DtypeInt32, Shape: []int{}},
			{Name: "force", Dtype: journal.DtypeFloat64, Unit: "N"},
			{Name: "mode", Dtype: journal.DtypeUint8},
		}},
	}
	if opts.Motion == MotionArm {
		streams, robot = armStreams(), "synthetic-arm"
	}
	if opts.AllDtypes {
		streams = append(streams, journal.Stream{ID: probeStream, Kind: journal.KindSensor, RateHz: 30, Fields: []journal.Field{
			{Name: "count", Dtype: journal.DtypeInt64},
			{Name: "pair", Dtype: journal.DtypeInt32, Shape: []int{2}, Names: []string{"a", "b"}},
			{Name: "bytes", Dtype: journal.DtypeUint8, Shape: []int{2}},
			{Name: "flags", Dtype: journal.DtypeBool, Shape: []int{2}},
			{Name: "level", Dtype: journal.DtypeFloat64, Shape: []int{2}},
		}})
	}
	for i := 0; i < opts.Cameras; i++ {
		streams = append(streams, journal.Stream{ID: cameraName(i), Kind: journal.KindVideo,
			FPS: float64(opts.cameraFPS()), Width: w, Height: h})
	}
	streams = append(streams, journal.Stream{ID: audioStream, Kind: journal.KindAudio})
	return journal.Session{
		Schema:    "ceres-journal",
		Version:   1,
		SessionID: fmt.Sprintf("synth-%d", opts.Seed),
		StartedAt: "2026-11-29T10:00:00Z",
		RobotType: robot,
		Recorder:  &journal.Recorder{Name: "ceres-export synth", Version: "1"},
		Streams:   streams,
	}
}

// CameraFile is one planned camera file: the journal time of its first
// frame and the presentation times of its frames.
type CameraFile struct {
	Stream string
	Path   string // relative to the session directory
	StartT int64
	PTS    []int64 // ns from StartT, whole milliseconds
	// FirstCode is the code band's frame number of its first frame.
	FirstCode uint32
	// CutBytes says a crash cuts the file short (Faults.CutCamera).
	CutBytes bool
}

// NominalFPS is the cameras' nominal rate.
func (o Options) NominalFPS() int { return o.cameraFPS() }

// planCameras lays out every camera's frames from its start to the end of the
// recording: intervals of 1/fps with browser-like jitter (23-45 ms at 30 fps),
// now and then a dropped frame, and, with several files, a restart gap
// between files.
func planCameras(session journal.Session, opts Options, end int64, rng *rand.Rand) ([]CameraFile, error) {
	var files []CameraFile
	nfiles := max(opts.CameraFiles, 1)
	period := second / int64(opts.cameraFPS())
	ext := opts.CameraCodec.Container()
	for c := 0; c < opts.Cameras; c++ {
		name := cameraName(c)
		t := 150*millisecond + int64(c)*37*millisecond
		var times []int64
		for t < end {
			times = append(times, t)
			step := period + int64(rng.IntN(int(period/millisecond)*2/3+1))*millisecond - period/3
			step -= step % millisecond
			if rng.IntN(50) == 0 {
				step += period * int64(1+rng.IntN(2)) // dropped frames
			}
			t += max(step, 10*millisecond)
		}
		if len(times) < 2*nfiles {
			return nil, errors.New("synth: session too short for its camera files")
		}
		code := uint32(0)
		per := len(times) / nfiles
		for f := 0; f < nfiles; f++ {
			lo, hi := f*per, (f+1)*per
			if f == nfiles-1 {
				hi = len(times)
			}
			if f > 0 {
				lo += 5 // the restart loses a few frames
			}
			chunk := times[lo:hi]
			cf := CameraFile{
				Stream:    name,
				Path:      fmt.Sprintf("media/%s/%06d.%s", name, f+1, ext),
				StartT:    chunk[0],
				FirstCode: code,
				CutBytes:  opts.Faults.CutCamera && c == 0 && f == nfiles-1,
			}
			for _, ts := range chunk {
				cf.PTS = append(cf.PTS, ts-chunk[0])
			}
			code += uint32(len(chunk))
			files = append(files, cf)
		}
	}
	return files, nil
}

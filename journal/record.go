package journal

import "encoding/json"

// Session is the SESSION record: the first record of segment 1.
type Session struct {
	Schema    string    `json:"schema"`
	Version   int       `json:"version"`
	SessionID string    `json:"sessionId"`
	StartedAt string    `json:"startedAt"`
	RobotType string    `json:"robotType,omitempty"`
	Recorder  *Recorder `json:"recorder,omitempty"`
	Streams   []Stream  `json:"streams"`
}

// Recorder names the program that wrote the journal.
type Recorder struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Stream kinds.
const (
	KindSensor = "sensor"
	KindVideo  = "video"
	KindAudio  = "audio"
)

// Stream is one declared stream of a session. Sensor streams have Fields and
// RateHz; video streams have FPS, Width and Height (nominal; the media files
// are the truth).
type Stream struct {
	ID     string  `json:"id"`
	Kind   string  `json:"kind"`
	RateHz float64 `json:"rateHz,omitempty"`
	Fields []Field `json:"fields,omitempty"`
	FPS    float64 `json:"fps,omitempty"`
	Width  int     `json:"width,omitempty"`
	Height int     `json:"height,omitempty"`
}

// Field is one field of a sensor stream. An empty Shape is a scalar.
type Field struct {
	Name  string   `json:"name"`
	Dtype Dtype    `json:"dtype"`
	Shape []int    `json:"shape,omitempty"`
	Names []string `json:"names,omitempty"`
	Unit  string   `json:"unit,omitempty"`
}

// SpecRecord is the SPEC record: the task specification as the recorder
// applied it, and the recorder's hash of its canonical JSON.
type SpecRecord struct {
	T             int64           `json:"t"`
	Hash          string          `json:"hash"`
	Specification json.RawMessage `json:"specification"`
}

// Event kinds the format defines. Readers count and skip any other kind.
const (
	EventRunStart     = "run_start"
	EventCycleStart   = "cycle_start"
	EventCycleEnd     = "cycle_end"
	EventAttemptStart = "attempt_start"
	EventAttemptEnd   = "attempt_end"
	EventRetry        = "retry"
	EventAnnotate     = "annotate"
	EventResetStart   = "reset_start"
	EventResetEnd     = "reset_end"
	EventPauseStart   = "pause_start"
	EventPauseEnd     = "pause_end"
	EventPrompt       = "prompt"
	EventRunEnd       = "run_end"
)

// Event is one EVENT record. Members that a kind does not carry are zero.
// Counters (Cycle, Repetition, Attempt) are 1-based.
type Event struct {
	T          int64  `json:"t"`
	Kind       string `json:"kind"`
	Task       string `json:"task,omitempty"`
	Cycle      int    `json:"cycle,omitempty"`
	Repetition int    `json:"repetition,omitempty"`
	Attempt    int    `json:"attempt,omitempty"`
	Cause      string `json:"cause,omitempty"`   // attempt_end: duration, next or stop
	Outcome    string `json:"outcome,omitempty"` // annotate: pass, fail or clear
	Text       string `json:"text,omitempty"`    // prompt
}

// Media is a MEDIA record: a camera file that belongs to the session.
// Presentation time p (seconds) in the file is journal time StartT + p*1e9.
type Media struct {
	T         int64  `json:"t"`
	Stream    string `json:"stream"`
	Path      string `json:"path"`
	Container string `json:"container,omitempty"`
	StartT    int64  `json:"startT"`
}

// End is the END record: the recorder closed the session cleanly.
type End struct {
	T      int64  `json:"t"`
	Reason string `json:"reason"` // completed or stopped
}

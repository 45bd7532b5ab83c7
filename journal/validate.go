package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// isIdent reports whether s matches [a-z][a-z0-9_]*.
func isIdent(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// decodeObject decodes a JSON object payload of record name into v. Members
// v does not know are ignored, as the format requires.
func decodeObject(name string, payload []byte, v any) error {
	if !utf8.Valid(payload) {
		return invalidf("%s: payload is not UTF-8", name)
	}
	if t := bytes.TrimLeft(payload, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return invalidf("%s: payload is not a JSON object", name)
	}
	if err := json.Unmarshal(payload, v); err != nil {
		return wrapKind(ErrInvalid, err, "%s", name)
	}
	return nil
}

// missing returns an ErrInvalid error naming the first absent member, or nil.
func missing(name string, members ...any) error {
	for i := 0; i+1 < len(members); i += 2 {
		if isNil(members[i+1]) {
			return invalidf("%s: missing %q", name, members[i])
		}
	}
	return nil
}

func isNil(p any) bool {
	switch v := p.(type) {
	case *int64:
		return v == nil
	case *int:
		return v == nil
	case *string:
		return v == nil
	case *[]Stream:
		return v == nil
	case json.RawMessage:
		return v == nil || string(v) == "null"
	}
	panic(fmt.Sprintf("journal: isNil of %T", p))
}

// sessionWire is SESSION with pointers for the members that must be present.
type sessionWire struct {
	Schema    *string   `json:"schema"`
	Version   *int      `json:"version"`
	SessionID *string   `json:"sessionId"`
	StartedAt *string   `json:"startedAt"`
	RobotType string    `json:"robotType"`
	Recorder  *Recorder `json:"recorder"`
	Streams   *[]Stream `json:"streams"`
}

// parseSession decodes and validates a SESSION payload and returns the
// record and the layout of each stream (nil for non-sensor streams).
func parseSession(payload []byte) (*Session, []*streamLayout, error) {
	var w sessionWire
	if err := decodeObject("SESSION", payload, &w); err != nil {
		return nil, nil, err
	}
	if err := missing("SESSION", "schema", w.Schema, "version", w.Version, "sessionId", w.SessionID,
		"startedAt", w.StartedAt, "streams", w.Streams); err != nil {
		return nil, nil, err
	}
	s := &Session{Schema: *w.Schema, Version: *w.Version, SessionID: *w.SessionID, StartedAt: *w.StartedAt,
		RobotType: w.RobotType, Recorder: w.Recorder, Streams: *w.Streams}
	if s.Schema != SchemaName {
		return nil, nil, invalidf("SESSION: schema is %q, not %q", s.Schema, SchemaName)
	}
	if s.Version != formatVersion {
		return nil, nil, invalidf("SESSION: version %d is not %d", s.Version, formatVersion)
	}
	if s.SessionID == "" {
		return nil, nil, invalidf("SESSION: sessionId is empty")
	}
	if err := checkStartedAt(s.StartedAt); err != nil {
		return nil, nil, err
	}
	if err := checkStreams(s.Streams); err != nil {
		return nil, nil, err
	}
	layouts, err := sensorLayouts(s.Streams)
	if err != nil {
		return nil, nil, err
	}
	return s, layouts, nil
}

func checkStartedAt(v string) error {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return invalidf("SESSION: startedAt %q is not an RFC 3339 time", v)
	}
	if _, off := t.Zone(); off != 0 {
		return invalidf("SESSION: startedAt %q is not UTC", v)
	}
	return nil
}

// checkStreams validates the stream declarations (layouts are checked by
// sensorLayouts).
func checkStreams(streams []Stream) error {
	ids := make(map[string]bool, len(streams))
	for i, s := range streams {
		if !isIdent(s.ID) {
			return invalidf("SESSION: streams[%d]: id %q does not match [a-z][a-z0-9_]*", i, s.ID)
		}
		if ids[s.ID] {
			return invalidf("SESSION: streams[%d]: id %q is not unique", i, s.ID)
		}
		ids[s.ID] = true
		switch s.Kind {
		case KindSensor, KindVideo, KindAudio:
		default:
			return invalidf("SESSION: streams[%d] %q: kind %q is not sensor, video or audio", i, s.ID, s.Kind)
		}
		if s.Kind != KindSensor {
			continue
		}
		names := make(map[string]bool, len(s.Fields))
		for j, f := range s.Fields {
			if !isIdent(f.Name) {
				return invalidf("SESSION: streams[%d] %q: fields[%d]: name %q does not match [a-z][a-z0-9_]*", i, s.ID, j, f.Name)
			}
			if names[f.Name] {
				return invalidf("SESSION: streams[%d] %q: fields[%d]: name %q is not unique", i, s.ID, j, f.Name)
			}
			names[f.Name] = true
		}
	}
	return nil
}

// specWire is SPEC with presence for its required members.
type specWire struct {
	T             *int64          `json:"t"`
	Hash          *string         `json:"hash"`
	Specification json.RawMessage `json:"specification"`
}

// parseSpecRecord decodes a SPEC payload; the specification itself is
// checked by the caller with taskspec.
func parseSpecRecord(payload []byte) (*SpecRecord, error) {
	var w specWire
	if err := decodeObject("SPEC", payload, &w); err != nil {
		return nil, err
	}
	if err := missing("SPEC", "t", w.T, "hash", w.Hash, "specification", w.Specification); err != nil {
		return nil, err
	}
	if !isLowerHex64(*w.Hash) {
		return nil, invalidf("SPEC: hash %q is not 64 lowercase hex digits", *w.Hash)
	}
	return &SpecRecord{T: *w.T, Hash: *w.Hash, Specification: w.Specification}, nil
}

func isLowerHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// eventWire is EVENT with presence for every member.
type eventWire struct {
	T          *int64  `json:"t"`
	Kind       *string `json:"kind"`
	Task       *string `json:"task"`
	Cycle      *int    `json:"cycle"`
	Repetition *int    `json:"repetition"`
	Attempt    *int    `json:"attempt"`
	Cause      *string `json:"cause"`
	Outcome    *string `json:"outcome"`
	Text       *string `json:"text"`
}

// counter returns the counter member named m.
func (w *eventWire) counter(m string) *int {
	switch m {
	case "cycle":
		return w.Cycle
	case "repetition":
		return w.Repetition
	}
	return w.Attempt
}

// eventMembers lists, per known kind, the members it carries besides t and
// kind: "task" must be a non-empty string, counters positive integers.
var eventMembers = map[string][]string{
	EventRunStart:     nil,
	EventCycleStart:   {"cycle"},
	EventCycleEnd:     {"cycle"},
	EventAttemptStart: {"task", "cycle", "repetition", "attempt"},
	EventAttemptEnd:   {"task", "cycle", "repetition", "attempt", "cause"},
	EventRetry:        {"task", "cycle", "repetition", "attempt"},
	EventAnnotate:     {"task", "cycle", "repetition", "attempt", "outcome"},
	EventResetStart:   {"task", "cycle", "repetition", "attempt"},
	EventResetEnd:     {"task", "cycle", "repetition", "attempt"},
	EventPauseStart:   {"task", "cycle"},
	EventPauseEnd:     {"task", "cycle"},
	EventPrompt:       {"text"},
	EventRunEnd:       nil,
}

// knownEventKind reports whether kind is an event kind format version 1
// defines.
func knownEventKind(kind string) bool {
	_, ok := eventMembers[kind]
	return ok
}

// parseEvent decodes and validates an EVENT payload. For a kind the format
// does not define it returns known = false and checks nothing else, since a
// later format may give such a kind any members.
func parseEvent(payload []byte) (ev Event, known bool, err error) {
	var head struct {
		T    *json.RawMessage `json:"t"`
		Kind *string          `json:"kind"`
	}
	if err := decodeObject("EVENT", payload, &head); err != nil {
		return Event{}, false, err
	}
	if head.Kind == nil {
		return Event{}, false, invalidf("EVENT: missing %q", "kind")
	}
	if !knownEventKind(*head.Kind) {
		return Event{Kind: *head.Kind}, false, nil
	}
	var w eventWire
	if err := decodeObject("EVENT "+*head.Kind, payload, &w); err != nil {
		return Event{}, true, err
	}
	name := "EVENT " + *w.Kind
	if w.T == nil {
		return Event{}, true, invalidf("%s: missing %q", name, "t")
	}
	ev = Event{T: *w.T, Kind: *w.Kind}
	for _, m := range eventMembers[ev.Kind] {
		switch m {
		case "task":
			if w.Task == nil || *w.Task == "" {
				return Event{}, true, invalidf("%s: missing %q", name, m)
			}
		case "cycle", "repetition", "attempt":
			p := w.counter(m)
			if p == nil {
				return Event{}, true, invalidf("%s: missing %q", name, m)
			}
			if *p < 1 {
				return Event{}, true, invalidf("%s: %s %d is not positive", name, m, *p)
			}
		case "cause":
			if w.Cause == nil {
				return Event{}, true, invalidf("%s: missing %q", name, m)
			}
			if c := *w.Cause; c != "duration" && c != "next" && c != "stop" {
				return Event{}, true, invalidf("%s: cause %q is not duration, next or stop", name, c)
			}
		case "outcome":
			if w.Outcome == nil {
				return Event{}, true, invalidf("%s: missing %q", name, m)
			}
			if o := *w.Outcome; o != "pass" && o != "fail" && o != "clear" {
				return Event{}, true, invalidf("%s: outcome %q is not pass, fail or clear", name, o)
			}
		case "text":
			if w.Text == nil {
				return Event{}, true, invalidf("%s: missing %q", name, m)
			}
		}
	}
	// Keep only the members the kind carries, so that Event's zero values
	// mean "not carried".
	for _, m := range eventMembers[ev.Kind] {
		switch m {
		case "task":
			ev.Task = *w.Task
		case "cycle":
			ev.Cycle = *w.Cycle
		case "repetition":
			ev.Repetition = *w.Repetition
		case "attempt":
			ev.Attempt = *w.Attempt
		case "cause":
			ev.Cause = *w.Cause
		case "outcome":
			ev.Outcome = *w.Outcome
		case "text":
			ev.Text = *w.Text
		}
	}
	if ev.Kind == EventPrompt && w.Task != nil {
		ev.Task = *w.Task // optional for prompt
	}
	return ev, true, nil
}

// mediaWire is MEDIA with presence for its required members.
type mediaWire struct {
	T         *int64  `json:"t"`
	Stream    *string `json:"stream"`
	Path      *string `json:"path"`
	Container string  `json:"container"`
	StartT    *int64  `json:"startT"`
}

// parseMedia decodes and validates a MEDIA payload: the stream must be
// declared in SESSION and the path must stay inside the session directory
// lexically (links are checked against the file system by Open).
func parseMedia(payload []byte, streams []Stream) (*Media, error) {
	var w mediaWire
	if err := decodeObject("MEDIA", payload, &w); err != nil {
		return nil, err
	}
	if err := missing("MEDIA", "t", w.T, "stream", w.Stream, "path", w.Path, "startT", w.StartT); err != nil {
		return nil, err
	}
	m := &Media{T: *w.T, Stream: *w.Stream, Path: *w.Path, Container: w.Container, StartT: *w.StartT}
	declared := false
	for _, s := range streams {
		declared = declared || s.ID == m.Stream
	}
	if !declared {
		return nil, invalidf("MEDIA: stream %q is not declared in SESSION", m.Stream)
	}
	if err := checkMediaPath(m.Path); err != nil {
		return nil, err
	}
	return m, nil
}

// checkMediaPath rejects a MEDIA path that is empty, absolute, uses a
// backslash or NUL, or has a ".." element.
func checkMediaPath(p string) error {
	switch {
	case p == "":
		return invalidf("MEDIA: path is empty")
	case strings.ContainsAny(p, "\\\x00"):
		return invalidf("MEDIA: path %q must use / and no NUL", p)
	case strings.HasPrefix(p, "/") || filepath.IsAbs(p):
		return invalidf("MEDIA: path %q is absolute", p)
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return invalidf("MEDIA: path %q leaves the session directory", p)
		}
	}
	return nil
}

// endWire is END with presence for its members.
type endWire struct {
	T      *int64  `json:"t"`
	Reason *string `json:"reason"`
}

func parseEnd(payload []byte) (*End, error) {
	var w endWire
	if err := decodeObject("END", payload, &w); err != nil {
		return nil, err
	}
	if err := missing("END", "t", w.T, "reason", w.Reason); err != nil {
		return nil, err
	}
	if r := *w.Reason; r != "completed" && r != "stopped" {
		return nil, invalidf("END: reason %q is not completed or stopped", r)
	}
	return &End{T: *w.T, Reason: *w.Reason}, nil
}

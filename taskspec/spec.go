package taskspec

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SchemaName is the required value of a specification's schema field.
const SchemaName = "ceres-task-specification"

// SchemaVersion is the contract version this package implements.
const SchemaVersion = 1

// Task types.
const (
	TypeTimed = "timed" // records until durationS elapses; repeated, with a reset
	TypeOpen  = "open"  // records until the authoritative Next action; repeated, with a reset
	TypePause = "pause" // records nothing; advances when durationS elapses
)

// MinAppliedResetS is the shortest reset CERES uses when it applies a
// specification to a capture configuration; a smaller resetTimeS is valid
// but draws a warning because the captured reset will differ.
const MinAppliedResetS = 5

// Spec is a validated, normalised task specification, version 1: every
// string trimmed, a blank runDescription dropped (""), tasks in document
// order. A Spec returned by Parse satisfies every rule of the contract.
type Spec struct {
	Schema         string // always SchemaName
	Version        int    // always SchemaVersion
	RunTitle       string // non-empty
	RunDescription string // "" when absent or blank
	CycleCount     int64  // 1 … MaxSafeInteger
	Tasks          []Task // at least one, ids unique
}

// Task is one entry of a specification's task array. Which of the optional
// numbers are set depends on Type: timed has all three, open has
// RepeatCount and ResetTimeS, pause has DurationS only.
type Task struct {
	ID           string
	Type         string // TypeTimed, TypeOpen or TypePause
	Label        string
	Instructions string
	DurationS    *float64 // seconds, 0 … MaxSafeInteger, finite; never −0
	ResetTimeS   *float64 // seconds, 0 … MaxSafeInteger, finite; never −0
	RepeatCount  *int64   // 1 … MaxSafeInteger
}

// Task returns the task with the given id.
func (s *Spec) Task(id string) (Task, bool) {
	for _, t := range s.Tasks {
		if t.ID == id {
			return t, true
		}
	}
	return Task{}, false
}

// Violation is one rule of the contract that a document breaks, or one
// warning about a valid document. Path is a JavaScript-style path into the
// document (`tasks[1].durationS`, `["odd key"]`); "" means the document as a
// whole.
type Violation struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// String renders v as "path: message", or the message alone for the whole
// document.
func (v Violation) String() string {
	if v.Path == "" {
		return v.Message
	}
	return v.Path + ": " + v.Message
}

// InvalidError is the error Parse returns for a document that is not a
// valid specification. It lists every violation found, in a deterministic
// order: document order of the members, with the checks of one field
// together.
type InvalidError struct {
	Violations []Violation
}

// Error joins all violations.
func (e *InvalidError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.String()
	}
	return "invalid task specification: " + strings.Join(parts, "; ")
}

// Parse validates one JSON document against the task specification v1
// contract and returns its normalised form. On failure the error is an
// *InvalidError listing every violation; a JSON syntax error is a single
// violation naming its byte offset.
func Parse(data []byte) (*Spec, error) {
	// A leading UTF-8 byte order mark is dropped: CERES reads imported files
	// as UTF-8 text, and UTF-8 decoding strips it before JSON.parse sees it.
	body := trimBOM(data)
	root, err := parseJSON(body)
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) {
			se.offset += len(data) - len(body) // offsets count from the file's first byte
			return nil, &InvalidError{Violations: []Violation{{Message: se.Error()}}}
		}
		return nil, err
	}
	c := &checker{}
	spec := c.document(root)
	if len(c.violations) > 0 {
		return nil, &InvalidError{Violations: c.violations}
	}
	return spec, nil
}

func trimBOM(data []byte) []byte {
	if len(data) >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf {
		return data[3:]
	}
	return data
}

// Warnings returns the findings that do not invalidate s but mean that the
// capture will not behave exactly as written.
func (s *Spec) Warnings() []Violation {
	var ws []Violation
	for i, t := range s.Tasks {
		if t.ResetTimeS != nil && *t.ResetTimeS < MinAppliedResetS {
			ws = append(ws, Violation{
				Path: fmt.Sprintf("tasks[%d].resetTimeS", i),
				Message: fmt.Sprintf("%s is below the %d-second minimum reset CERES enforces when it applies a specification; the captured reset will be %d s",
					formatNumber(*t.ResetTimeS), MinAppliedResetS, MinAppliedResetS),
			})
		}
	}
	return ws
}

// checker validates a parsed document and collects violations.
type checker struct {
	violations []Violation
}

func (c *checker) add(path, format string, args ...any) {
	c.violations = append(c.violations, Violation{Path: path, Message: fmt.Sprintf(format, args...)})
}

// Field names of the contract, in the order their checks are reported.
var (
	topFields  = []string{"schema", "version", "runTitle", "runDescription", "cycleCount", "tasks"}
	taskFields = []string{"id", "type", "label", "instructions", "durationS", "repeatCount", "resetTimeS"}
)

// members indexes an object's members by key, reporting unknown and
// duplicate keys. For a duplicate the last value wins, as in JSON.parse, so
// that the remaining checks see what CERES would see.
func (c *checker) members(prefix string, obj *jsonValue, known []string, what string) map[string]*jsonValue {
	byKey := make(map[string]*jsonValue, len(obj.members))
	for _, m := range obj.members {
		path := joinPath(prefix, m.key)
		if _, dup := byKey[m.key]; dup {
			c.add(path, "duplicate key (JSON.parse would silently keep only the last value)")
		} else if !contains(known, m.key) {
			c.add(path, "unknown %s field", what)
		}
		byKey[m.key] = m.value
	}
	return byKey
}

func (c *checker) document(root *jsonValue) *Spec {
	if root.kind != kindObject {
		c.add("", "the document must be a JSON object, got %s", root.kind)
		return nil
	}
	f := c.members("", root, topFields, "top-level")
	s := &Spec{}

	if v, ok := c.requiredString("schema", f["schema"], fmt.Sprintf("the string %q", SchemaName)); ok {
		if v != SchemaName {
			c.add("schema", "must be %q, got %s", SchemaName, quoteShort(v))
		}
		s.Schema = v
	}
	if v := f["version"]; v == nil {
		c.add("version", "required: must be the integer %d", SchemaVersion)
	} else if v.kind != kindNumber {
		c.add("version", "must be the integer %d, got %s", SchemaVersion, v.kind)
	} else if d := parseDecimal(v.text); d.neg || d.digits != "1" || d.exp != 1 { // exactly 1, however written (1.0, 1e0)
		c.add("version", "must be the integer %d, got %s", SchemaVersion, v.text)
	} else {
		s.Version = SchemaVersion
	}
	if v, ok := c.requiredString("runTitle", f["runTitle"], "a non-empty string"); ok {
		s.RunTitle = c.nonEmpty("runTitle", v)
	}
	if v := f["runDescription"]; v != nil {
		if v.kind != kindString {
			c.add("runDescription", "must be a string, got %s", v.kind)
		} else {
			s.RunDescription = trimJS(v.text)
		}
	}
	if v := f["cycleCount"]; v == nil {
		c.add("cycleCount", "required: must be a positive safe integer")
	} else if n, ok := c.positiveSafeInteger("cycleCount", v); ok {
		s.CycleCount = n
	}
	switch v := f["tasks"]; {
	case v == nil:
		c.add("tasks", "required: must be a non-empty array of tasks")
	case v.kind != kindArray:
		c.add("tasks", "must be a non-empty array of tasks, got %s", v.kind)
	case len(v.elems) == 0:
		c.add("tasks", "must contain at least one task")
	default:
		firstID := map[string]int{}
		for i, elem := range v.elems {
			t, ok := c.task(i, elem)
			if !ok {
				continue
			}
			if t.ID != "" {
				if j, dup := firstID[t.ID]; dup {
					c.add(fmt.Sprintf("tasks[%d].id", i), "duplicate id %s (after trimming), first used by tasks[%d]", quoteShort(t.ID), j)
				} else {
					firstID[t.ID] = i
				}
			}
			s.Tasks = append(s.Tasks, t)
		}
	}
	return s
}

// task checks one element of the task array. It returns ok when the
// element is an object, whatever else is wrong with it, so that ids are
// checked for uniqueness across all tasks.
func (c *checker) task(i int, v *jsonValue) (Task, bool) {
	prefix := fmt.Sprintf("tasks[%d]", i)
	if v.kind != kindObject {
		c.add(prefix, "must be a task object, got %s", v.kind)
		return Task{}, false
	}
	f := c.members(prefix, v, taskFields, "task")
	var t Task
	path := func(field string) string { return prefix + "." + field }

	if s, ok := c.requiredString(path("id"), f["id"], "a non-empty string"); ok {
		t.ID = c.nonEmpty(path("id"), s)
	}
	if s, ok := c.requiredString(path("type"), f["type"], `"timed", "open" or "pause"`); ok {
		switch s {
		case TypeTimed, TypeOpen, TypePause:
			t.Type = s
		default:
			c.add(path("type"), `must be "timed", "open" or "pause", got %s`, quoteShort(s))
		}
	}
	if s, ok := c.requiredString(path("label"), f["label"], "a non-empty display name"); ok {
		t.Label = c.nonEmpty(path("label"), s)
	}
	if s, ok := c.requiredString(path("instructions"), f["instructions"], "a non-empty demonstrator cue"); ok {
		t.Instructions = c.nonEmpty(path("instructions"), s)
	}
	if v := f["durationS"]; v != nil {
		if x, ok := c.seconds(path("durationS"), v); ok {
			t.DurationS = &x
		}
	}
	if v := f["repeatCount"]; v != nil {
		if n, ok := c.positiveSafeInteger(path("repeatCount"), v); ok {
			t.RepeatCount = &n
		}
	}
	if v := f["resetTimeS"]; v != nil {
		if x, ok := c.seconds(path("resetTimeS"), v); ok {
			t.ResetTimeS = &x
		}
	}

	// Which numbers a task carries depends on its type.
	var required, forbidden []string
	var article string
	switch t.Type {
	case TypeTimed:
		required, article = []string{"durationS", "repeatCount", "resetTimeS"}, "a timed task"
	case TypeOpen:
		required, forbidden, article = []string{"repeatCount", "resetTimeS"}, []string{"durationS"}, "an open task"
	case TypePause:
		required, forbidden, article = []string{"durationS"}, []string{"repeatCount", "resetTimeS"}, "a pause"
	}
	for _, name := range taskFields {
		_, present := f[name]
		switch {
		case contains(required, name) && !present:
			c.add(path(name), "required: %s must have %s", article, name)
		case contains(forbidden, name) && present:
			c.add(path(name), "%s must not have %s", article, name)
		}
	}
	return t, true
}

// requiredString checks that v is present and a string, and returns it
// trimmed.
func (c *checker) requiredString(path string, v *jsonValue, expected string) (string, bool) {
	switch {
	case v == nil:
		c.add(path, "required: must be %s", expected)
		return "", false
	case v.kind != kindString:
		c.add(path, "must be %s, got %s", expected, v.kind)
		return "", false
	}
	return trimJS(v.text), true
}

// nonEmpty reports a trimmed required string that is empty.
func (c *checker) nonEmpty(path, s string) string {
	if s == "" {
		c.add(path, "must not be empty (or whitespace only)")
	}
	return s
}

func (c *checker) positiveSafeInteger(path string, v *jsonValue) (int64, bool) {
	if v.kind != kindNumber {
		c.add(path, "must be a positive safe integer, got %s", v.kind)
		return 0, false
	}
	if !parseDecimal(v.text).isPositiveSafeInteger() {
		c.add(path, "must be a positive safe integer (1 to %d), got %s", MaxSafeInteger, shortLiteral(v.text))
		return 0, false
	}
	return int64(float64Of(v.text)), true
}

func (c *checker) seconds(path string, v *jsonValue) (float64, bool) {
	if v.kind != kindNumber {
		c.add(path, "must be a number of seconds, got %s", v.kind)
		return 0, false
	}
	if !parseDecimal(v.text).isNonNegativeBounded() {
		c.add(path, "must be a finite, non-negative number no greater than %d, got %s", MaxSafeInteger, shortLiteral(v.text))
		return 0, false
	}
	return float64Of(v.text), true
}

// identifier matches keys that a JavaScript path can name with a dot.
var identifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// joinPath appends a member key to a path, bracket-quoting keys that are
// not identifiers.
func joinPath(prefix, key string) string {
	if identifier.MatchString(key) {
		if prefix == "" {
			return key
		}
		return prefix + "." + key
	}
	return prefix + "[" + quoteShort(key) + "]"
}

// quoteShort quotes s for a message, shortened to at most 64 runes.
func quoteShort(s string) string {
	const limit = 64
	if utf8.RuneCountInString(s) > limit {
		r := []rune(s)
		return strconv.Quote(string(r[:limit])) + "…"
	}
	return strconv.Quote(s)
}

// shortLiteral shortens a number literal for a message.
func shortLiteral(s string) string {
	const limit = 40
	if len(s) > limit {
		return s[:limit] + "…"
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// trimJS trims s like ECMAScript's String.prototype.trim: WhiteSpace
// (TAB, VT, FF, SP, NBSP, ZWNBSP and the Unicode Zs category) and
// LineTerminator (LF, CR, LS, PS). It is not unicode.IsSpace, which adds
// U+0085 and lacks U+FEFF.
func trimJS(s string) string {
	return strings.TrimFunc(s, isJSWhitespace)
}

func isJSWhitespace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x00a0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

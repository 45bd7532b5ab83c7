package campaign

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A manifest is decoded by hand, one object at a time, so that every error
// names its JSON path (cases[3].run_id) and says what was expected; unknown
// fields are errors, never ignored.

// PathError is a manifest error at a JSON path.
type PathError struct {
	File string // the manifest file
	Line int    // JSONL line (1-based); 0 for a JSON manifest
	Path string // JSON path inside the document or line ("" for the whole)
	Msg  string
}

func (e *PathError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, " line %d", e.Line)
	}
	if e.Path != "" {
		b.WriteString(": ")
		b.WriteString(e.Path)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// member is the JSON path of key inside the object at path.
func member(path, key string) string {
	if identRe.MatchString(key) {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

// index is the JSON path of element i of the array at path.
func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// decoder reports errors for one document (a JSON file or one JSONL line).
type decoder struct {
	file string
	line int
}

func (d decoder) errorf(path, format string, args ...any) error {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = cutLong(s)
		}
	}
	return &PathError{File: d.file, Line: d.line, Path: cutLong(path), Msg: fmt.Sprintf(format, args...)}
}

// maxShown is how much of one value a message quotes.
const maxShown = 256

// cutLong shortens a value for a message, saying how long it was: a 10 MB
// case id must not make a 10 MB error.
func cutLong(s string) string {
	if len(s) <= maxShown {
		return s
	}
	n := maxShown
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("... (%d bytes)", len(s))
}

// kind names a JSON value's type for error messages.
func kind(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// object decodes raw as a JSON object whose keys must all be in allowed,
// and returns its members. Duplicate keys are an error: encoding/json would
// silently keep the last one.
func (d decoder) object(path string, raw json.RawMessage, allowed []string) (map[string]json.RawMessage, error) {
	if kind(raw) != "an object" {
		return nil, d.errorf(path, "want an object, got %s", kind(raw))
	}
	keys, err := objectKeys(raw)
	if err != nil {
		return nil, d.errorf(path, "%v", err)
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, d.errorf(path, "%v", err)
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			return nil, d.errorf(member(path, k), "appears twice")
		}
		seen[k] = true
		if allowed != nil && !slices.Contains(allowed, k) {
			return nil, d.errorf(member(path, k), "unknown field (want one of %s)", strings.Join(allowed, ", "))
		}
	}
	return m, nil
}

// objectKeys lists the keys of the top-level object in raw, in order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, ok := t.(string)
		if !ok {
			return nil, fmt.Errorf("object key %v is not a string", t)
		}
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// orderedKeys returns the keys of an object in document order.
func (d decoder) orderedKeys(path string, raw json.RawMessage) ([]string, error) {
	keys, err := objectKeys(raw)
	if err != nil {
		return nil, d.errorf(path, "%v", err)
	}
	return keys, nil
}

func (d decoder) str(path string, raw json.RawMessage) (string, error) {
	var s string
	if kind(raw) != "a string" || json.Unmarshal(raw, &s) != nil {
		return "", d.errorf(path, "want a string, got %s", kind(raw))
	}
	return s, nil
}

func (d decoder) integer(path string, raw json.RawMessage) (int, error) {
	var n int
	if kind(raw) != "a number" || json.Unmarshal(raw, &n) != nil {
		return 0, d.errorf(path, "want an integer, got %s", describe(raw))
	}
	return n, nil
}

// describe is kind, with the number itself when it is one.
func describe(raw json.RawMessage) string {
	if k := kind(raw); k != "a number" {
		return k
	}
	return string(bytes.TrimSpace(raw))
}

// required returns m[key] or an error naming the missing field.
func (d decoder) required(path string, m map[string]json.RawMessage, key, what string) (json.RawMessage, error) {
	v, ok := m[key]
	if !ok {
		return nil, d.errorf(member(path, key), "required field missing (%s)", what)
	}
	return v, nil
}

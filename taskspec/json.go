package taskspec

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonKind is the JSON type of a parsed value.
type jsonKind uint8

const (
	kindNull jsonKind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k jsonKind) String() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "boolean"
	case kindNumber:
		return "number"
	case kindString:
		return "string"
	case kindArray:
		return "array"
	case kindObject:
		return "object"
	}
	return "unknown"
}

// jsonValue is one parsed JSON value. The reader keeps what encoding/json
// hides: number literals as written (so that range checks see the exact
// decimal value), every member of an object in document order (so that
// duplicate keys can be reported) and byte offsets.
type jsonValue struct {
	kind    jsonKind
	offset  int          // byte offset of the value's first byte
	text    string       // kindString: the decoded string; kindNumber: the literal as written
	boolean bool         // kindBool
	elems   []*jsonValue // kindArray, in document order
	members []jsonMember // kindObject, in document order, duplicates kept
}

// jsonMember is one member of a JSON object.
type jsonMember struct {
	key    string
	offset int // byte offset of the key's opening quote
	value  *jsonValue
}

// maxDepth bounds nesting. A valid specification nests three levels deep
// (document, tasks array, task object); deeper values can only sit where the
// contract already rejects them, so the bound never rejects a valid document
// and keeps recursion off the goroutine stack limit.
const maxDepth = 64

// syntaxError is a JSON syntax error at a byte offset.
type syntaxError struct {
	offset int
	msg    string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("JSON syntax error at byte offset %d: %s", e.offset, e.msg)
}

// jsonReader is a strict RFC 8259 reader with the grammar of ECMAScript's
// JSON.parse: whitespace is space, tab, LF and CR only; no comments, no
// trailing commas, no leading zeros, no NaN or Infinity.
type jsonReader struct {
	data []byte
	pos  int
}

// parseJSON parses exactly one JSON value filling data, surrounded only by
// JSON whitespace.
func parseJSON(data []byte) (*jsonValue, error) {
	r := &jsonReader{data: data}
	r.skipSpace()
	v, err := r.value(0)
	if err != nil {
		return nil, err
	}
	r.skipSpace()
	if r.pos < len(r.data) {
		return nil, r.errorf("unexpected %s after the end of the document", r.describe())
	}
	return v, nil
}

func (r *jsonReader) errorf(format string, args ...any) error {
	return &syntaxError{offset: r.pos, msg: fmt.Sprintf(format, args...)}
}

// describe names the byte at the read position for an error message.
func (r *jsonReader) describe() string {
	if r.pos >= len(r.data) {
		return "end of input"
	}
	c := r.data[r.pos]
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (r *jsonReader) skipSpace() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

func (r *jsonReader) value(depth int) (*jsonValue, error) {
	if r.pos >= len(r.data) {
		return nil, r.errorf("unexpected end of input, expected a value")
	}
	start := r.pos
	switch c := r.data[r.pos]; {
	case c == '{':
		if depth >= maxDepth {
			return nil, r.errorf("nesting deeper than %d levels", maxDepth)
		}
		return r.object(depth + 1)
	case c == '[':
		if depth >= maxDepth {
			return nil, r.errorf("nesting deeper than %d levels", maxDepth)
		}
		return r.array(depth + 1)
	case c == '"':
		s, err := r.str()
		if err != nil {
			return nil, err
		}
		return &jsonValue{kind: kindString, offset: start, text: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		lit, err := r.number()
		if err != nil {
			return nil, err
		}
		return &jsonValue{kind: kindNumber, offset: start, text: lit}, nil
	case c == 't':
		return r.literal("true", &jsonValue{kind: kindBool, offset: start, boolean: true})
	case c == 'f':
		return r.literal("false", &jsonValue{kind: kindBool, offset: start})
	case c == 'n':
		return r.literal("null", &jsonValue{kind: kindNull, offset: start})
	}
	return nil, r.errorf("unexpected %s, expected a value", r.describe())
}

func (r *jsonReader) literal(word string, v *jsonValue) (*jsonValue, error) {
	for i := 0; i < len(word); i++ {
		if r.pos >= len(r.data) || r.data[r.pos] != word[i] {
			return nil, r.errorf("unexpected %s in literal %s", r.describe(), word)
		}
		r.pos++
	}
	return v, nil
}

func (r *jsonReader) object(depth int) (*jsonValue, error) {
	v := &jsonValue{kind: kindObject, offset: r.pos}
	r.pos++ // '{'
	r.skipSpace()
	if r.pos < len(r.data) && r.data[r.pos] == '}' {
		r.pos++
		return v, nil
	}
	for {
		if r.pos >= len(r.data) || r.data[r.pos] != '"' {
			return nil, r.errorf("unexpected %s, expected a string key", r.describe())
		}
		keyOffset := r.pos
		key, err := r.str()
		if err != nil {
			return nil, err
		}
		r.skipSpace()
		if r.pos >= len(r.data) || r.data[r.pos] != ':' {
			return nil, r.errorf("unexpected %s, expected ':' after an object key", r.describe())
		}
		r.pos++
		r.skipSpace()
		elem, err := r.value(depth)
		if err != nil {
			return nil, err
		}
		v.members = append(v.members, jsonMember{key: key, offset: keyOffset, value: elem})
		r.skipSpace()
		if r.pos >= len(r.data) {
			return nil, r.errorf("unexpected end of input, expected ',' or '}'")
		}
		switch r.data[r.pos] {
		case ',':
			r.pos++
			r.skipSpace()
		case '}':
			r.pos++
			return v, nil
		default:
			return nil, r.errorf("unexpected %s, expected ',' or '}'", r.describe())
		}
	}
}

func (r *jsonReader) array(depth int) (*jsonValue, error) {
	v := &jsonValue{kind: kindArray, offset: r.pos}
	r.pos++ // '['
	r.skipSpace()
	if r.pos < len(r.data) && r.data[r.pos] == ']' {
		r.pos++
		return v, nil
	}
	for {
		elem, err := r.value(depth)
		if err != nil {
			return nil, err
		}
		v.elems = append(v.elems, elem)
		r.skipSpace()
		if r.pos >= len(r.data) {
			return nil, r.errorf("unexpected end of input, expected ',' or ']'")
		}
		switch r.data[r.pos] {
		case ',':
			r.pos++
			r.skipSpace()
		case ']':
			r.pos++
			return v, nil
		default:
			return nil, r.errorf("unexpected %s, expected ',' or ']'", r.describe())
		}
	}
}

// number scans a number literal and returns it as written.
func (r *jsonReader) number() (string, error) {
	start := r.pos
	if r.data[r.pos] == '-' {
		r.pos++
	}
	switch {
	case r.pos < len(r.data) && r.data[r.pos] == '0':
		r.pos++
		if r.pos < len(r.data) && isDigit(r.data[r.pos]) {
			return "", r.errorf("leading zero in a number")
		}
	case r.pos < len(r.data) && isDigit(r.data[r.pos]):
		r.digits()
	default:
		return "", r.errorf("unexpected %s, expected a digit", r.describe())
	}
	if r.pos < len(r.data) && r.data[r.pos] == '.' {
		r.pos++
		if r.pos >= len(r.data) || !isDigit(r.data[r.pos]) {
			return "", r.errorf("unexpected %s, expected a digit after '.'", r.describe())
		}
		r.digits()
	}
	if r.pos < len(r.data) && (r.data[r.pos] == 'e' || r.data[r.pos] == 'E') {
		r.pos++
		if r.pos < len(r.data) && (r.data[r.pos] == '+' || r.data[r.pos] == '-') {
			r.pos++
		}
		if r.pos >= len(r.data) || !isDigit(r.data[r.pos]) {
			return "", r.errorf("unexpected %s, expected a digit in the exponent", r.describe())
		}
		r.digits()
	}
	return string(r.data[start:r.pos]), nil
}

func (r *jsonReader) digits() {
	for r.pos < len(r.data) && isDigit(r.data[r.pos]) {
		r.pos++
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// str scans a string and returns it decoded. The input must be UTF-8 and an
// escaped surrogate must be paired: both are needed for the canonical form
// to have a UTF-8 encoding at all, so the reader rejects what JSON.parse
// would let through as a lone UTF-16 surrogate.
func (r *jsonReader) str() (string, error) {
	r.pos++ // opening quote
	var buf []byte
	runStart := r.pos
	for {
		if r.pos >= len(r.data) {
			return "", r.errorf("unexpected end of input in a string")
		}
		c := r.data[r.pos]
		switch {
		case c == '"':
			buf = append(buf, r.data[runStart:r.pos]...)
			r.pos++
			return string(buf), nil
		case c == '\\':
			buf = append(buf, r.data[runStart:r.pos]...)
			rn, err := r.escape()
			if err != nil {
				return "", err
			}
			buf = utf8.AppendRune(buf, rn)
			runStart = r.pos
		case c < 0x20:
			return "", r.errorf("control character 0x%02x in a string must be escaped", c)
		case c < utf8.RuneSelf:
			r.pos++
		default:
			rn, size := utf8.DecodeRune(r.data[r.pos:])
			if rn == utf8.RuneError && size == 1 {
				return "", r.errorf("invalid UTF-8 byte 0x%02x in a string", c)
			}
			r.pos += size
		}
	}
}

// escape decodes one escape sequence starting at the backslash.
func (r *jsonReader) escape() (rune, error) {
	r.pos++ // backslash
	if r.pos >= len(r.data) {
		return 0, r.errorf("unexpected end of input in an escape sequence")
	}
	c := r.data[r.pos]
	r.pos++
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		escStart := r.pos - 2
		hi, err := r.hex4()
		if err != nil {
			return 0, err
		}
		if !utf16.IsSurrogate(hi) {
			return hi, nil
		}
		if hi < 0xdc00 && r.pos+1 < len(r.data) && r.data[r.pos] == '\\' && r.data[r.pos+1] == 'u' {
			save := r.pos
			r.pos += 2
			lo, err := r.hex4()
			if err != nil {
				return 0, err
			}
			if lo >= 0xdc00 && lo <= 0xdfff {
				return utf16.DecodeRune(hi, lo), nil
			}
			r.pos = save
		}
		r.pos = escStart
		return 0, r.errorf("unpaired UTF-16 surrogate \\u%04x in a string has no UTF-8 encoding", hi)
	}
	r.pos -= 2
	return 0, r.errorf("invalid escape sequence \\%c", c)
}

func (r *jsonReader) hex4() (rune, error) {
	if r.pos+4 > len(r.data) {
		return 0, r.errorf("unexpected end of input in a \\u escape")
	}
	var v rune
	for i := 0; i < 4; i++ {
		c := r.data[r.pos]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, r.errorf("unexpected %s, expected a hexadecimal digit", r.describe())
		}
		v = v<<4 | rune(d)
		r.pos++
	}
	return v, nil
}

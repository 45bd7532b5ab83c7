package taskspec

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// Canonical returns the RFC 8785 (JCS) serialisation of s: object members
// sorted by their UTF-16 code units, no whitespace, strings escaped as
// ECMAScript's JSON.stringify does and numbers in its shortest round-trip
// form. An empty RunDescription and nil task numbers are omitted.
//
// The bytes identify the specification only when s is valid and
// normalised, as every Spec returned by Parse is.
func (s *Spec) Canonical() []byte {
	return s.object().appendTo(nil)
}

// Hash returns the lowercase hexadecimal SHA-256 of Canonical(): the hash
// that names the specification in episode metadata and in
// ceres/task-specifications/<hash>.json.
func (s *Spec) Hash() string {
	sum := sha256.Sum256(s.Canonical())
	return hex.EncodeToString(sum[:])
}

// canonValue is a JSON value ready to be written canonically.
type canonValue interface {
	appendTo(b []byte) []byte
}

type canonString string

func (v canonString) appendTo(b []byte) []byte { return appendJSONString(b, string(v)) }

type canonFloat float64

func (v canonFloat) appendTo(b []byte) []byte { return append(b, formatNumber(float64(v))...) }

// canonInt is an integer within ±MaxSafeInteger, which ECMAScript writes in
// plain decimal.
type canonInt int64

func (v canonInt) appendTo(b []byte) []byte { return strconv.AppendInt(b, int64(v), 10) }

type canonArray []canonValue

func (v canonArray) appendTo(b []byte) []byte {
	b = append(b, '[')
	for i, e := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = e.appendTo(b)
	}
	return append(b, ']')
}

type canonMember struct {
	key   string
	value canonValue
}

type canonObject []canonMember

func (v canonObject) appendTo(b []byte) []byte {
	sorted := slices.Clone(v)
	sortCanon(sorted)
	b = append(b, '{')
	for i, m := range sorted {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, m.key)
		b = append(b, ':')
		b = m.value.appendTo(b)
	}
	return append(b, '}')
}

// object is the normalised specification as a JSON object.
func (s *Spec) object() canonObject {
	o := canonObject{
		{"schema", canonString(s.Schema)},
		{"version", canonInt(s.Version)},
		{"runTitle", canonString(s.RunTitle)},
	}
	if s.RunDescription != "" {
		o = append(o, canonMember{"runDescription", canonString(s.RunDescription)})
	}
	o = append(o, canonMember{"cycleCount", canonInt(s.CycleCount)})
	tasks := make(canonArray, len(s.Tasks))
	for i := range s.Tasks {
		tasks[i] = s.Tasks[i].object()
	}
	return append(o, canonMember{"tasks", tasks})
}

// object is the task as a JSON object.
func (t *Task) object() canonObject {
	o := canonObject{
		{"id", canonString(t.ID)},
		{"type", canonString(t.Type)},
		{"label", canonString(t.Label)},
		{"instructions", canonString(t.Instructions)},
	}
	if t.DurationS != nil {
		o = append(o, canonMember{"durationS", canonFloat(*t.DurationS)})
	}
	if t.RepeatCount != nil {
		o = append(o, canonMember{"repeatCount", canonInt(*t.RepeatCount)})
	}
	if t.ResetTimeS != nil {
		o = append(o, canonMember{"resetTimeS", canonFloat(*t.ResetTimeS)})
	}
	return o
}

// sortCanon sorts members into RFC 8785 order.
func sortCanon(o canonObject) {
	slices.SortFunc(o, func(x, y canonMember) int { return compareUTF16(x.key, y.key) })
}

// compareUTF16 orders strings by their UTF-16 code units, as RFC 8785
// sorts member names.
func compareUTF16(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// formatNumber writes f as ECMAScript's Number.prototype.toString does
// (RFC 8785 section 3.2.2.3); −0 becomes 0. f must be finite, which every
// number of a parsed Spec is.
func formatNumber(f float64) string {
	s, err := jcs.NumberToJSON(f)
	if err != nil {
		// Only NaN and ±Inf fail; they cannot come out of Parse.
		panic("taskspec: non-finite number in a specification: " + strconv.FormatFloat(f, 'g', -1, 64))
	}
	return s
}

// appendJSONString writes s as ECMAScript's JSON.stringify does: quote,
// backslash and the control characters escaped (the five with short forms
// as \b \t \n \f \r, the rest as lowercase \u00xx), everything else,
// U+2028 and U+2029 included, as raw UTF-8.
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			// Strings in a Spec are valid UTF-8; encode each rune as is
			// (an invalid byte becomes U+FFFD rather than invalid output).
			r, size := utf8.DecodeRuneInString(s[i:])
			b = utf8.AppendRune(b, r)
			i += size
			continue
		}
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\b':
			b = append(b, '\\', 'b')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\f':
			b = append(b, '\\', 'f')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			if c < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				b = append(b, c)
			}
		}
		i++
	}
	return append(b, '"')
}

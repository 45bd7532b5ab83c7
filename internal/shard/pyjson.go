package shard

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// JSONField is one key of a JSONObject.
type JSONField struct {
	Key   string
	Value any
}

// JSONObject is a JSON object whose keys keep the order given. LeRobot's JSON
// files are written from Python dicts, whose key order is meaningful to a
// byte-level comparison, so the shard never writes metadata from a Go map
// unless it sorts the keys.
//
// Values may be nil, bool, string, int, int64, uint8, float32, float64,
// JSONObject, map[string]any (keys sorted), []any, []string, []int, []int64,
// []float64 or []bool.
type JSONObject []JSONField

// Get returns the value of key and whether it is present.
func (o JSONObject) Get(key string) (any, bool) {
	for _, f := range o {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

// pyJSON encodes values the way Python's json.dump does with
// indent=<indent> and ensure_ascii=<ensureASCII>: ", " / ": " separators
// (",\n" between items when indenting), every list element and object key on
// its own line, floats in repr() form (shortest round-trip, "1.0", "1e-05",
// "1e+16"). NaN and ±Inf are errors: LeRobot's stats loader and other JSON
// readers reject them.
type pyJSON struct {
	buf         bytes.Buffer
	indent      int // 0: compact one-line output with ", " and ": "
	ensureASCII bool
}

// marshalPyJSON encodes v with the given indent and ensure_ascii behaviour.
func marshalPyJSON(v any, indent int, ensureASCII bool) ([]byte, error) {
	e := &pyJSON{indent: indent, ensureASCII: ensureASCII}
	if err := e.value(v, 0); err != nil {
		return nil, err
	}
	return e.buf.Bytes(), nil
}

func (e *pyJSON) newline(depth int) {
	if e.indent == 0 {
		return
	}
	e.buf.WriteByte('\n')
	for i := 0; i < depth*e.indent; i++ {
		e.buf.WriteByte(' ')
	}
}

func (e *pyJSON) sep() {
	if e.indent == 0 {
		e.buf.WriteString(", ")
	} else {
		e.buf.WriteByte(',')
	}
}

func (e *pyJSON) list(n int, depth int, item func(i int) error) error {
	if n == 0 {
		e.buf.WriteString("[]")
		return nil
	}
	e.buf.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			e.sep()
		}
		e.newline(depth + 1)
		if err := item(i); err != nil {
			return err
		}
	}
	e.newline(depth)
	e.buf.WriteByte(']')
	return nil
}

func (e *pyJSON) object(keys []string, depth int, val func(i int) any) error {
	if len(keys) == 0 {
		e.buf.WriteString("{}")
		return nil
	}
	e.buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			e.sep()
		}
		e.newline(depth + 1)
		e.str(k)
		e.buf.WriteString(": ")
		if err := e.value(val(i), depth+1); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	e.newline(depth)
	e.buf.WriteByte('}')
	return nil
}

func (e *pyJSON) value(v any, depth int) error {
	switch x := v.(type) {
	case nil:
		e.buf.WriteString("null")
	case bool:
		if x {
			e.buf.WriteString("true")
		} else {
			e.buf.WriteString("false")
		}
	case string:
		e.str(x)
	case int:
		e.buf.WriteString(strconv.Itoa(x))
	case int64:
		e.buf.WriteString(strconv.FormatInt(x, 10))
	case uint8:
		e.buf.WriteString(strconv.Itoa(int(x)))
	case float32:
		return e.float(float64(x))
	case float64:
		return e.float(x)
	case JSONObject:
		keys := make([]string, len(x))
		for i, f := range x {
			keys[i] = f.Key
		}
		return e.object(keys, depth, func(i int) any { return x[i].Value })
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		return e.object(keys, depth, func(i int) any { return x[keys[i]] })
	case []any:
		return e.list(len(x), depth, func(i int) error { return e.value(x[i], depth+1) })
	case []string:
		return e.list(len(x), depth, func(i int) error { e.str(x[i]); return nil })
	case []int:
		return e.list(len(x), depth, func(i int) error { return e.value(x[i], depth+1) })
	case []int64:
		return e.list(len(x), depth, func(i int) error { return e.value(x[i], depth+1) })
	case []float64:
		return e.list(len(x), depth, func(i int) error { return e.float(x[i]) })
	case []bool:
		return e.list(len(x), depth, func(i int) error { return e.value(x[i], depth+1) })
	default:
		return fmt.Errorf("unsupported JSON value of type %T", v)
	}
	return nil
}

// float writes f as Python's repr(float) does.
func (e *pyJSON) float(f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("%v cannot be written as JSON", f)
	}
	e.buf.WriteString(pyFloatRepr(f))
	return nil
}

// pyFloatRepr formats f like Python's repr(): the shortest digits that round
// trip, positional notation when the decimal exponent is in [-4, 16),
// scientific notation ("1e-05", "1.5e+16") otherwise, and always a ".0" on
// integral positional values.
func pyFloatRepr(f float64) string {
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d[.ddd]e±XX
	neg := false
	if s[0] == '-' {
		neg = true
		s = s[1:]
	}
	epos := bytes.IndexByte([]byte(s), 'e')
	mant, expStr := s[:epos], s[epos+1:]
	exp, _ := strconv.Atoi(expStr)
	digits := mant[:1]
	if len(mant) > 2 {
		digits += mant[2:]
	}
	var out string
	if exp < -4 || exp >= 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		sign := "+"
		if exp < 0 {
			sign = "-"
			exp = -exp
		}
		es := strconv.Itoa(exp)
		if len(es) < 2 {
			es = "0" + es
		}
		out = m + "e" + sign + es
	} else if exp < 0 {
		out = "0." + string(bytes.Repeat([]byte{'0'}, -exp-1)) + digits
	} else {
		point := exp + 1
		if len(digits) <= point {
			out = digits + string(bytes.Repeat([]byte{'0'}, point-len(digits))) + ".0"
		} else {
			out = digits[:point] + "." + digits[point:]
		}
	}
	if neg {
		return "-" + out
	}
	return out
}

// str writes s as a JSON string the way Python's json module escapes it.
func (e *pyJSON) str(s string) {
	const hex = "0123456789abcdef"
	e.buf.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				e.buf.WriteString(`\"`)
			case '\\':
				e.buf.WriteString(`\\`)
			case '\n':
				e.buf.WriteString(`\n`)
			case '\r':
				e.buf.WriteString(`\r`)
			case '\t':
				e.buf.WriteString(`\t`)
			case '\b':
				e.buf.WriteString(`\b`)
			case '\f':
				e.buf.WriteString(`\f`)
			default:
				if c < 0x20 || (e.ensureASCII && c == 0x7f) {
					e.buf.WriteString(`\u00`)
					e.buf.WriteByte(hex[c>>4])
					e.buf.WriteByte(hex[c&0xf])
				} else {
					e.buf.WriteByte(c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !e.ensureASCII {
			e.buf.WriteString(s[i : i+size])
			i += size
			continue
		}
		writeU := func(u rune) {
			e.buf.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				e.buf.WriteByte(hex[(u>>uint(shift))&0xf])
			}
		}
		if r >= 0x10000 {
			r -= 0x10000
			writeU(0xd800 | (r>>10)&0x3ff)
			writeU(0xdc00 | r&0x3ff)
		} else {
			writeU(r)
		}
		i += size
	}
	e.buf.WriteByte('"')
}

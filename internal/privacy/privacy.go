// Package privacy holds the rules of a metadata-only dataset
// (docs/privacy.md): one that may leave the lab because it carries no video,
// no instructions, descriptions or run titles, and no identifying value
// except as a salted hash.
//
// What is private in a CERES session (PrivateStrings): the session id, the
// run title and description and every task's instructions, of every
// specification the dataset was made under. Labels stay: they are the task
// strings of a metadata-only dataset, except where a label carries the
// instructions, which TaskLabel replaces by the task id.
package privacy

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/ceres-robotics/ceres-export/taskspec"
)

// Mode is a dataset's privacy mode.
type Mode string

const (
	// Full keeps everything (the default).
	Full Mode = ""
	// MetadataOnly is a dataset that may leave the lab.
	MetadataOnly Mode = "metadata-only"
)

// Marker is the file that declares a metadata-only dataset
// (layout.PrivacyMarkerPath): {"mode": "metadata-only", "schema_version": 1}.
type Marker struct {
	SchemaVersion int  `json:"schema_version"`
	Mode          Mode `json:"mode"`
}

// Redacted is the value that replaces a private string in a redacted
// specification.
const Redacted = "redacted"

// ErrNoSalt: a metadata-only dataset needs the user's salt.
var ErrNoSalt = errors.New("privacy: --privacy metadata-only needs --salt (it is never stored)")

// ParseMode parses a --privacy value.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "full":
		return Full, nil
	case string(MetadataOnly):
		return MetadataOnly, nil
	}
	return Full, fmt.Errorf("--privacy %q: want full or metadata-only", s)
}

// Check returns ErrNoSalt when a metadata-only mode has no salt.
func (m Mode) Check(salt string) error {
	if m == MetadataOnly && salt == "" {
		return ErrNoSalt
	}
	return nil
}

// SaltedHash is the replacement of an identifying string: HMAC-SHA-256 keyed
// by the user's salt, so that one salt maps one string to one value across
// datasets, and nobody without the salt can test a guess.
func SaltedHash(salt, s string) string {
	m := hmac.New(sha256.New, []byte(salt))
	m.Write([]byte(s))
	return "h-" + hex.EncodeToString(m.Sum(nil)[:16])
}

// Carries reports whether s contains one of the private strings, compared
// the way every rule of this package compares (Fold): ignoring case, width
// and compatibility forms, and also letters and digits alone, so that
// "Rig 3_Sample" carries "rig3 sample" (ids are normalised that way).
func Carries(s string, private ...string) bool {
	return carried(s, private) != ""
}

// carried returns the first private string s carries, "" for none.
func carried(s string, private []string) string {
	fs := Fold(s)
	ks := skeleton(fs)
	for _, p := range private {
		fp := Fold(p)
		if fp == "" {
			continue
		}
		if strings.Contains(fs, fp) {
			return p
		}
		if kp := skeleton(fp); kp != "" && strings.Contains(ks, kp) {
			return p
		}
	}
	return ""
}

// Fold is the form in which strings are compared: NFKC-normalised and
// case-folded (Unicode's NFKC_Casefold, near enough), so that "ＳＥＳＳＩＯＮ",
// "Session" and "session" are one string.
func Fold(s string) string {
	return norm.NFKC.String(cases.Fold().String(norm.NFKC.String(s)))
}

// foldBytes is Fold of bytes that need not be text (invalid UTF-8 passes
// through as U+FFFD, which no private string holds).
func foldBytes(b []byte) []byte {
	return norm.NFKC.Bytes(cases.Fold().Bytes(norm.NFKC.Bytes(b)))
}

// skeleton keeps the letters and digits of a folded string.
func skeleton(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return -1
	}, s)
}

// specPrivate is every private string of one specification.
func specPrivate(spec *taskspec.Spec) []string {
	out := []string{spec.RunTitle, spec.RunDescription}
	for _, t := range spec.Tasks {
		out = append(out, t.Instructions)
	}
	return out
}

// TaskLabel is a task's public name: its label, or its id when the label
// carries (Carries) the session id or a private string of any of the
// specifications the dataset is made under (a re-export's applied and
// recorded ones: a label may quote the other's instructions). So a title
// never carries the task's prompt, nor the run's title.
func TaskLabel(t taskspec.Task, sessionID string, specs ...*taskspec.Spec) string {
	private := []string{sessionID}
	for _, s := range specs {
		if s != nil {
			private = append(private, specPrivate(s)...)
		}
	}
	if Carries(t.Label, private...) {
		return t.ID
	}
	return t.Label
}

// RedactSpec returns the canonical bytes of spec with its run title and
// every instruction replaced by Redacted, the description dropped, and each
// label replaced by TaskLabel (against spec and the others the dataset is
// made under): still a valid version 1 specification, with the ids, types,
// durations and counts a learner may use.
func RedactSpec(spec *taskspec.Spec, sessionID string, others ...*taskspec.Spec) []byte {
	all := append([]*taskspec.Spec{spec}, others...)
	r := *spec
	r.RunTitle, r.RunDescription = Redacted, ""
	r.Tasks = slices.Clone(spec.Tasks)
	for i := range r.Tasks {
		r.Tasks[i].Label = TaskLabel(spec.Tasks[i], sessionID, all...)
		r.Tasks[i].Instructions = Redacted
	}
	return r.Canonical()
}

// minPrivateLen is the shortest private string looked for in a dataset's
// bytes: a shorter one ("go", "ab") matches binary data by chance.
const minPrivateLen = 4

// PrivateStrings returns the private strings of a session recorded and
// exported under these specifications, longest first, without duplicates
// or strings shorter than four bytes, and without those a task id carries
// (Carries): ids are public, they are the tasks' identity, so an
// instruction "Wrap" of the task "wrap" says nothing an id does not.
func PrivateStrings(sessionID string, specs ...*taskspec.Spec) []string {
	var ids []string
	for _, s := range specs {
		if s != nil {
			for _, t := range s.Tasks {
				ids = append(ids, t.ID)
			}
		}
	}
	var out []string
	add := func(s string) {
		if len(s) < minPrivateLen || slices.Contains(out, s) {
			return
		}
		for _, id := range ids {
			if Carries(id, s) {
				return
			}
		}
		out = append(out, s)
	}
	add(sessionID)
	for _, s := range specs {
		if s == nil {
			continue
		}
		add(s.RunTitle)
		add(s.RunDescription)
		for _, t := range s.Tasks {
			add(t.Instructions)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// Finding is a private string found in a dataset's bytes.
type Finding struct {
	// Private is the private string.
	Private string
	// Where says how it was found: "at byte N" of the folded bytes, "at byte
	// N after JSON unescaping", or in which decoded string or line.
	Where string
}

// Find looks for each private string in b (a file's bytes, or a decoded
// value) as the rules compare strings (Fold): in the folded bytes as they
// are and with JSON escapes undone (\u0041 for A), and in each string of b
// when b is JSON or JSON Lines, or in each line (HTML entities undone)
// when it is other text, also by letters and digits alone (Carries). It
// reports each private string once, where it was first found.
func Find(b []byte, private []string) []Finding {
	var out []Finding
	found := map[string]bool{}
	add := func(p, where string) {
		if !found[p] {
			found[p] = true
			out = append(out, Finding{Private: p, Where: where})
		}
	}
	folded := foldBytes(b)
	var unescaped []byte
	if bytes.IndexByte(b, '\\') >= 0 {
		unescaped = foldBytes(unescapeJSON(b))
	}
	for _, p := range private {
		fp := []byte(Fold(p))
		if len(fp) == 0 {
			continue
		}
		if i := bytes.Index(folded, fp); i >= 0 {
			add(p, fmt.Sprintf("at byte %d (compared case-folded)", i))
		} else if i := bytes.Index(unescaped, fp); unescaped != nil && i >= 0 {
			add(p, fmt.Sprintf("at byte %d after JSON unescaping", i))
		}
	}
	if len(found) == len(private) || !utf8.Valid(b) {
		return out
	}
	check := func(s, where string) {
		if p := carried(s, private); p != "" {
			add(p, where+" "+strconv.Quote(cut(s, 80)))
		}
	}
	if strs, ok := jsonStrings(b); ok {
		for _, s := range strs {
			check(s, "in the JSON string")
		}
		return out
	}
	for i, line := range strings.Split(string(b), "\n") {
		check(html.UnescapeString(line), fmt.Sprintf("in line %d", i+1))
	}
	return out
}

// jsonStrings returns every string (keys too) of b when b is a sequence of
// JSON values (a JSON document, JSON Lines).
func jsonStrings(b []byte) ([]string, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var out []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out, true
		}
		if err != nil {
			return nil, false
		}
		if s, ok := tok.(string); ok {
			out = append(out, s)
		}
	}
}

// unescapeJSON undoes JSON's backslash escapes wherever they occur in b
// (a JSON file, or JSON inside another format); other bytes are kept.
func unescapeJSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			out = append(out, c)
			continue
		}
		switch e := b[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
			i++
		case 'b', 'f', 'n', 'r', 't':
			out = append(out, map[byte]byte{'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}[e])
			i++
		case 'u':
			r, n := hex4(b[i+2:])
			if n == 0 {
				out = append(out, c)
				continue
			}
			i += 1 + n
			if utf16.IsSurrogate(r) {
				if len(b) > i+2 && b[i+1] == '\\' && b[i+2] == 'u' {
					if r2, n2 := hex4(b[i+3:]); n2 > 0 {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							r = d
							i += 2 + n2
						}
					}
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			out = append(out, c)
		}
	}
	return out
}

// hex4 decodes four hex digits at the start of b; n is 4, or 0 if there
// are not four.
func hex4(b []byte) (rune, int) {
	if len(b) < 4 {
		return 0, 0
	}
	v, err := strconv.ParseUint(string(b[:4]), 16, 16)
	if err != nil {
		return 0, 0
	}
	return rune(v), 4
}

// cut shortens s to at most n bytes for a message, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

var saltedHashRe = regexp.MustCompile(`^h-[0-9a-f]{32}$`)

// IsSaltedHash reports whether s has the form of SaltedHash's output, the
// only form in which a metadata-only dataset carries a value a user wrote
// (a case id, a campaign id, an extension value): nothing can prove such a
// value public, so it is replaced.
func IsSaltedHash(s string) bool { return saltedHashRe.MatchString(s) }

// SaltStrings returns the JSON value raw with every string value replaced
// by its SaltedHash; object keys, the names of what the values are, stay.
// Numbers, booleans and nulls stay as written.
func SaltStrings(salt string, raw json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			return SaltedHash(salt, x)
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = walk(x[k])
			}
		}
		return v
	}
	return json.Marshal(walk(v))
}

// SaltedValuesOnly reports the first string value of the JSON value raw
// (keys aside) that is not a salted hash, and its JSON path; ok is true
// when there is none.
func SaltedValuesOnly(raw []byte) (path, value string, ok bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", "", false, err
	}
	var walk func(string, any) bool
	walk = func(p string, v any) bool {
		switch x := v.(type) {
		case string:
			if !IsSaltedHash(x) {
				path, value = p, x
				return false
			}
		case []any:
			for i, e := range x {
				if !walk(fmt.Sprintf("%s[%d]", p, i), e) {
					return false
				}
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				if !walk(p+"."+k, x[k]) {
					return false
				}
			}
		}
		return true
	}
	return path, value, walk("$", v), nil
}

// SourceName is what a merged metadata-only dataset calls its source
// number i (ceres/source/name, the merge report's sources): a shard's
// directory is usually named after its session.
func SourceName(i int) string { return fmt.Sprintf("source-%04d", i) }

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
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

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

// Carries reports whether s contains one of the private strings, ignoring
// case.
func Carries(s string, private ...string) bool {
	ls := strings.ToLower(s)
	for _, p := range private {
		if p != "" && strings.Contains(ls, strings.ToLower(p)) {
			return true
		}
	}
	return false
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
// carries a private string of the specification (a title never carries the
// task's prompt, nor the run's title).
func TaskLabel(spec *taskspec.Spec, t taskspec.Task) string {
	if Carries(t.Label, specPrivate(spec)...) {
		return t.ID
	}
	return t.Label
}

// RedactSpec returns the canonical bytes of spec with its run title and
// every instruction replaced by Redacted, the description dropped, and each
// label replaced by TaskLabel: still a valid version 1 specification, with
// the ids, types, durations and counts a learner may use.
func RedactSpec(spec *taskspec.Spec) []byte {
	r := *spec
	r.RunTitle, r.RunDescription = Redacted, ""
	r.Tasks = slices.Clone(spec.Tasks)
	for i := range r.Tasks {
		r.Tasks[i].Label = TaskLabel(spec, spec.Tasks[i])
		r.Tasks[i].Instructions = Redacted
	}
	return r.Canonical()
}

// minPrivateLen is the shortest private string looked for in a dataset's
// bytes: a shorter one ("go", "ab") matches binary data by chance.
const minPrivateLen = 4

// PrivateStrings returns the private strings of a session recorded and
// exported under these specifications, longest first, without duplicates
// or strings shorter than four bytes.
func PrivateStrings(sessionID string, specs ...*taskspec.Spec) []string {
	var out []string
	add := func(s string) {
		if len(s) >= minPrivateLen && !slices.Contains(out, s) {
			out = append(out, s)
		}
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

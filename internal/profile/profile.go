// Package profile reads feature profiles: files that declare how a
// session's streams become LeRobot features (observation.state and action
// from named sensor fields, with a name per dimension; action derived from
// the next frame's state; streams to drop; camera keys). The `--map`
// one-off form parses into the same Feature, so an export has one mapping
// mechanism whichever way it was asked for.
//
// A profile is YAML or JSON (JSON is read by the same YAML 1.2 parser).
// Decoding is strict: an unknown key, a duplicate key or a wrong type is an
// error naming the file, the key path and the line.
package profile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gowebpki/jcs"
)

// Schema and Version identify the profile format.
const (
	Schema  = "ceres-feature-profile"
	Version = 1
)

// Profile is one feature profile.
type Profile struct {
	Schema  string `json:"schema"`
	Version int    `json:"version"`
	// Features are written in this order, before the default features of
	// the sensor fields no feature names.
	Features []Feature `json:"features,omitempty"`
	// Drop lists streams (sensor or camera) that reach no feature, and
	// sensor fields ("stream.field", the stream's id then its field's name)
	// that get no default feature: a debug counter a policy must not take
	// for a state input. Resolve tells the two apart by the session: an
	// entry that is a stream id is the stream.
	Drop []string `json:"drop,omitempty"`
	// Cameras give camera streams their LeRobot key
	// observation.images.<name>; a camera not listed keeps its stream id.
	Cameras []Camera `json:"cameras,omitempty"`

	// Source names the file the profile came from, for errors; it is not
	// part of the profile.
	Source string `json:"-"`
	// lines maps key paths to their line in Source.
	lines *decoder
}

// at fills in the file and line of an error at path.
func (p *Profile) at(e *PathError) *PathError {
	e.File = p.Source
	if p.lines != nil {
		e.Line = p.lines.line(e.Path)
	}
	return e
}

// Feature is one LeRobot data feature: either sensor fields concatenated in
// order (Fields), or the next frame's value of another feature of the
// profile (Next).
type Feature struct {
	Name   string     `json:"name"`
	Fields []FieldRef `json:"fields,omitempty"`
	// Next names a feature with Fields; frame k of this feature holds that
	// feature's frame k+1 of the same episode, and an episode's last frame
	// holds its own value (see docs/profiles.md).
	Next string `json:"next,omitempty"`
	// Names label the feature's dimensions (info.json "names"); empty
	// means names derived from the fields.
	Names []string `json:"names,omitempty"`
}

// FieldRef names a sensor field, or a slice of a vector field's elements.
type FieldRef struct {
	Stream string `json:"stream"`
	Field  string `json:"field"`
	// Slice, when set, takes elements [Slice[0], Slice[1]) of the field's
	// flattened value, as Python's v[start:stop].
	Slice *[2]int `json:"slice,omitempty"`
}

// Camera gives a camera stream its feature key.
type Camera struct {
	Stream string `json:"stream"`
	Name   string `json:"name"`
}

// CameraKeyPrefix starts every camera feature's key.
const CameraKeyPrefix = "observation.images."

// String is the reference as --map writes it: stream.field or
// stream.field[start:stop].
func (r FieldRef) String() string {
	s := r.Stream + "." + r.Field
	if r.Slice != nil {
		s += fmt.Sprintf("[%d:%d]", r.Slice[0], r.Slice[1])
	}
	return s
}

// New returns an empty profile: every sensor field its own feature, every
// camera its stream id.
func New() *Profile { return &Profile{Schema: Schema, Version: Version} }

// Empty reports whether p changes nothing about the default features.
func (p *Profile) Empty() bool {
	return p == nil || len(p.Features) == 0 && len(p.Drop) == 0 && len(p.Cameras) == 0
}

// Canonical returns p as RFC 8785 JSON, the bytes an export stores beside its report (layout.ProfilePath).
func (p *Profile) Canonical() []byte {
	b, err := json.Marshal(p)
	if err != nil {
		panic(fmt.Sprintf("profile: marshal: %v", err)) // plain structs of strings and ints
	}
	c, err := jcs.Transform(b)
	if err != nil {
		panic(fmt.Sprintf("profile: canonicalise: %v", err))
	}
	return c
}

// Hash is the lowercase hex SHA-256 of Canonical().
func (p *Profile) Hash() string {
	sum := sha256.Sum256(p.Canonical())
	return hex.EncodeToString(sum[:])
}

// defaultFeatureNames are LeRobot's own columns, which no profile feature
// may take.
var defaultFeatureNames = map[string]bool{
	"timestamp": true, "frame_index": true, "episode_index": true, "index": true, "task_index": true,
}

// Validate checks what can be checked without a session: names unique and
// usable as LeRobot keys, Next naming a feature with fields, slices in
// order. Errors name the key path (features[1].next).
func (p *Profile) Validate() error {
	if p.Schema != Schema {
		return pathErr("schema", "is %q, want %q", p.Schema, Schema)
	}
	if p.Version != Version {
		return pathErr("version", "is %d, want %d", p.Version, Version)
	}
	byName := map[string]int{}
	for i, f := range p.Features {
		at := fmt.Sprintf("features[%d]", i)
		if err := checkKey(f.Name); err != nil {
			return pathErr(at+".name", "%v", err)
		}
		if strings.HasPrefix(f.Name, CameraKeyPrefix) {
			return pathErr(at+".name", "%q: %s* keys are camera features (see cameras)", f.Name, CameraKeyPrefix)
		}
		if prev, dup := byName[f.Name]; dup {
			return pathErr(at+".name", "%q is already the name of features[%d]", f.Name, prev)
		}
		byName[f.Name] = i
		switch {
		case len(f.Fields) == 0 && f.Next == "":
			return pathErr(at, "feature %s needs fields or next", f.Name)
		case len(f.Fields) > 0 && f.Next != "":
			return pathErr(at, "feature %s has both fields and next; a feature is one or the other", f.Name)
		}
		for j, r := range f.Fields {
			fat := fmt.Sprintf("%s.fields[%d]", at, j)
			if r.Stream == "" {
				return pathErr(fat+".stream", "is empty")
			}
			if r.Field == "" {
				return pathErr(fat+".field", "is empty")
			}
			if s := r.Slice; s != nil && (s[0] < 0 || s[1] <= s[0]) {
				return pathErr(fat+".slice", "[%d, %d]: want [start, stop] with 0 <= start < stop", s[0], s[1])
			}
		}
		for j, n := range f.Names {
			if n == "" {
				return pathErr(fmt.Sprintf("%s.names[%d]", at, j), "is empty")
			}
		}
	}
	for i, f := range p.Features {
		if f.Next == "" {
			continue
		}
		src, ok := byName[f.Next]
		if !ok {
			return pathErr(fmt.Sprintf("features[%d].next", i), "%q names no feature of the profile", f.Next)
		}
		if len(p.Features[src].Fields) == 0 {
			return pathErr(fmt.Sprintf("features[%d].next", i), "%q is itself derived; next must name a feature with fields", f.Next)
		}
	}
	dropped := map[string]bool{}
	for i, s := range p.Drop {
		if s == "" {
			return pathErr(fmt.Sprintf("drop[%d]", i), "is empty")
		}
		if dropped[s] {
			return pathErr(fmt.Sprintf("drop[%d]", i), "%q is listed twice", s)
		}
		dropped[s] = true
	}
	for i, f := range p.Features {
		for j, r := range f.Fields {
			if dropped[r.Stream] {
				return pathErr(fmt.Sprintf("features[%d].fields[%d].stream", i, j), "stream %q is dropped (drop)", r.Stream)
			}
		}
	}
	streams, names := map[string]int{}, map[string]int{}
	for i, c := range p.Cameras {
		at := fmt.Sprintf("cameras[%d]", i)
		if c.Stream == "" {
			return pathErr(at+".stream", "is empty")
		}
		if err := checkKey(c.Name); err != nil {
			return pathErr(at+".name", "%v", err)
		}
		if prev, dup := streams[c.Stream]; dup {
			return pathErr(at+".stream", "camera %q is already named by cameras[%d]", c.Stream, prev)
		}
		if prev, dup := names[c.Name]; dup {
			return pathErr(at+".name", "%q is already the name of cameras[%d]", c.Name, prev)
		}
		if dropped[c.Stream] {
			return pathErr(at+".stream", "stream %q is dropped (drop)", c.Stream)
		}
		streams[c.Stream], names[c.Name] = i, i
	}
	return nil
}

// checkKey rejects names LeRobot cannot use as a feature key: empty, with a
// slash (keys name directories of videos/ and Hub paths), or one of its own
// columns.
func checkKey(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("is empty")
	case strings.ContainsAny(name, "/\\"):
		return fmt.Errorf("%q: a feature key cannot hold a slash", name)
	case strings.TrimSpace(name) != name:
		return fmt.Errorf("%q: leading or trailing white space", name)
	case defaultFeatureNames[name]:
		return fmt.Errorf("%q is one of LeRobot's own columns", name)
	}
	return nil
}

// PathError is a profile error at a key path (features[0].fields[1].slice),
// with the file and line where known.
type PathError struct {
	File string // "" when the profile came from no file
	Path string
	Line int // 0 when unknown
	Msg  string
}

func (e *PathError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	b.WriteString("profile")
	if e.Path != "" {
		b.WriteString(" ")
		b.WriteString(e.Path)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

func pathErr(path, format string, args ...any) *PathError {
	return &PathError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

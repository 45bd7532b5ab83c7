package profile

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ceres-robotics/ceres-export/journal"
)

// ErrMismatch marks an error of Resolve: the profile does not fit the
// session (a stream or field it lacks, a slice past a field's end).
var ErrMismatch = errors.New("the profile does not fit the session")

// Part is one slice of one sensor field feeding a feature.
type Part struct {
	Stream int // index in SESSION.streams
	Field  int // index in the stream's fields
	// StreamID and FieldName name it in messages.
	StreamID, FieldName string
	Dtype               journal.Dtype // the journal's dtype
	FieldElems          int           // elements per sample of the whole field
	From, To            int           // the elements taken: [From, To)
}

// Elems is the number of elements the part adds to each row.
func (p Part) Elems() int { return p.To - p.From }

// Resolved is a profile applied to one session: every data feature in shard
// order with where its values come from, and every camera kept.
type Resolved struct {
	Features []ResolvedFeature
	Cameras  []ResolvedCamera
}

// ResolvedFeature is one data feature of the shard.
type ResolvedFeature struct {
	Name string
	// Parts are concatenated in order; nil for a derived feature.
	Parts []Part
	// Next is, for a derived feature, the index in Resolved.Features of
	// the feature whose next frame it holds; -1 otherwise.
	Next int
	// Names has one label per element (LeRobot's "names"), or one for a
	// scalar field that names its only element, or none.
	Names []string
	Width int
	// Declared is true for a feature of the profile, false for the default
	// feature of a field no profile feature names.
	Declared bool
}

// ResolvedCamera is a camera stream kept in the shard and its feature key.
type ResolvedCamera struct {
	Stream string
	Key    string
}

// DefaultFeatureName is the key of a sensor field no profile feature names.
func DefaultFeatureName(stream, field string) string {
	return "observation." + stream + "." + field
}

// Resolve applies p (nil: the empty profile) to a session: the profile's
// features first, in order, then observation.<stream>.<field> for every
// field of a kept sensor stream that no feature names (a field any feature
// takes a slice of gets no default feature). Every stream and field the
// profile names must exist with the right kind; slices must fit; no element
// of a field may feed two features.
func Resolve(p *Profile, session journal.Session) (*Resolved, error) {
	if p == nil {
		p = New()
	}
	fail := func(path, format string, args ...any) error {
		return fmt.Errorf("%w: %w", ErrMismatch, p.at(pathErr(path, format, args...)))
	}
	streamIdx := map[string]int{}
	for i, s := range session.Streams {
		streamIdx[s.ID] = i
	}
	type fieldKey struct{ stream, field int }
	dropped := map[string]bool{}
	droppedField := map[fieldKey]string{} // the drop entry
	for i, id := range p.Drop {
		if _, ok := streamIdx[id]; ok {
			dropped[id] = true
			continue
		}
		// stream.field: the stream id may itself hold dots, the field is
		// what follows the last one.
		at := fmt.Sprintf("drop[%d]", i)
		cut := strings.LastIndexByte(id, '.')
		si, ok := streamIdx[id[:max(cut, 0)]]
		if cut < 0 || !ok {
			return nil, fail(at, "no stream %q in the session, nor a stream.field (have %s)", id, streamList(session, ""))
		}
		s := session.Streams[si]
		fi := slices.IndexFunc(s.Fields, func(f journal.Field) bool { return f.Name == id[cut+1:] })
		if s.Kind != journal.KindSensor || fi < 0 {
			return nil, fail(at, "stream %q has no field %q", s.ID, id[cut+1:])
		}
		droppedField[fieldKey{si, fi}] = id
	}
	usedBy := map[fieldKey][]string{} // per element, the feature it feeds
	out := &Resolved{}
	byName := map[string]int{}
	for i, f := range p.Features {
		rf := ResolvedFeature{Name: f.Name, Next: -1, Declared: true}
		for j, r := range f.Fields {
			at := fmt.Sprintf("features[%d].fields[%d]", i, j)
			si, ok := streamIdx[r.Stream]
			if !ok {
				return nil, fail(at+".stream", "no stream %q in the session (have %s)", r.Stream, streamList(session, journal.KindSensor))
			}
			s := session.Streams[si]
			if s.Kind != journal.KindSensor {
				return nil, fail(at+".stream", "stream %q is a %s stream; features take sensor fields", r.Stream, s.Kind)
			}
			fi := -1
			for k, fld := range s.Fields {
				if fld.Name == r.Field {
					fi = k
				}
			}
			if fi < 0 {
				var have []string
				for _, fld := range s.Fields {
					have = append(have, fld.Name)
				}
				return nil, fail(at+".field", "stream %q has no field %q (have %s)", r.Stream, r.Field, strings.Join(have, ", "))
			}
			fld := s.Fields[fi]
			n := elems(fld.Shape)
			part := Part{Stream: si, Field: fi, StreamID: s.ID, FieldName: fld.Name, Dtype: fld.Dtype, FieldElems: n, From: 0, To: n}
			if r.Slice != nil {
				if r.Slice[1] > n {
					return nil, fail(at+".slice", "[%d, %d] reaches past the %d elements of %s.%s", r.Slice[0], r.Slice[1], n, s.ID, fld.Name)
				}
				part.From, part.To = r.Slice[0], r.Slice[1]
			}
			key := fieldKey{si, fi}
			if d, ok := droppedField[key]; ok {
				return nil, fail(at, "%s.%s is dropped (drop: %s)", s.ID, fld.Name, d)
			}
			used := usedBy[key]
			if used == nil {
				used = make([]string, n)
				usedBy[key] = used
			}
			for e := part.From; e < part.To; e++ {
				if used[e] != "" {
					return nil, fail(at, "element %d of %s.%s already feeds feature %s", e, s.ID, fld.Name, used[e])
				}
				used[e] = f.Name
			}
			rf.Parts = append(rf.Parts, part)
			for e := part.From; e < part.To; e++ {
				rf.Names = append(rf.Names, declaredName(s.ID, fld, e, n))
			}
			rf.Width += part.Elems()
		}
		byName[f.Name] = i
		out.Features = append(out.Features, rf)
	}
	for i, f := range p.Features {
		rf := &out.Features[i]
		if f.Next != "" {
			src := byName[f.Next] // Validate checked it exists and has fields
			rf.Next, rf.Width = src, out.Features[src].Width
			rf.Names = append([]string(nil), out.Features[src].Names...)
		}
		if len(f.Names) > 0 {
			if len(f.Names) != rf.Width {
				return nil, fail(fmt.Sprintf("features[%d].names", i), "%d names for the %d dimensions of %s", len(f.Names), rf.Width, f.Name)
			}
			rf.Names = append([]string(nil), f.Names...)
		}
	}
	for si, s := range session.Streams {
		if s.Kind != journal.KindSensor || dropped[s.ID] {
			continue
		}
		for fi, fld := range s.Fields {
			if usedBy[fieldKey{si, fi}] != nil || droppedField[fieldKey{si, fi}] != "" {
				continue
			}
			name := DefaultFeatureName(s.ID, fld.Name)
			if prev, dup := byName[name]; dup {
				return nil, fail(fmt.Sprintf("features[%d].name", prev), "%q is also the default feature of field %s.%s, which no feature names", name, s.ID, fld.Name)
			}
			n := elems(fld.Shape)
			rf := ResolvedFeature{Name: name, Next: -1, Width: n, Parts: []Part{{
				Stream: si, Field: fi, StreamID: s.ID, FieldName: fld.Name, Dtype: fld.Dtype, FieldElems: n, From: 0, To: n,
			}}}
			if n > 1 {
				for e := 0; e < n; e++ {
					rf.Names = append(rf.Names, elementName(fld, e, n))
				}
			} else if len(fld.Names) == 1 {
				rf.Names = []string{fld.Names[0]}
			}
			out.Features = append(out.Features, rf)
		}
	}
	cameraName := map[string]string{}
	for i, c := range p.Cameras {
		si, ok := streamIdx[c.Stream]
		if !ok || session.Streams[si].Kind != journal.KindVideo {
			return nil, fail(fmt.Sprintf("cameras[%d].stream", i), "no camera stream %q in the session (have %s)", c.Stream, streamList(session, journal.KindVideo))
		}
		cameraName[c.Stream] = c.Name
	}
	for _, s := range session.Streams {
		if s.Kind != journal.KindVideo || dropped[s.ID] {
			continue
		}
		name, ok := cameraName[s.ID]
		if !ok {
			name = s.ID
		}
		out.Cameras = append(out.Cameras, ResolvedCamera{Stream: s.ID, Key: CameraKeyPrefix + name})
	}
	return out, nil
}

func streamList(session journal.Session, kind string) string {
	var ids []string
	for _, s := range session.Streams {
		if kind == "" || s.Kind == kind {
			ids = append(ids, s.ID)
		}
	}
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// elementName labels element e of a field's n-element value in its own
// default feature: the journal's names when it gives one per element,
// otherwise the field name with the element index.
func elementName(f journal.Field, e, n int) string {
	switch {
	case len(f.Names) == n:
		return f.Names[e]
	case n == 1:
		return f.Name
	default:
		return f.Name + "_" + strconv.Itoa(e)
	}
}

// declaredName labels element e of field stream.field inside a profile
// feature, where fields of several streams meet.
func declaredName(stream string, f journal.Field, e, n int) string {
	key := stream + "." + f.Name
	switch {
	case len(f.Names) == n && n > 1:
		return key + "." + f.Names[e]
	case n == 1:
		return key
	default:
		return key + "." + strconv.Itoa(e)
	}
}

func elems(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

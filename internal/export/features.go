package export

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/journal"
)

// FeatureMapping assembles named features from listed sensor fields, e.g.
// "observation.state" from imu.accel and imu.gyro, concatenated in the order
// given. Fields not named by any mapping keep a feature of their own.
type FeatureMapping struct {
	// Name is the feature key, e.g. "observation.state" or "action".
	Name string
	// Fields are "stream.field" references.
	Fields []string
}

// ParseFeatureMapping parses "NAME=stream.field,stream.field".
func ParseFeatureMapping(s string) (FeatureMapping, error) {
	name, list, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.TrimSpace(list) == "" {
		return FeatureMapping{}, fmt.Errorf("feature mapping %q: want NAME=stream.field[,stream.field...]", s)
	}
	m := FeatureMapping{Name: name}
	for _, f := range strings.Split(list, ",") {
		m.Fields = append(m.Fields, strings.TrimSpace(f))
	}
	return m, nil
}

// fieldRef names one field of one sensor stream.
type fieldRef struct {
	stream int // index in SESSION.streams
	field  int // index in the stream's fields
	elems  int // elements per value
	dtype  journal.Dtype
}

// rowFeature is one data feature of the shard and where its values come
// from: one field, or several concatenated.
type rowFeature struct {
	shard.Feature
	parts []fieldRef
}

// featureName is the default key of a sensor field's feature.
func featureName(stream, field string) string {
	return "observation." + stream + "." + field
}

// sensorFeatures derives the shard's data features from the session's sensor
// streams (docs/export-semantics.md, "Sensor values"): one feature per field
// named observation.<stream>.<field>, or the mapped features first and then
// every field no mapping uses. float64 is written as float32 unless keepFloat64.
// Multi-dimensional shapes are flattened to a vector in row-major order.
func sensorFeatures(session journal.Session, mappings []FeatureMapping, keepFloat64 bool) ([]rowFeature, error) {
	type fieldInfo struct {
		ref   fieldRef
		field journal.Field
	}
	byName := map[string]fieldInfo{}
	var order []string
	for si, s := range session.Streams {
		if s.Kind != journal.KindSensor {
			continue
		}
		for fi, f := range s.Fields {
			key := s.ID + "." + f.Name
			byName[key] = fieldInfo{ref: fieldRef{stream: si, field: fi, elems: elems(f.Shape), dtype: f.Dtype}, field: f}
			order = append(order, key)
		}
	}
	outDtype := func(d journal.Dtype) lerobot.Dtype {
		if d == journal.DtypeFloat64 && !keepFloat64 {
			return lerobot.Float32
		}
		return lerobot.FromJournal(d)
	}
	used := map[string]string{}
	var out []rowFeature
	seen := map[string]bool{}
	for _, m := range mappings {
		if seen[m.Name] {
			return nil, fmt.Errorf("feature mapping: %q named twice", m.Name)
		}
		seen[m.Name] = true
		rf := rowFeature{Feature: shard.Feature{Name: m.Name, Dtype: lerobot.Float32}}
		var allSame journal.Dtype
		for i, key := range m.Fields {
			info, ok := byName[key]
			if !ok {
				return nil, fmt.Errorf("feature mapping %s: no sensor field %q in the session (have %s)", m.Name, key, strings.Join(order, ", "))
			}
			if prev, dup := used[key]; dup {
				return nil, fmt.Errorf("feature mapping %s: field %q already used by %s", m.Name, key, prev)
			}
			used[key] = m.Name
			rf.parts = append(rf.parts, info.ref)
			for e := 0; e < info.ref.elems; e++ {
				rf.Names = append(rf.Names, mappedName(key, info.field, e, info.ref.elems))
			}
			if i == 0 {
				allSame = info.field.Dtype
			} else if allSame != info.field.Dtype {
				allSame = ""
			}
		}
		// A mapping of fields that share a dtype keeps it; mixed ones are
		// written as float32, LeRobot's usual type for state and action.
		if allSame != "" {
			rf.Dtype = outDtype(allSame)
		}
		rf.Shape = []int{len(rf.Names)}
		out = append(out, rf)
	}
	for _, key := range order {
		if _, ok := used[key]; ok {
			continue
		}
		info := byName[key]
		s := session.Streams[info.ref.stream]
		name := featureName(s.ID, info.field.Name)
		if seen[name] {
			return nil, fmt.Errorf("feature %q is both mapped and a default feature name", name)
		}
		rf := rowFeature{Feature: shard.Feature{Name: name, Dtype: outDtype(info.field.Dtype), Shape: []int{info.ref.elems}}, parts: []fieldRef{info.ref}}
		if info.ref.elems > 1 {
			for e := 0; e < info.ref.elems; e++ {
				rf.Names = append(rf.Names, elementName(info.field, e, info.ref.elems))
			}
		} else if len(info.field.Names) == 1 {
			rf.Names = []string{info.field.Names[0]}
		}
		out = append(out, rf)
	}
	return out, nil
}

// elementName labels element e of a field's n-element value in its own
// feature: the journal's names when it gives one per element, otherwise the
// field name with the element index.
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

// mappedName labels element e of field key ("stream.field") inside a mapped
// feature, where fields of several streams meet.
func mappedName(key string, f journal.Field, e, n int) string {
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

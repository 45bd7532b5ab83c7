package export

import (
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/profile"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/journal"
)

// fieldRef names the elements of one sensor field that feed a feature.
type fieldRef struct {
	stream     int // index in SESSION.streams
	field      int // index in the stream's fields
	fieldElems int // elements per value of the whole field
	from       int // first element taken
	elems      int // elements taken
	dtype      journal.Dtype
}

// rowFeature is one data feature of the shard and where its values come
// from: one field, several concatenated, or (next >= 0) the next frame of
// another feature.
type rowFeature struct {
	shard.Feature
	parts []fieldRef
	next  int // index in the feature list of the source of a derived feature; -1 otherwise
}

// sensorFeatures derives the shard's data features from a profile resolved
// against the session (docs/export-semantics.md, "Sensor values"; package
// profile says which features there are and their names). A feature of
// fields that share a dtype keeps it; mixed ones are written as float32,
// LeRobot's usual type for state and action. float64 is written as float32
// unless keepFloat64. A derived feature takes its source's dtype.
// Multi-dimensional shapes are flattened to a vector in row-major order.
func sensorFeatures(res *profile.Resolved, keepFloat64 bool) []rowFeature {
	outDtype := func(d journal.Dtype) lerobot.Dtype {
		if d == journal.DtypeFloat64 && !keepFloat64 {
			return lerobot.Float32
		}
		return lerobot.FromJournal(d)
	}
	out := make([]rowFeature, len(res.Features))
	for i, f := range res.Features {
		rf := rowFeature{Feature: shard.Feature{Name: f.Name, Dtype: lerobot.Float32, Shape: []int{f.Width}, Names: f.Names}, next: f.Next}
		var same journal.Dtype
		for k, p := range f.Parts {
			rf.parts = append(rf.parts, fieldRef{stream: p.Stream, field: p.Field, fieldElems: p.FieldElems, from: p.From, elems: p.Elems(), dtype: p.Dtype})
			if k == 0 {
				same = p.Dtype
			} else if same != p.Dtype {
				same = ""
			}
		}
		if same != "" {
			rf.Dtype = outDtype(same)
		}
		out[i] = rf
	}
	for i := range out {
		if n := out[i].next; n >= 0 {
			out[i].Dtype = out[n].Dtype
		}
	}
	return out
}

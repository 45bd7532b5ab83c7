package shard

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
)

// Feature describes one LeRobot feature as meta/info.json lists it.
type Feature struct {
	// Name is the feature key, e.g. "observation.state". It must not contain
	// "/" (LeRobot's flatten separator for episode stats columns).
	Name string
	// Dtype is a numeric dtype, lerobot.String, or lerobot.Video (no data
	// column: the frames live in mp4 files under videos/).
	Dtype lerobot.Dtype
	// Shape is [1] for a scalar column, [n] for a vector column of n
	// elements, and [height, width, channels] for a video feature.
	Shape []int
	// Names labels the vector elements (len(Names) == Shape[0]) or, for a
	// video, the axes ("height", "width", "channels"). nil is written as null.
	Names []string
	// Info is the "info" block of a video feature (probe and encoder
	// settings, in LeRobot's key order). Ignored for other dtypes.
	Info JSONObject
}

// defaultFeatures are lerobot.DefaultFeatures as scalar features: they
// follow the caller's features in info.json and in every data file.
var defaultFeatures = func() []Feature {
	out := make([]Feature, len(lerobot.DefaultFeatures))
	for i, d := range lerobot.DefaultFeatures {
		out[i] = Feature{Name: d.Name, Dtype: d.Dtype, Shape: []int{1}}
	}
	return out
}()

// isDefaultName reports whether name is one of LeRobot's default columns.
func isDefaultName(name string) bool { return lerobot.IsDefaultFeature(name) }

// width is the number of values one frame holds for f (Shape[0]).
func (f Feature) width() int { return f.Shape[0] }

// isVector reports whether f is stored as a fixed-size list.
func (f Feature) isVector() bool { return f.Dtype != lerobot.Video && f.Shape[0] != 1 }

// hasStats reports whether LeRobot computes statistics for f.
func (f Feature) hasStats() bool { return f.Dtype != lerobot.String }

// validateFeatures checks caller features: unique names, no "/", no clash
// with the default columns, supported dtypes and shapes.
func validateFeatures(features []Feature) error {
	seen := make(map[string]bool, len(features))
	for i, f := range features {
		where := fmt.Sprintf("features[%d] %q", i, f.Name)
		switch {
		case f.Name == "":
			return fmt.Errorf("features[%d]: empty name", i)
		case strings.Contains(f.Name, "/"):
			return fmt.Errorf("%s: a feature name must not contain '/'", where)
		case isDefaultName(f.Name):
			return fmt.Errorf("%s: name is reserved for a default column", where)
		case seen[f.Name]:
			return fmt.Errorf("%s: duplicate name", where)
		}
		seen[f.Name] = true
		switch {
		case f.Dtype == lerobot.Video:
			if len(f.Shape) != 3 || f.Shape[0] <= 0 || f.Shape[1] <= 0 || f.Shape[2] <= 0 {
				return fmt.Errorf("%s: a video shape must be [height, width, channels], got %v", where, f.Shape)
			}
			continue
		case f.Dtype.Numeric(), f.Dtype == lerobot.String:
		default:
			return fmt.Errorf("%s: unsupported dtype %q", where, f.Dtype)
		}
		if len(f.Shape) != 1 || f.Shape[0] <= 0 {
			return fmt.Errorf("%s: shape must be [n] with n >= 1, got %v", where, f.Shape)
		}
		if f.Dtype == lerobot.String && f.Shape[0] != 1 {
			return fmt.Errorf("%s: a string feature must have shape [1]", where)
		}
		if f.Names != nil && len(f.Names) != f.Shape[0] {
			return fmt.Errorf("%s: %d names for shape %v", where, len(f.Names), f.Shape)
		}
	}
	return nil
}

// arrowPrimitive is the Arrow type LeRobot (via datasets.Value) writes for
// a dtype (the dtype table's).
func arrowPrimitive(dtype lerobot.Dtype) arrow.DataType {
	if t := dtype.ArrowType(); t != nil {
		return t
	}
	panic("shard: no Arrow type for dtype " + string(dtype))
}

// arrowField is the Arrow field of a data column: the primitive for shape
// [1], fixed_size_list<item: T>[n] for shape [n]. Fields are not nullable
// because the Parquet columns are REQUIRED.
func arrowField(f Feature) arrow.Field {
	t := arrowPrimitive(f.Dtype)
	if f.isVector() {
		t = arrow.FixedSizeListOfField(int32(f.width()), arrow.Field{Name: "item", Type: t, Nullable: false})
	}
	return arrow.Field{Name: f.Name, Type: t, Nullable: false}
}

// hfFeatureJSON is the datasets feature of f as Features.to_dict() writes it
// into the "huggingface" schema metadata: Value for a scalar, List with a
// length for a fixed-size vector (datasets 4.x).
func hfFeatureJSON(f Feature) JSONObject {
	value := JSONObject{{"dtype", string(f.Dtype)}, {"_type", "Value"}}
	if !f.isVector() {
		return value
	}
	return JSONObject{{"feature", value}, {"length", f.width()}, {"_type", "List"}}
}

// huggingfaceMetadata is the value of the "huggingface" key-value metadata
// of a data file: json.dumps({"info": {"features": ...}}) with Python's
// default separators and ensure_ascii.
func huggingfaceMetadata(columns []Feature) (string, error) {
	feats := make(JSONObject, len(columns))
	for i, f := range columns {
		feats[i] = JSONField{f.Name, hfFeatureJSON(f)}
	}
	b, err := marshalPyJSON(JSONObject{{"info", JSONObject{{"features", feats}}}}, 0, true)
	return string(b), err
}

// infoFeatureJSON is the entry of f in meta/info.json "features".
func infoFeatureJSON(f Feature) JSONObject {
	shape := make([]int, len(f.Shape))
	copy(shape, f.Shape)
	var names any
	if f.Names != nil {
		names = f.Names
	}
	o := JSONObject{{"dtype", string(f.Dtype)}, {"shape", shape}, {"names", names}}
	if f.Dtype == lerobot.Video && f.Info != nil {
		o = append(o, JSONField{"info", f.Info})
	}
	return o
}

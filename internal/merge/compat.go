package merge

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/shard"
)

// ErrMismatch marks sources that cannot be merged: the error lists every
// difference, source by source.
var ErrMismatch = errors.New("merge: the sources differ")

// encoderInfoKeys are the video info keys that describe how a file was
// encoded rather than what it holds (LeRobot's VIDEO_ENCODER_INFO_KEYS):
// they may differ between sources and become null in the merged info.
var encoderInfoKeys = map[string]bool{
	"video.g": true, "video.crf": true, "video.preset": true, "video.fast_decode": true,
	"video.extra_options": true, "video.video_backend": true,
}

// differences lists how b differs from the reference a.
func differences(a, b *source) []string {
	var out []string
	if a.fps != b.fps {
		out = append(out, fmt.Sprintf("fps %d, want %d", b.fps, a.fps))
	}
	if !reflect.DeepEqual(a.robotType, b.robotType) {
		out = append(out, fmt.Sprintf("robot_type %s, want %s", jsonish(b.robotType), jsonish(a.robotType)))
	}
	byName := map[string]shard.Feature{}
	for _, f := range b.features {
		byName[f.Name] = f
	}
	for _, fa := range a.features {
		fb, ok := byName[fa.Name]
		if !ok {
			out = append(out, fmt.Sprintf("feature %s missing", fa.Name))
			continue
		}
		delete(byName, fa.Name)
		out = append(out, featureDifferences(fa, fb)...)
	}
	extra := make([]string, 0, len(byName))
	for n := range byName {
		extra = append(extra, n)
	}
	sort.Strings(extra)
	for _, n := range extra {
		out = append(out, fmt.Sprintf("feature %s not in the first source", n))
	}
	return out
}

func featureDifferences(a, b shard.Feature) []string {
	var out []string
	p := "feature " + a.Name + ": "
	if a.Dtype != b.Dtype {
		out = append(out, fmt.Sprintf("%sdtype %s, want %s", p, b.Dtype, a.Dtype))
	}
	if !slices.Equal(a.Shape, b.Shape) {
		out = append(out, fmt.Sprintf("%sshape %v, want %v", p, b.Shape, a.Shape))
	}
	if (a.Names == nil) != (b.Names == nil) || !slices.Equal(a.Names, b.Names) {
		out = append(out, fmt.Sprintf("%snames %s, want %s", p, jsonish(b.Names), jsonish(a.Names)))
	}
	if a.Dtype != lerobot.Video || b.Dtype != lerobot.Video {
		return out
	}
	keys := map[string]bool{}
	for _, f := range a.Info {
		keys[f.Key] = true
	}
	for _, f := range b.Info {
		keys[f.Key] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if encoderInfoKeys[k] {
			continue
		}
		va, oka := a.Info.Get(k)
		vb, okb := b.Info.Get(k)
		switch {
		case !okb:
			out = append(out, fmt.Sprintf("%sinfo %s missing, want %s", p, k, jsonish(va)))
		case !oka:
			out = append(out, fmt.Sprintf("%sinfo %s is %s, the first source has none", p, k, jsonish(vb)))
		case !reflect.DeepEqual(va, vb):
			out = append(out, fmt.Sprintf("%sinfo %s %s, want %s", p, k, jsonish(vb), jsonish(va)))
		}
	}
	return out
}

// checkCompatible returns ErrMismatch listing every difference of every
// source from the first one.
func checkCompatible(sources []*source) error {
	var lines []string
	for i, s := range sources[1:] {
		for _, d := range differences(sources[0], s) {
			lines = append(lines, fmt.Sprintf("  source %d (%s): %s", i+1, s.dir, d))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("%w from the first (%s) in fps, robot type or features; nothing was written:\n%s", ErrMismatch, sources[0].dir, strings.Join(lines, "\n"))
}

// mergedFeatures returns the first source's features with every video
// info key that the sources do not all agree on set to null ({} for
// video.extra_options), as LeRobot's merge does.
func mergedFeatures(sources []*source) []shard.Feature {
	out := make([]shard.Feature, len(sources[0].features))
	for i, f := range sources[0].features {
		out[i] = f
		if f.Dtype != lerobot.Video {
			continue
		}
		info := slices.Clone(f.Info)
		for j, kv := range info {
			if !encoderInfoKeys[kv.Key] {
				continue
			}
			for _, s := range sources[1:] {
				other := featureByName(s.features, f.Name)
				v, ok := other.Info.Get(kv.Key)
				if !ok || !reflect.DeepEqual(v, kv.Value) {
					if kv.Key == "video.extra_options" {
						info[j].Value = shard.JSONObject{}
					} else {
						info[j].Value = nil
					}
					break
				}
			}
		}
		out[i].Info = info
	}
	return out
}

func featureByName(fs []shard.Feature, name string) shard.Feature {
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	return shard.Feature{}
}

func jsonish(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("%q", t)
	case []string:
		if t == nil {
			return "null"
		}
		return fmt.Sprintf("%q", t)
	}
	return fmt.Sprintf("%v", v)
}

func sortStrings(s []string) { sort.Strings(s) }

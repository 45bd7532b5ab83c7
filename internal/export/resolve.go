package export

import (
	"strconv"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/descriptor"
	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/internal/profile"
	"github.com/ceres-robotics/ceres-export/internal/settings"
)

// Resolve turns the settings into Options, checking every value: the one
// place that turns words into options. A relative TaskSpec or Profile path
// is taken relative to baseDir ("" for the working directory). Version is
// left for the caller.
func Resolve(s settings.Settings, baseDir string) (Options, error) {
	var o Options
	o.FPS = s.FPS
	o.KeepFloat64 = s.KeepFloat64
	o.RobotType = s.RobotType
	o.Salvage = s.Salvage
	o.NoVideoReuse = s.NoVideoReuse
	o.Video = VideoOptions{Codec: s.Vcodec, CRF: s.CRF, Preset: s.Preset, G: s.G, Concurrency: s.CameraJobs, Threads: s.EncoderThreads}
	if s.Profile != "" {
		p := settings.Path(s.Profile, baseDir)
		prof, err := profile.ReadFile(p)
		if err != nil {
			return o, &settings.SettingError{Setting: "profile", Value: strconv.Quote(s.Profile), Err: err}
		}
		o.Profile = prof
		o.Inputs = append(o.Inputs, p)
	}
	// --map is the one-off form of a profile feature: one mechanism.
	var maps []profile.Feature
	for _, m := range s.Map {
		fm, err := profile.ParseMapping(m)
		if err != nil {
			return o, &settings.SettingError{Setting: "map", Value: strconv.Quote(m), Err: err}
		}
		maps = append(maps, fm)
	}
	if len(maps) > 0 {
		prof, err := profile.WithMappings(o.Profile, maps)
		if err != nil {
			return o, &settings.SettingError{Setting: "map", Value: strconv.Quote(strings.Join(s.Map, " ")), Err: err}
		}
		o.Profile = prof
	}
	for _, v := range s.Strict {
		switch strings.TrimSpace(v) {
		case "backfill":
			o.Strict.BackFill = true
		case "stale":
			o.Strict.Stale = true
		case "gaps":
			o.Strict.Gaps = true
		default:
			return o, &settings.SettingError{Setting: "strict", Value: strconv.Quote(v), Want: "want backfill, stale or gaps"}
		}
	}
	if s.VideoSize != "" {
		w, h, ok := strings.Cut(s.VideoSize, "x")
		wi, err1 := strconv.Atoi(w)
		hi, err2 := strconv.Atoi(h)
		if !ok || err1 != nil || err2 != nil || wi <= 0 || hi <= 0 || wi%2 != 0 || hi%2 != 0 {
			return o, &settings.SettingError{Setting: "video_size", Value: strconv.Quote(s.VideoSize), Want: "want WIDTHxHEIGHT, both even and positive"}
		}
		o.Video.Width, o.Video.Height = wi, hi
	}
	switch s.Vcodec {
	case "", "av1", "h264":
	default:
		return o, &settings.SettingError{Setting: "vcodec", Value: strconv.Quote(s.Vcodec), Want: "want av1 or h264"}
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"fps", s.FPS}, {"crf", s.CRF}, {"g", s.G}, {"camera_jobs", s.CameraJobs}, {"encoder_threads", s.EncoderThreads}} {
		if n.v < 0 {
			return o, &settings.SettingError{Setting: n.name, Value: strconv.Itoa(n.v), Want: "must not be negative"}
		}
	}
	mode, err := privacy.ParseMode(s.Privacy)
	if err != nil {
		return o, &settings.SettingError{Setting: "privacy", Value: strconv.Quote(s.Privacy), Want: "want full or metadata-only"}
	}
	o.Privacy = mode
	o.Descriptors.Org = s.Org
	for _, g := range s.TaskGroup {
		level, key, ok := strings.Cut(g, "=")
		if !ok || strings.TrimSpace(level) == "" || strings.TrimSpace(key) == "" {
			return o, &settings.SettingError{Setting: "task_group", Value: strconv.Quote(g), Want: "want LEVEL=KEY, both non-empty"}
		}
		switch level = strings.TrimSpace(level); level {
		case descriptor.LevelOrg, descriptor.LevelRun, descriptor.LevelTask:
			return o, &settings.SettingError{Setting: "task_group", Value: strconv.Quote(g), Want: "level " + level + " is derived from the specification (use org for the org)"}
		}
		o.Descriptors.Levels = append(o.Descriptors.Levels, descriptor.Group{Level: level, Key: strings.TrimSpace(key)})
	}
	if s.TaskSpec != "" {
		p := settings.Path(s.TaskSpec, baseDir)
		b, err := input.ReadFile(p)
		if err != nil {
			return o, &settings.SettingError{Setting: "task_spec", Value: strconv.Quote(s.TaskSpec), Err: err}
		}
		o.TaskSpec = b
		o.Inputs = append(o.Inputs, p)
	}
	return o, nil
}

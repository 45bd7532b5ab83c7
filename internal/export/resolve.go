package export

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/descriptor"
	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/media"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/internal/profile"
	"github.com/ceres-robotics/ceres-export/internal/settings"
	"github.com/ceres-robotics/ceres-export/internal/shard"
)

// MaxFPS and MaxCameraJobs bound the settings of those names: a larger
// frame rate makes a frame clock no session fills (and overflows the
// planner's arithmetic), more camera jobs than cameras do nothing.
const (
	MaxFPS        = 1000
	MaxCameraJobs = 1024
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
	for _, p := range []struct{ setting, path string }{{"profile", s.Profile}, {"task_spec", s.TaskSpec}} {
		if strings.ContainsRune(p.path, 0) {
			return o, &settings.SettingError{Setting: p.setting, Value: strconv.Quote(p.path), Want: "want a path without NUL bytes"}
		}
	}
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
		if !ok || err1 != nil || err2 != nil || media.CheckSize(wi, hi) != nil {
			return o, &settings.SettingError{Setting: "video_size", Value: strconv.Quote(s.VideoSize), Want: fmt.Sprintf("want WIDTHxHEIGHT, both even, positive and at most %d", media.MaxSide)}
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
		max  int
	}{{"fps", s.FPS, MaxFPS}, {"crf", s.CRF, -1}, {"g", s.G, -1}, {"camera_jobs", s.CameraJobs, MaxCameraJobs}, {"encoder_threads", s.EncoderThreads, -1}} {
		if n.v < 0 {
			return o, &settings.SettingError{Setting: n.name, Value: strconv.Itoa(n.v), Want: "must not be negative"}
		}
		if n.max > 0 && n.v > n.max {
			return o, &settings.SettingError{Setting: n.name, Value: strconv.Itoa(n.v), Want: fmt.Sprintf("want at most %d", n.max)}
		}
	}
	// The encoder's own limits (crf, g, preset, threads), checked here so
	// that a setting the encoder would refuse is a usage error before the
	// export starts, not an encoder failure in the middle of it.
	if enc, err := o.Video.encoder(); err == nil {
		if o.Video.Width > 0 {
			if err := enc.CheckOutputSize(o.Video.Width, o.Video.Height); err != nil {
				return o, &settings.SettingError{Setting: "video_size", Value: strconv.Quote(s.VideoSize), Want: fmt.Sprintf("want at least %dx%d for av1 (or vcodec h264)", media.MinSVTSide, media.MinSVTSide)}
			}
		}
		var oe *media.OptionError
		if err := enc.Validate(); errors.As(err, &oe) {
			setting := map[string]string{"threads": "encoder_threads"}[oe.Option]
			if setting == "" {
				setting = oe.Option
			}
			return o, &settings.SettingError{Setting: setting, Value: oe.Value, Want: oe.Want}
		} else if err != nil {
			return o, err
		}
	}
	mode, err := privacy.ParseMode(s.Privacy)
	if err != nil {
		return o, &settings.SettingError{Setting: "privacy", Value: strconv.Quote(s.Privacy), Want: "want full or metadata-only"}
	}
	o.Privacy = mode
	if s.License != "" {
		if err := shard.CheckLicense(s.License); err != nil {
			return o, &settings.SettingError{Setting: "license", Value: strconv.Quote(s.License), Want: err.Error()}
		}
		o.License = s.License
	}
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

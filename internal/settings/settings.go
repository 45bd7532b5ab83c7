// Package settings holds the export settings as a person writes them: the
// flags of ceres-export export and the "export" objects of a campaign
// manifest, one struct for both. export.Resolve turns them into the
// export's options (every value checked there); this package imports
// nothing that needs FFmpeg, so that the campaign model compiles without
// it.
package settings

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
)

// Settings are the export options as a person writes them: the flags of
// `ceres-export export` and the "export" objects of a campaign manifest.
// Each field's JSON name is the flag's long name with "-" written "_"
// (SettingNames), so that the command line and a manifest can never drift
// apart: both go through export.Resolve, the one place that turns words
// into options. The zero value of each field is the flag's default.
type Settings struct {
	FPS            int      `json:"fps,omitempty"`
	Profile        string   `json:"profile,omitempty"`
	Map            []string `json:"map,omitempty"`
	KeepFloat64    bool     `json:"keep_float64,omitempty"`
	RobotType      string   `json:"robot_type,omitempty"`
	Salvage        bool     `json:"salvage,omitempty"`
	Strict         []string `json:"strict,omitempty"`
	TaskSpec       string   `json:"task_spec,omitempty"`
	NoVideoReuse   bool     `json:"no_video_reuse,omitempty"`
	Vcodec         string   `json:"vcodec,omitempty"`
	CRF            int      `json:"crf,omitempty"`
	Preset         string   `json:"preset,omitempty"`
	G              int      `json:"g,omitempty"`
	VideoSize      string   `json:"video_size,omitempty"`
	CameraJobs     int      `json:"camera_jobs,omitempty"`
	EncoderThreads int      `json:"encoder_threads,omitempty"`
	Org            string   `json:"org,omitempty"`
	TaskGroup      []string `json:"task_group,omitempty"`
	// Privacy is "full" (or "") or "metadata-only". Its salt is no setting:
	// settings are recorded (campaign plans and attempt records), a salt
	// never is.
	Privacy string `json:"privacy,omitempty"`
	// NoReport leaves out the session page; export.Resolve cannot set the
	// page itself (the report package sits above export), callers do.
	NoReport bool `json:"no_report,omitempty"`
	// License is the dataset card's licence, a Hugging Face Hub licence id
	// (shard.Licenses); "" writes the card without one. A campaign gives
	// it campaign-wide in its defaults, as every export option.
	License string `json:"license,omitempty"`
}

// SettingError is a setting whose value export.Resolve cannot use. Setting is the
// JSON name ("video_size"); the command line shows it as its flag.
type SettingError struct {
	Setting string
	Value   string
	Want    string
	Err     error // the cause, when there is one (a task_spec that cannot be read)
}

func (e *SettingError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s %s: %v", e.Setting, e.Value, e.Err)
	}
	return fmt.Sprintf("%s %s: %s", e.Setting, e.Value, e.Want)
}

func (e *SettingError) Unwrap() error { return e.Err }

// AsFlag names the setting of a *SettingError in err by its flag
// ("--video-size"), as the command line shows it; any other error is
// returned as it is.
func AsFlag(err error) error {
	var se *SettingError
	if errors.As(err, &se) {
		c := *se
		c.Setting = "--" + FlagName(se.Setting)
		return &c
	}
	return err
}

// Path is the file p of a setting (profile, task_spec) as the process
// opens it: relative to baseDir ("" for the working directory) unless
// absolute.
func Path(p, baseDir string) string {
	if baseDir != "" && !filepath.IsAbs(p) {
		return filepath.Join(baseDir, p)
	}
	return p
}

// Files are the files the settings name (the profile, a corrected
// specification), as Path opens them.
func (s Settings) Files(baseDir string) []string {
	var out []string
	for _, p := range []string{s.Profile, s.TaskSpec} {
		if p != "" {
			out = append(out, Path(p, baseDir))
		}
	}
	return out
}

// FlagName is the command-line flag of a setting's JSON name.
func FlagName(setting string) string { return strings.ReplaceAll(setting, "_", "-") }

// SettingNames lists the JSON names of Settings' fields in field order.
func SettingNames() []string {
	t := reflect.TypeFor[Settings]()
	names := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}

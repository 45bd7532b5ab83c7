package export

import (
	"errors"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/settings"
)

// A setting the encoder or the planner would refuse
// mid-export is refused by Resolve, before anything runs, naming the
// setting: the one check for flags and manifests alike.
func TestResolveRefusesWhatTheEncoderWould(t *testing.T) {
	for _, c := range []struct {
		s       settings.Settings
		setting string
		say     string
	}{
		{settings.Settings{FPS: 4611686018427387904}, "fps", "at most 1000"},
		{settings.Settings{FPS: 1001}, "fps", "at most 1000"},
		{settings.Settings{CRF: 1000}, "crf", "0 to 63 for libsvtav1"},
		{settings.Settings{CRF: 64}, "crf", "0 to 63"},
		{settings.Settings{Vcodec: "h264", CRF: 52}, "crf", "0 to 51 for libx264"},
		{settings.Settings{G: 2147483648}, "g", "1 to 100000"},
		{settings.Settings{Preset: "nope"}, "preset", "0 (slowest) to 13"},
		{settings.Settings{Preset: "14"}, "preset", "0 (slowest) to 13"},
		{settings.Settings{Preset: "-1"}, "preset", "0 (slowest) to 13"},
		{settings.Settings{Vcodec: "h264", Preset: "12"}, "preset", "libx264's"},
		{settings.Settings{VideoSize: "100000x100000"}, "video_size", "at most 8192"},
		{settings.Settings{VideoSize: "8194x2"}, "video_size", "at most 8192"},
		{settings.Settings{EncoderThreads: 5000}, "encoder_threads", "1024"},
		{settings.Settings{CameraJobs: 99999}, "camera_jobs", "at most 1024"},
		{settings.Settings{Profile: "p\x00.yaml"}, "profile", "NUL"},
		{settings.Settings{TaskSpec: "s\x00.json"}, "task_spec", "NUL"},
	} {
		_, err := Resolve(c.s, "")
		var se *settings.SettingError
		if !errors.As(err, &se) || se.Setting != c.setting || !strings.Contains(err.Error(), c.say) {
			t.Errorf("Resolve(%+v) = %v, want a %s error saying %q", c.s, err, c.setting, c.say)
		}
	}
	// The limits themselves are taken (the encoders open with them at
	// each maximum).
	for _, s := range []settings.Settings{
		{FPS: 1000}, {CRF: 63, G: 100000, Preset: "13"}, {Preset: "0"}, {Vcodec: "h264", CRF: 51, Preset: "placebo"},
		{VideoSize: "8192x8192"}, {EncoderThreads: 1024, CameraJobs: 1024},
	} {
		if _, err := Resolve(s, ""); err != nil {
			t.Errorf("Resolve(%+v): %v", s, err)
		}
	}
}

package export

import (
	"errors"
	"strings"
	"testing"
)

// Issue 23, class 7: a setting the encoder or the planner would refuse
// mid-export is refused by Resolve, before anything runs, naming the
// setting: the one check for flags and manifests alike.
func TestResolveRefusesWhatTheEncoderWould(t *testing.T) {
	for _, c := range []struct {
		s       Settings
		setting string
		say     string
	}{
		{Settings{FPS: 4611686018427387904}, "fps", "at most 1000"},
		{Settings{FPS: 1001}, "fps", "at most 1000"},
		{Settings{CRF: 1000}, "crf", "0 to 63 for libsvtav1"},
		{Settings{CRF: 64}, "crf", "0 to 63"},
		{Settings{Vcodec: "h264", CRF: 52}, "crf", "0 to 51 for libx264"},
		{Settings{G: 2147483648}, "g", "1 to 100000"},
		{Settings{Preset: "nope"}, "preset", "0 (slowest) to 13"},
		{Settings{Preset: "14"}, "preset", "0 (slowest) to 13"},
		{Settings{Preset: "-1"}, "preset", "0 (slowest) to 13"},
		{Settings{Vcodec: "h264", Preset: "12"}, "preset", "libx264's"},
		{Settings{VideoSize: "100000x100000"}, "video_size", "at most 8192"},
		{Settings{VideoSize: "8194x2"}, "video_size", "at most 8192"},
		{Settings{EncoderThreads: 5000}, "encoder_threads", "1024"},
		{Settings{CameraJobs: 99999}, "camera_jobs", "at most 1024"},
		{Settings{Profile: "p\x00.yaml"}, "profile", "NUL"},
		{Settings{TaskSpec: "s\x00.json"}, "task_spec", "NUL"},
	} {
		_, err := c.s.Resolve("")
		var se *SettingError
		if !errors.As(err, &se) || se.Setting != c.setting || !strings.Contains(err.Error(), c.say) {
			t.Errorf("Resolve(%+v) = %v, want a %s error saying %q", c.s, err, c.setting, c.say)
		}
	}
	// The limits themselves are taken (the encoders open with them: see
	// the report of issue 23 for the runs at each maximum).
	for _, s := range []Settings{
		{FPS: 1000}, {CRF: 63, G: 100000, Preset: "13"}, {Preset: "0"}, {Vcodec: "h264", CRF: 51, Preset: "placebo"},
		{VideoSize: "8192x8192"}, {EncoderThreads: 1024, CameraJobs: 1024},
	} {
		if _, err := s.Resolve(""); err != nil {
			t.Errorf("Resolve(%+v): %v", s, err)
		}
	}
}

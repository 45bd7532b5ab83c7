package media

import (
	"fmt"
	"testing"
)

func TestFeatureInfo(t *testing.T) {
	m, err := FeatureInfo(320, 240, 30, EncoderOptions{}, InfoLeRobot044)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"video.height": 240, "video.width": 320, "video.codec": "av1", "video.pix_fmt": "yuv420p",
		"video.is_depth_map": false, "video.fps": 30, "video.channels": 3, "has_audio": false}
	if fmt.Sprint(m) != fmt.Sprint(want) {
		t.Errorf("0.4.4 info %v, want %v", m, want)
	}
	m, err = FeatureInfo(320, 240, 30, EncoderOptions{Codec: EncoderX264, CRF: 23}, InfoWithEncoder)
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]any{"video.height": 240, "video.width": 320, "video.codec": "h264", "video.pix_fmt": "yuv420p",
		"is_depth_map": false, "video.fps": 30, "video.channels": 3, "has_audio": false,
		"video.g": 2, "video.crf": 23, "video.preset": "veryfast", "video.fast_decode": 0,
		"video.video_backend": "pyav", "video.extra_options": map[string]any{}}
	if fmt.Sprint(m) != fmt.Sprint(want) {
		t.Errorf("encoder info %v, want %v", m, want)
	}
	m, _ = FeatureInfo(320, 240, 30, EncoderOptions{}, InfoWithEncoder)
	if m["video.preset"] != 12 {
		t.Errorf("svt preset %v (%T), want int 12", m["video.preset"], m["video.preset"])
	}
}

package plan

import (
	"testing"

	"github.com/ceres-robotics/ceres-export/journal"
)

func TestDefaultFPS(t *testing.T) {
	t.Parallel()
	imu := journal.Stream{ID: "imu", Kind: journal.KindSensor, RateHz: 100}
	mic := journal.Stream{ID: "mic", Kind: journal.KindAudio}
	front := journal.Stream{ID: "front", Kind: journal.KindVideo, FPS: 29.97}
	wrist := journal.Stream{ID: "wrist", Kind: journal.KindVideo, FPS: 15}
	tests := []struct {
		name    string
		streams []journal.Stream
		fps     int
		source  string
		wantErr bool
	}{
		{"first video wins over an earlier sensor", []journal.Stream{imu, mic, front, wrist}, 30, "video stream front", false},
		{"the first video, not the fastest", []journal.Stream{wrist, front}, 15, "video stream wrist", false},
		{"sensor rate without camera", []journal.Stream{mic, imu}, 100, "sensor stream imu", false},
		{"tiny-session: 10 Hz", []journal.Stream{{ID: "imu", Kind: journal.KindSensor, RateHz: 10}}, 10, "sensor stream imu", false},
		{"sensor rate rounds half away from zero", []journal.Stream{{ID: "s", Kind: journal.KindSensor, RateHz: 12.5}}, 13, "sensor stream s", false},
		{"audio only", []journal.Stream{mic}, 0, "", true},
		{"video without fps", []journal.Stream{{ID: "v", Kind: journal.KindVideo}, imu}, 0, "", true},
		{"sub-hertz sensor", []journal.Stream{{ID: "s", Kind: journal.KindSensor, RateHz: 0.4}}, 0, "", true},
		{"no streams", nil, 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fps, source, err := DefaultFPS(tt.streams)
			if (err != nil) != tt.wantErr || fps != tt.fps || source != tt.source {
				t.Errorf("DefaultFPS = %d, %q, %v; want %d, %q, error %v", fps, source, err, tt.fps, tt.source, tt.wantErr)
			}
		})
	}
}

package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestE2ECutShortNote: a complete camera file is never noted as cut short,
// whatever its container keeps after the last packet (WebM Cues, an MP4
// moov at the end), and a file a crash cut short still is.
func TestE2ECutShortNote(t *testing.T) {
	cases := []struct {
		name  string
		synth []string
		cut   bool
	}{
		{"webm live", nil, false},
		{"webm with cues", []string{"--indexed-cameras"}, false},
		{"mp4 fragmented", []string{"--camera-codec", "h264"}, false},
		{"mp4 moov at end", []string{"--camera-codec", "h264", "--indexed-cameras"}, false},
		{"webm cut", []string{"--fault", "cut-camera"}, true},
		{"mp4 fragmented cut", []string{"--camera-codec", "h264", "--fault", "cut-camera"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			session := synthSession(t, append([]string{"--seed", "8", "--cameras", "1", "--height", "64", "--width", "64"}, c.synth...)...)
			out := mustRun(t, "export", session, "-o", filepath.Join(t.TempDir(), "shard"), "--vcodec", "h264")
			if noted := strings.Contains(out, "is cut short"); noted != c.cut {
				t.Fatalf("cut-short note %v, want %v:\n%s", noted, c.cut, out)
			}
		})
	}
}

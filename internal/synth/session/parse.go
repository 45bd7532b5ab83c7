package session

import (
	"fmt"
	"strings"
)

// ParseCodec parses synth --camera-codec.
func ParseCodec(s string) (Codec, error) {
	switch s {
	case "vp8", "vp9", "av1", "h264":
		return Codec(s), nil
	}
	return "", fmt.Errorf("--camera-codec %q: want vp8, vp9, av1 or h264", s)
}

// CheckScene refuses a synth --camera-scene no camera shows.
func CheckScene(s string) error {
	switch s {
	case "bands", "natural", "still":
		return nil
	}
	return fmt.Errorf("--camera-scene %q: want bands, natural or still", s)
}

// ParseFaults parses synth --fault's names: crash, cut-camera, corrupt,
// restart.
func ParseFaults(names []string) (Faults, error) {
	var f Faults
	for _, n := range names {
		switch strings.TrimSpace(n) {
		case "crash":
			f.Crash = true
		case "cut-camera":
			f.CutCamera = true
		case "corrupt":
			f.Corrupt = true
		case "restart":
			f.Restart = true
		default:
			return f, fmt.Errorf("--fault %q: want crash, cut-camera, corrupt or restart", n)
		}
	}
	return f, nil
}

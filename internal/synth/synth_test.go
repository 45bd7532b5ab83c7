package synth

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/synth/session"
)

// camera is a quick session with one encoded camera (the session's own
// tests, internal/synth/session, cover its journal).
func camera(seed uint64) Options {
	return Options{Seed: seed, TimeScale: 0.1, Cameras: 1, Width: 64, Height: 48}
}

func TestWriteDeterministic(t *testing.T) {
	ctx := context.Background()
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		if _, err := Write(ctx, d, camera(3)); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range []string{"journal/000001.cjl", "media/front/000001.webm"} {
		x, err := os.ReadFile(filepath.Join(a, rel))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs with the same seed", rel)
		}
	}
}

func TestFaults(t *testing.T) {
	ctx := context.Background()
	t.Run("cut-camera", func(t *testing.T) {
		dir := t.TempDir()
		o := camera(5)
		o.Faults.CutCamera = true
		o.CameraCodec = session.CodecVP9
		res, err := Write(ctx, dir, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Truncated) != 1 {
			t.Errorf("truncated = %v", res.Truncated)
		}
	})
}

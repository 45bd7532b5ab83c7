package video

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// A synthetic camera file is the same bytes whichever FFmpeg writes it: the
// hashes below are of files FFmpeg 5.1 (Debian 12) wrote through libvpx 1.12
// and x264 0.164, the encoder libraries release/libs.lock pins, and FFmpeg
// 7.1 writes them again (encoderSpec.tickDurations). Another libvpx or x264
// changes them, and this table with it. The H.264 hash is newer: it was
// recorded when synth asked x264 for the same decisions on every CPU
// (x264CPUIndependent). Timing is jittered and one frame dropped, as a
// browser records.
func TestSyntheticBytesStable(t *testing.T) {
	pts := []int64{0, 33_000_000, 70_000_000, 99_000_000, 134_000_000, 166_000_000, 240_000_000,
		268_000_000, 301_000_000, 333_000_000, 367_000_000, 400_000_000}
	for _, tc := range []struct {
		name   string
		opts   SynthOptions
		sha256 string
	}{
		{"vp8", SynthOptions{Codec: SynthVP8}, "9fe03f2c33d3930aa7b290dc02443c862149e142ee7595e62ad53d0465a11430"},
		{"vp9", SynthOptions{Codec: SynthVP9}, "0031b0c5a8feb04b802c8a0cf32d18bd4f8a1b642104146c0560bb0397b8b2b2"},
		{"vp8 at 15 fps", SynthOptions{Codec: SynthVP8, NominalFPS: 15}, "19c64c100d70e5752bf867021d42deb1f9fe76b50d71d96a599f3f3cfd925315"},
		{"h264", SynthOptions{Codec: SynthH264}, "e93900ca8f7e5ae440f634bda072edf522f3c301a41cbce6bda86b16f1981b09"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "camera")
			opts := tc.opts
			opts.Width, opts.Height, opts.PTS, opts.FirstCode = 160, 120, pts, 3
			if _, err := WriteSynthetic(context.Background(), path, opts); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			if got := hex.EncodeToString(sum[:]); got != tc.sha256 {
				t.Errorf("%d bytes, sha256 %s, want %s", len(b), got, tc.sha256)
			}
		})
	}
}

package video

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// DecodeFrames yields exactly the frames DecodeEach yields at the wanted
// indices, pixel for pixel, whatever the distance to the key frame before
// them (GOP 2, as exports write, and GOP 48), for both encoders; a frame
// the file lacks is an error naming it.
func TestDecodeFramesMatchesDecodeEach(t *testing.T) {
	ctx := context.Background()
	const n = 200
	want := []int{0, 1, 5, 40, 41, 99, 150, 198, 199}
	for _, tc := range []struct {
		name  string
		codec string
		g     int
	}{{"x264-g2", EncoderX264, 2}, {"x264-g48", EncoderX264, 48}, {"av1-g2", EncoderSVTAV1, 2}, {"av1-g48", EncoderSVTAV1, 48}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "src.webm")
			pts := make([]int64, n)
			for i := range pts {
				pts[i] = int64(i) * 1_000_000_000 / 30
			}
			if _, err := WriteSynthetic(ctx, src, SynthOptions{Width: 64, Height: 64, PTS: pts, FirstCode: 7}); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out.mp4")
			if _, err := ExportCamera(ctx, []Source{{Path: src}}, []EpisodeTimes{{Start: 0, Length: n}}, ExportOptions{
				FPS: 30, Encoder: EncoderOptions{Codec: tc.codec, G: tc.g},
				FilePath: func(int, int) string { return out },
			}); err != nil {
				t.Fatal(err)
			}
			all := map[int][]byte{}
			if err := DecodeEach(ctx, out, func(f DecodedFrame) error {
				img, err := f.RGBA()
				if err == nil {
					all[f.Index] = bytes.Clone(img.Pix)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			var got []int
			if err := DecodeFrames(ctx, out, want, func(f DecodedFrame) error {
				img, err := f.RGBA()
				if err != nil {
					return err
				}
				if !bytes.Equal(img.Pix, all[f.Index]) {
					t.Errorf("frame %d differs from DecodeEach's", f.Index)
				}
				got = append(got, f.Index)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("frames %v, want %v", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("frames %v, want %v", got, want)
				}
			}
			err := DecodeFrames(ctx, out, []int{3, n + 10}, func(DecodedFrame) error { return nil })
			if err == nil || !strings.Contains(err.Error(), "holds no frame 210") {
				t.Fatalf("a frame past the end: %v", err)
			}
		})
	}
}

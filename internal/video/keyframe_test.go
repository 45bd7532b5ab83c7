package video

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/asticode/go-astiav"
)

// A frame sent to the encoder is no key frame, whichever way its source said
// it was one: a decoded key frame (flagged in FFmpeg 7's frame flags and in
// the deprecated key_frame field, both shared by a reference to it), or a
// frame with key_frame alone set. Clearing the reference leaves the source
// frame as it was.
func TestClearKeyFrame(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "src.webm")
	pts := []int64{0, 1_000_000_000 / 30, 2_000_000_000 / 30}
	if _, err := WriteSynthetic(ctx, src, SynthOptions{Width: 64, Height: 64, PTS: pts}); err != nil {
		t.Fatal(err)
	}
	decoded := astiav.AllocFrame()
	defer decoded.Free()
	if err := DecodeEach(ctx, src, func(f DecodedFrame) error {
		if f.Index == 0 {
			return decoded.Ref(f.Frame)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	marked := astiav.AllocFrame()
	defer marked.Free()
	marked.SetKeyFrame(true)
	for _, tc := range []struct {
		name string
		src  *astiav.Frame
	}{
		{"decoded key frame", decoded},
		{"key_frame field set", marked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !isKeyFrame(tc.src) {
				t.Fatal("source frame is not flagged a key frame")
			}
			f := astiav.AllocFrame()
			defer f.Free()
			if tc.src.Width() > 0 {
				if err := f.Ref(tc.src); err != nil {
					t.Fatal(err)
				}
			} else {
				f.SetKeyFrame(tc.src.KeyFrame())
			}
			if !isKeyFrame(f) {
				t.Fatal("reference is not flagged a key frame before clearKeyFrame")
			}
			clearKeyFrame(f)
			if isKeyFrame(f) {
				t.Errorf("still a key frame after clearKeyFrame (key_frame %v)", f.KeyFrame())
			}
			if !isKeyFrame(tc.src) {
				t.Error("clearKeyFrame of a reference changed its source")
			}
		})
	}
}

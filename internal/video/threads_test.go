package video

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"
)

// decodedPTS decodes path with threads and returns its frames' pts and the
// decoder's first error.
func decodedPTS(t *testing.T, path string, threads int) ([]int64, error) {
	t.Helper()
	d, err := openDecoder(path, threads)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	var pts []int64
	for {
		_, p, err := d.next()
		if errors.Is(err, io.EOF) {
			return pts, d.decodeErr
		}
		if err != nil {
			t.Fatal(err)
		}
		pts = append(pts, p)
	}
}

// A frame-threaded decoder reports a damaged last packet only while it is
// drained, with the frames of the packets before it still queued: they
// are read past the error, so that every thread count yields the frames a
// single thread does. (An H.264 camera file with B-frames cut inside its
// last packets lost two frames with three threads; the export's picks,
// and so its bytes, then depended on the CPUs FFmpeg counted.)
func TestDecoderThreadsYieldTheSameFramesOfACutFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, codec := range []SynthCodec{SynthH264, SynthVP8} {
		for _, cut := range []int64{0, 40, 200, 900} {
			t.Run(fmt.Sprintf("%s cut %d", codec, cut), func(t *testing.T) {
				path := filepath.Join(dir, fmt.Sprintf("%s-%d", codec, cut))
				if _, err := WriteSynthetic(ctx, path, SynthOptions{Codec: codec, Width: 64, Height: 48, PTS: jitteredPTS(7, 0, 60, nil), CutTailBytes: cut}); err != nil {
					t.Fatal(err)
				}
				one, _ := decodedPTS(t, path, 1)
				for _, threads := range []int{2, 3, 5} {
					got, _ := decodedPTS(t, path, threads)
					if !slices.Equal(got, one) {
						t.Errorf("%d threads yield %d frames, one thread %d:\n%v\n%v", threads, len(got), len(one), got, one)
					}
				}
			})
		}
	}
}

package video

import (
	"context"
	"path/filepath"
	"testing"
)

// An H.264 export is the same bytes on every CPU: x264 otherwise picks
// intra-mode search routines by the CPU it finds (SSSE3 and later on amd64),
// whose tie-breaks differ from its C code, which arm64's NEON build matches,
// so the release binaries of the two architectures wrote different videos
// from one session. asm=0 is x264 on its C code alone, what every
// architecture computes.
func TestH264BytesIndependentOfCPU(t *testing.T) {
	ctx := context.Background()
	const frames = 40
	src := synthVP8At30(t, frames)
	encode := func(extra map[string]string) (int, string) {
		out := filepath.Join(t.TempDir(), "out.mp4")
		enc := EncoderOptions{Codec: EncoderX264, Threads: 1, ExtraOptions: extra}
		if _, err := ExportCamera(ctx, []Source{{Path: src, StartT: journalBase}}, []EpisodeTimes{{Times: clockTimes(journalBase, frames, 30)}}, ExportOptions{
			FPS: 30, Encoder: enc, FilePath: func(int, int) string { return out },
		}); err != nil {
			t.Fatal(err)
		}
		_, size, sum := packetDigest(t, out)
		return size, sum
	}
	size, sum := encode(nil)
	cSize, cSum := encode(map[string]string{"x264-params": "asm=0"})
	if sum != cSum {
		t.Errorf("this CPU's x264: %d bytes, sha256 %s; x264's C code: %d bytes, sha256 %s", size, sum, cSize, cSum)
	}
}

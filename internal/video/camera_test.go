package video

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
)

// exportFiles runs ExportCamera (with the stall hook) into a new directory
// and returns the result with the bytes of every file written.
func exportFiles(t *testing.T, cam fixtureCamera, episodes []EpisodeTimes, opts ExportOptions, stall stallHook) (CameraResult, map[string][]byte) {
	t.Helper()
	dir := t.TempDir()
	opts.FilePath = func(c, f int) string { return filepath.Join(dir, fmt.Sprintf("c%d-f%d.mp4", c, f)) }
	res, err := exportCamera(context.Background(), cam.sources(), episodes, opts, stall)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range res.Files {
		b, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(f.Path)] = b
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(res.Files) {
		t.Errorf("%d entries in the output directory, %d files written (parts left behind?)", len(entries), len(res.Files))
	}
	return res, files
}

func sameFiles(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d files, want %d", what, len(got), len(want))
	}
	for name, b := range want {
		if !bytes.Equal(got[name], b) {
			t.Errorf("%s: %s differs (%d bytes, want %d)", what, name, len(got[name]), len(b))
		}
	}
}

// An encoder that stops answering is left behind and its episode encoded
// again by a fresh pass: the files are those of an export where nothing
// hung.
func TestExportCameraRecoversFromHungEncoder(t *testing.T) {
	cam := cameraFixtures(t)[1]
	const fps = 30
	episodes := testEpisodes(fps)
	for _, codec := range []string{EncoderX264, EncoderSVTAV1} {
		t.Run(codec, func(t *testing.T) {
			opts := ExportOptions{FPS: fps, Encoder: EncoderOptions{Codec: codec}}
			want, wantFiles := exportFiles(t, cam, episodes, opts, stallHook{})
			stalled := 0
			stall := stallHook{episode: func(e int) bool {
				if e == 1 && stalled == 0 {
					stalled++
					return true
				}
				return false
			}}
			got, gotFiles := exportFiles(t, cam, episodes, opts, stall)
			if stalled != 1 {
				t.Fatalf("the stall was injected %d times, want 1", stalled)
			}
			sameFiles(t, "after a hung encoder", gotFiles, wantFiles)
			for e := range want.Episodes {
				if got.Episodes[e].Stats != want.Episodes[e].Stats || got.Episodes[e].FirstFrame != want.Episodes[e].FirstFrame {
					t.Errorf("episode %d: %+v, want %+v", e, got.Episodes[e], want.Episodes[e])
				}
			}
		})
	}
}

// An episode encoded while it is recorded (BeginPart, Advance as the
// recording goes, Finish at its end) is the part EncodePart makes once its
// length is known, statistics included; one retried while recorded
// (Abort) leaves the pass where the next episode finds what it would.
func TestPartWriterStreamsAsEncodePart(t *testing.T) {
	cam := cameraFixtures(t)[1]
	const fps = 30
	episodes := []EpisodeTimes{
		{Start: 100_000_000, Length: 40},
		{Start: 1_700_000_000, Length: 25}, // retried while recorded
		{Start: 2_600_000_000, Length: 60},
	}
	dir := t.TempDir()
	opts := ExportOptions{FPS: fps, Encoder: EncoderOptions{Codec: EncoderX264}}
	batch, err := NewCameraEncoder(cam.sources(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer batch.Close()
	stream, err := NewCameraEncoder(cam.sources(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	for e, ep := range episodes {
		if e == 1 {
			w, err := stream.BeginPart(e, ep.Start, filepath.Join(dir, "retried.mp4"))
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Advance(context.Background(), lerobot.FrameTime(ep.Start, 10, fps)); err != nil {
				t.Fatal(err)
			}
			if w.Sent() != 9 {
				t.Errorf("advanced to frame 10's time: %d frames sent, want 9", w.Sent())
			}
			w.Abort()
			if _, err := os.Stat(filepath.Join(dir, "retried.mp4")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("an aborted part stays: %v", err)
			}
			continue
		}
		want, err := batch.EncodePart(context.Background(), e, ep, filepath.Join(dir, fmt.Sprintf("batch-%d.mp4", e)))
		if err != nil {
			t.Fatal(err)
		}
		w, err := stream.BeginPart(e, ep.Start, filepath.Join(dir, fmt.Sprintf("stream-%d.mp4", e)))
		if err != nil {
			t.Fatal(err)
		}
		// The recording reaches the episode a few frames at a time; upto
		// never passes its end.
		end := lerobot.FrameTime(ep.Start, ep.Length, fps)
		for upto := ep.Start; upto < end; upto += 70_000_000 {
			if err := w.Advance(context.Background(), upto); err != nil {
				t.Fatal(err)
			}
		}
		if w.Sent() >= ep.Length {
			t.Fatalf("episode %d: %d frames sent before its end, length %d", e, w.Sent(), ep.Length)
		}
		got, err := w.Finish(context.Background(), ep.Length)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(want.Path)
		b, _ := os.ReadFile(got.Path)
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("episode %d: streamed part differs from the batch part (%d and %d bytes)", e, len(b), len(a))
		}
		if got.Episode.Stats != want.Episode.Stats || got.Episode.SourceFrames != want.Episode.SourceFrames || got.Episode.Gaps != want.Episode.Gaps {
			t.Errorf("episode %d: streamed %+v, batch %+v", e, got.Episode, want.Episode)
		}
	}
	// A part that would start before the frames the pass has left behind.
	if _, err := stream.BeginPart(9, 0, filepath.Join(dir, "behind.mp4")); !errors.Is(err, ErrBehind) {
		t.Errorf("a part behind the pass: %v, want ErrBehind", err)
	}
}

// A stopped export does not wait for an encoder that does not answer: it
// returns at once, leaving the encoder where it is.
func TestExportCameraStopsWhileEncoderHangs(t *testing.T) {
	cam := cameraFixtures(t)[1]
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	opts := ExportOptions{FPS: 30, Encoder: EncoderOptions{Codec: EncoderX264},
		FilePath: func(c, f int) string { return filepath.Join(dir, fmt.Sprintf("c%d-f%d.mp4", c, f)) },
	}
	stall := stallHook{episode: func(e int) bool {
		if e == 1 {
			time.AfterFunc(50*time.Millisecond, cancel)
			return true
		}
		return false
	}, timeout: time.Minute}
	start := time.Now()
	_, err := exportCamera(ctx, cam.sources(), testEpisodes(30), opts, stall)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped while the encoder hangs: %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v to stop", took)
	}
}

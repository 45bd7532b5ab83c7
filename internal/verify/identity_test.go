//go:build cgo

package verify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/synth"
	"github.com/ceres-robotics/ceres-export/internal/video"
	"github.com/ceres-robotics/ceres-export/journal"
)

// Frame identity is proven by content on cameras without a code band: an
// export checked against its own session is sound with nothing left
// unchecked (a still scene too, whose neighbouring frames are alike), and
// checked against a session whose camera start is 17 ms off (half a frame
// at 30 fps: most frames' nearest source frame is the next one) it is not,
// with findings that name the frames.
func TestVerifyFrameIdentityByContent(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		scene    string
		full     bool
		off      int64 // the journal's camera start error, ns
		allFrame bool
		want     string // the finding code; "" for a sound shard
	}{
		{name: "natural, true session", scene: "natural"},
		{name: "natural, every frame", scene: "natural", allFrame: true},
		{name: "natural full-range vp9, true session", scene: "natural", full: true},
		{name: "still, true session", scene: "still", allFrame: true},
		{name: "natural, camera start 17 ms off", scene: "natural", off: 17_000_000, want: "journal.video-content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := synth.Options{Seed: 7, TimeScale: 0.1, Cameras: 1, Width: 128, Height: 96, NoRetries: true, CameraScene: tc.scene, CameraFullRange: tc.full}
			if tc.full {
				opts.CameraCodec = "vp9"
			}
			session := filepath.Join(dir, "session")
			if _, err := synth.Write(ctx, session, opts); err != nil {
				t.Fatal(err)
			}
			shard := filepath.Join(dir, "shard")
			if _, err := export.Export(ctx, session, shard, export.Options{VideoFiles: video.Files{}, Video: export.VideoOptions{Codec: "h264"}}); err != nil {
				t.Fatal(err)
			}
			against := session
			if tc.off != 0 {
				opts.CameraStartError = tc.off
				against = filepath.Join(dir, "wrong-session")
				if _, err := synth.Write(ctx, against, opts); err != nil {
					t.Fatal(err)
				}
			}
			res, err := shardVideo(ctx, shard, Options{Journal: against, AllFrames: tc.allFrame})
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if !res.Sound || len(res.Findings) != 0 {
					t.Fatalf("sound=%v, findings:\n%s", res.Sound, findingLines(res))
				}
				return
			}
			n := 0
			for _, f := range res.Findings {
				if f.Code == tc.want {
					n++
					if !strings.Contains(f.Message, "looks like source frame") || f.Episode == nil || f.Frame == nil {
						t.Errorf("finding names no episode, frame or source frame: %s", f)
					}
				}
			}
			if res.Sound || n == 0 {
				t.Fatalf("sound=%v, %d %s findings; findings:\n%s", res.Sound, n, tc.want, findingLines(res))
			}
			t.Logf("%d %s findings, first: %s", n, tc.want, res.Findings[0])
		})
	}
}

// The level check: an export whose contrast is stretched as full-range
// levels passed as limited range (made from a copy of the camera that
// misstates its range) is NOT SOUND against the session whose camera
// states it, with one journal.video-levels finding for the file.
func TestVerifyCatchesStretchedLevels(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	session := filepath.Join(dir, "session")
	if _, err := synth.Write(ctx, session, synth.Options{Seed: 7, TimeScale: 0.1, Cameras: 1, Width: 128, Height: 96, NoRetries: true,
		CameraScene: "natural", CameraCodec: "vp9", CameraFullRange: true}); err != nil {
		t.Fatal(err)
	}
	shard := filepath.Join(dir, "shard")
	if _, err := export.Export(ctx, session, shard, export.Options{VideoFiles: video.Files{}, Video: export.VideoOptions{Codec: "h264"}}); err != nil {
		t.Fatal(err)
	}
	// The same camera, its stream saying limited range.
	j, err := journal.Open(ctx, session, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sources []video.Source
	for _, m := range j.Media {
		src := filepath.Join(session, filepath.FromSlash(m.Path))
		var pts []int64
		if err := video.DecodeEach(ctx, src, func(f video.DecodedFrame) error {
			pts = append(pts, f.PTS*1_000_000) // WebM: milliseconds
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		mislabelled := filepath.Join(dir, filepath.Base(m.Path))
		if _, err := video.WriteSynthetic(ctx, mislabelled, video.SynthOptions{Codec: video.SynthVP9, Width: 128, Height: 96, PTS: pts,
			Scene: video.SceneNatural, FullRange: true, MislabelRange: true}); err != nil {
			t.Fatal(err)
		}
		sources = append(sources, video.Source{Path: mislabelled, StartT: m.StartT})
	}
	out := filepath.Join(dir, "out.mp4")
	if _, err := video.ExportCamera(ctx, sources, frameTimes(shardWindows(t, shard), 30, nil), video.ExportOptions{
		FPS: 30, Encoder: video.EncoderOptions{Codec: video.EncoderX264}, FilePath: func(int, int) string { return out },
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(out, filepath.Join(shard, videoFile0)); err != nil {
		t.Fatal(err)
	}
	res, err := shardVideo(ctx, shard, Options{Journal: session})
	if err != nil {
		t.Fatal(err)
	}
	var levels []Finding
	for _, f := range res.Findings {
		if f.Code == "journal.video-levels" {
			levels = append(levels, f)
		}
	}
	if res.Sound || len(levels) != 1 || !strings.Contains(levels[0].Message, "1.1") {
		t.Fatalf("sound=%v, want one journal.video-levels finding of a gain about 1.16; findings:\n%s", res.Sound, findingLines(res))
	}
	t.Log(levels[0])
}

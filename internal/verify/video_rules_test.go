package verify

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/media"
)

// fakeVideo is a FrameDecoder of files made up in the test: the video
// rules run on what it says, without FFmpeg (the make check lane).
type fakeVideo struct {
	probe    media.ProbeInfo
	probeErr error
	pts      []int64 // one frame per entry, in presentation order
	tail     error   // what decoding ends with after the frames
}

func (f fakeVideo) Probe(string) (media.ProbeInfo, error) { return f.probe, f.probeErr }

func (f fakeVideo) DecodeEach(ctx context.Context, _ string, fn func(media.Frame) error) error {
	for i, pts := range f.pts {
		fr := media.Frame{Index: i, PTS: pts, TimeBaseNum: f.probe.TimeBase.Num, TimeBaseDen: f.probe.TimeBase.Den}
		if err := fn(fr); err != nil {
			return err
		}
	}
	return f.tail
}

// TestVideoRulesWithoutFFmpeg: each rule of the video check reports its
// finding from what the decoder says of a file, and a file that keeps
// every rule reports none.
func TestVideoRulesWithoutFFmpeg(t *testing.T) {
	const rel = "videos/observation.images.front/chunk-000/file-000.mp4"
	good := func() fakeVideo {
		return fakeVideo{
			probe: media.ProbeInfo{Codec: "h264", PixFmt: "yuv420p", Width: 64, Height: 48,
				AvgFrameRate: media.Rational{Num: 30, Den: 1}, TimeBase: media.Rational{Num: 1, Den: 15360},
				Frames: 3, StreamDuration: 3 * 512, PTSMonotone: true, DTSMonotone: true, Streams: 1},
			pts: []int64{0, 512, 1024},
		}
	}
	for _, tc := range []struct {
		name   string
		change func(*fakeVideo)
		want   string // "" for no finding at all
	}{
		{"sound", func(*fakeVideo) {}, ""},
		{"unreadable", func(f *fakeVideo) { f.probeErr = errors.New("moov atom not found") }, "video.unreadable"},
		{"audio stream", func(f *fakeVideo) { f.probe.HasAudio, f.probe.Streams = true, 2 }, "video.audio"},
		{"odd size", func(f *fakeVideo) { f.probe.Width = 63 }, "video.dimensions"},
		{"wrong rate", func(f *fakeVideo) { f.probe.AvgFrameRate = media.Rational{Num: 25, Den: 1} }, "video.fps"},
		{"reordered", func(f *fakeVideo) { f.probe.PTSMonotone = false }, "video.reordered"},
		{"duration", func(f *fakeVideo) { f.probe.StreamDuration = 4 * 512 }, "video.duration"},
		{"cut short", func(f *fakeVideo) { f.probe.ReadErr = errors.New("EOF inside a packet") }, "video.unreadable"},
		{"other codec", func(f *fakeVideo) { f.probe.Codec = "av1" }, "video.info"},
		{"off the grid", func(f *fakeVideo) { f.pts[1] = 600 }, "video.frame-pts"},
		{"decode stops", func(f *fakeVideo) { f.pts, f.tail = f.pts[:2], errors.New("invalid NAL") }, "video.decode"},
		{"frame missing", func(f *fakeVideo) { f.pts = f.pts[:2] }, "video.frame-count"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dec := good()
			dec.pts = slices.Clone(dec.pts)
			tc.change(&dec)
			c := &checker{ctx: context.Background(), dir: t.TempDir(), opts: Options{Video: dec, MaxPerCode: 20},
				res: &Result{}, counts: map[string]int{}, info: &shardInfo{FPS: 30}, videos: map[string]*videoFile{}}
			v := &feature{Name: "observation.images.front", Dtype: lerobot.Video, Shape: []int{48, 64, 3},
				Info: map[string]any{"video.codec": "h264", "video.pix_fmt": "yuv420p", "video.width": 64,
					"video.height": 48, "video.fps": 30, "has_audio": false}}
			if err := c.checkVideoFile(v, rel, 3); err != nil {
				t.Fatal(err)
			}
			codes := c.res.Codes()
			if tc.want == "" && len(codes) > 0 || tc.want != "" && !slices.Contains(codes, tc.want) {
				t.Fatalf("findings %v, want %q: %+v", codes, tc.want, c.res.Findings)
			}
		})
	}
}

// TestFullVerifyNeedsAVideoDecoder: a full verify without a decoder is
// an error, not a shard passed with its videos unchecked.
func TestFullVerifyNeedsAVideoDecoder(t *testing.T) {
	if _, err := Shard(context.Background(), t.TempDir(), Options{}); err == nil {
		t.Fatal("Shard without Options.Video ran")
	}
}

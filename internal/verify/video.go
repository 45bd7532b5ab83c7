package verify

import (
	"fmt"
	"math"
	"math/big"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/media"
)

// videoFile is what the video check learnt of one mp4.
type videoFile struct {
	Path   string
	Frames int
	Codes  []int64 // code band value per frame in presentation order, -1 where unreadable
	// Prints are the frames compared by content (identitySampled), at
	// media.PrintSize, by frame of the file; with --journal only.
	Prints map[int64]media.Planes
}

// checkVideo probes and decodes every video file the episodes point to.
func (c *checker) checkVideo() error {
	if c.info == nil || c.episodes == nil {
		return nil
	}
	c.videos = map[string]*videoFile{}
	for _, v := range c.info.videoFeatures() {
		want := map[string]int64{}
		var order []string
		for _, er := range c.episodes.Rows {
			ref := er.Videos[v.Name]
			p := videoPath(v.Name, ref.Chunk, ref.File)
			if _, ok := want[p]; !ok {
				order = append(order, p)
			}
			want[p] += er.Length
		}
		prefix := "videos/" + v.Name + "/"
		for _, f := range c.files {
			if strings.HasPrefix(f, prefix) && videoFileRe.MatchString(f) {
				if _, ok := want[f]; !ok {
					c.warnf("video.unreferenced", f, loc{}, "no episode points to this file")
				}
			}
		}
		sort.Strings(order)
		for _, p := range order {
			if !c.hasFile(p) {
				continue // reported by the metadata check
			}
			if err := c.checkVideoFile(v, p, want[p]); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkVideoFile checks one mp4 against the feature's info block and the
// frames its episodes need.
func (c *checker) checkVideoFile(v *feature, rel string, wantFrames int64) error {
	path := filepath.Join(c.dir, rel)
	p, err := c.opts.Video.Probe(path)
	if err != nil {
		c.errorf("video.unreadable", rel, loc{}, "cannot open: %v", err)
		return nil
	}
	fps := c.info.FPS
	if p.HasAudio {
		c.errorf("video.audio", rel, loc{}, "the file has an audio stream (%d streams); LeRobot's merge adds durations that audio can stretch", p.Streams)
	}
	if p.Width%2 != 0 || p.Height%2 != 0 {
		c.errorf("video.dimensions", rel, loc{}, "%dx%d: yuv420p needs even width and height", p.Width, p.Height)
	}
	if p.AvgFrameRate.Num*1 != fps*p.AvgFrameRate.Den || p.AvgFrameRate.Den == 0 {
		c.errorf("video.fps", rel, loc{}, "average frame rate is %d/%d, want %d: LeRobot's torchcodec maps time to frames with it", p.AvgFrameRate.Num, p.AvgFrameRate.Den, fps)
	}
	if !p.PTSMonotone {
		c.errorf("video.reordered", rel, loc{}, "packet pts do not increase in file order (B-frames or reordering); LeRobot needs frames whose pts are their presentation times from 0")
	}
	// LeRobot's merge offsets the next file by this duration
	// (get_video_duration_in_s), so it must be frames/fps exactly.
	if p.StreamDuration > 0 && p.TimeBase.Den > 0 && int64(fps)*p.StreamDuration*int64(p.TimeBase.Num) != int64(p.Frames)*int64(p.TimeBase.Den) {
		c.errorf("video.duration", rel, loc{}, "stream duration is %d × %d/%d s, want %d frames / %d fps", p.StreamDuration, p.TimeBase.Num, p.TimeBase.Den, p.Frames, fps)
	}
	if p.ReadErr != nil {
		c.errorf("video.unreadable", rel, loc{}, "the file ends with a read error: %v", p.ReadErr)
	}
	c.checkVideoInfo(v, rel, p)

	vf := &videoFile{Path: rel, Prints: map[int64]media.Planes{}}
	sampled := map[int64]bool{}
	if c.opts.Journal != "" && c.episodes != nil {
		for _, er := range c.episodes.Rows {
			ref := er.Videos[v.Name]
			if videoPath(v.Name, ref.Chunk, ref.File) != rel {
				continue
			}
			first := int64(math.Round(ref.From * float64(fps)))
			for k := range er.Length {
				if c.identitySampled(k, er.Length) {
					sampled[first+k] = true
				}
			}
		}
	}
	pw, ph := media.PrintSize(p.Width, p.Height)
	step := big.NewRat(1, int64(fps))
	reportedPTS := false
	err = c.opts.Video.DecodeEach(c.ctx, path, func(f media.Frame) error {
		want := new(big.Rat).Mul(step, big.NewRat(int64(f.Index), 1))
		if got := f.Seconds(); got.Cmp(want) != 0 && !reportedPTS {
			reportedPTS = true
			gf, _ := got.Float64()
			wf, _ := want.Float64()
			c.errorf("video.frame-pts", rel, frameLoc(int64(f.Index)), "frame %d is at %.6f s (pts %d, time base %d/%d), want %.6f s = %d/%d: frames must lie on the 1/fps grid from 0", f.Index, gf, f.PTS, f.TimeBaseNum, f.TimeBaseDen, wf, f.Index, fps)
		}
		code := int64(-1)
		if c.opts.Journal != "" {
			if x, ok := f.Pixels.Code(); ok {
				code = int64(x)
			}
		}
		if sampled[int64(f.Index)] {
			pr, err := f.Pixels.Planes(pw, ph)
			if err != nil {
				return err
			}
			vf.Prints[int64(f.Index)] = pr
		}
		vf.Codes = append(vf.Codes, code)
		vf.Frames++
		return nil
	})
	if err != nil {
		if cerr := c.ctx.Err(); cerr != nil {
			return cerr
		}
		c.errorf("video.decode", rel, frameLoc(int64(vf.Frames)), "decoding stops after %d frames: %v", vf.Frames, err)
	}
	if int64(vf.Frames) != wantFrames {
		c.errorf("video.frame-count", rel, loc{}, "the file has %d frames, but the episodes pointing to it have %d rows", vf.Frames, wantFrames)
	}
	c.videos[rel] = vf
	return nil
}

// checkVideoInfo compares the feature's info block and shape with the file.
func (c *checker) checkVideoInfo(v *feature, rel string, p media.ProbeInfo) {
	bad := func(key string, got any, want any) {
		c.errorf("video.info", infoPath, loc{}, "features[%q].info[%q] is %s, but %s has %v", v.Name, key, jsonText(got), rel, want)
	}
	num := func(key string) (int, bool) {
		x, ok := v.Info[key]
		if !ok {
			return 0, false
		}
		var n int
		_, err := fmt.Sscan(jsonText(x), &n)
		return n, err == nil
	}
	if v.Info == nil {
		return
	}
	if s, _ := v.Info["video.codec"].(string); s != p.Codec {
		bad("video.codec", v.Info["video.codec"], p.Codec)
	}
	if s, _ := v.Info["video.pix_fmt"].(string); s != p.PixFmt {
		bad("video.pix_fmt", v.Info["video.pix_fmt"], p.PixFmt)
	}
	if n, ok := num("video.width"); !ok || n != p.Width {
		bad("video.width", v.Info["video.width"], p.Width)
	}
	if n, ok := num("video.height"); !ok || n != p.Height {
		bad("video.height", v.Info["video.height"], p.Height)
	}
	if n, ok := num("video.fps"); !ok || n != c.info.FPS {
		bad("video.fps", v.Info["video.fps"], fmt.Sprintf("dataset fps %d", c.info.FPS))
	}
	if h, ok := v.Info["has_audio"].(bool); !ok || h != p.HasAudio {
		bad("has_audio", v.Info["has_audio"], p.HasAudio)
	}
	if len(v.Shape) == 3 && (v.Shape[0] != p.Height || v.Shape[1] != p.Width || v.Shape[2] != 3) {
		c.errorf("video.info", infoPath, loc{}, "features[%q].shape is %v, but %s is %dx%d with 3 channels", v.Name, v.Shape, rel, p.Width, p.Height)
	}
}

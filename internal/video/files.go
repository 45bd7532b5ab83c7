package video

import (
	"context"
	"fmt"

	"github.com/ceres-robotics/ceres-export/internal/media"
)

// Files is FFmpeg behind the small interfaces of the packages that judge
// and arrange video files without cgo: verify's FrameDecoder (describe a
// file, decode its frames) and merge's Video (that, and read a stream's
// signature, join ranges of files by stream copy). The CLI hands it to
// them. The zero value is ready.
type Files struct{}

// Probe is the package's Probe.
func (Files) Probe(path string) (media.ProbeInfo, error) { return Probe(path) }

// StreamSignature is ReadStreamSignature.
func (Files) StreamSignature(path string) (media.StreamSignature, error) {
	return ReadStreamSignature(path)
}

// DecodeEach is the package's DecodeEach, each frame's picture read through
// one Converter for the whole file.
func (Files) DecodeEach(ctx context.Context, path string, fn func(media.Frame) error) error {
	var conv Converter
	defer conv.Close()
	return DecodeEach(ctx, path, func(f DecodedFrame) error {
		return fn(media.Frame{Index: f.Index, PTS: f.PTS, TimeBaseNum: f.TimeBaseNum, TimeBaseDen: f.TimeBaseDen,
			Pixels: framePixels{f: f, conv: &conv}})
	})
}

// framePixels reads a DecodedFrame's picture during its callback.
type framePixels struct {
	f    DecodedFrame
	conv *Converter
}

func (p framePixels) Code() (uint32, bool) { return ReadCode(p.f.Frame) }

func (p framePixels) Planes(w, h int) (media.Planes, error) { return p.conv.Planes(p.f, w, h) }

// Join writes dst, a constant-rate mp4 of frames frames at fps, by stream
// copy of ranges in order (a Joiner; each next source opened while the
// previous one is copied). A range that holds fewer frames than it names
// is an error; on any error nothing is left at dst.
func (Files) Join(ctx context.Context, dst string, fps, frames int, ranges []media.JoinRange) error {
	j, err := NewJoiner(dst, fps, frames)
	if err != nil {
		return err
	}
	for k, r := range ranges {
		if k+1 < len(ranges) {
			j.Prepare(ranges[k+1].Path)
		}
		got, err := j.AppendRange(ctx, r.Path, r.From, r.Frames)
		if err == nil && got.Frames != r.Frames {
			err = fmt.Errorf("join %s: %s holds %d frames from frame %d, want %d", dst, r.Path, got.Frames, r.From, r.Frames)
		}
		if err != nil {
			j.Abort()
			return err
		}
	}
	return j.Close()
}

package video

import (
	"context"
	"fmt"

	"github.com/ceres-robotics/ceres-export/internal/media"
)

// Files is FFmpeg behind the small interfaces of the packages that judge
// and arrange video files without cgo: verify's FrameDecoder (describe a
// file, decode its frames), merge's Video (that, and read a stream's
// signature, join ranges of files by stream copy) and export's Video
// (encode a camera's episodes, at once or part by part while a session
// records). The CLI hands it to them. The zero value is ready.
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

// ExportCamera is the package's ExportCamera.
func (Files) ExportCamera(ctx context.Context, sources []Source, episodes []EpisodeTimes, opts ExportOptions) (CameraResult, error) {
	return ExportCamera(ctx, sources, episodes, opts)
}

// NewCameraEncoder is the package's NewCameraEncoder.
func (Files) NewCameraEncoder(sources []Source, opts ExportOptions) (media.CameraEncoder, error) {
	c, err := NewCameraEncoder(sources, opts)
	if err != nil {
		return nil, err
	}
	return cameraEncoder{c}, nil
}

// PlaceParts is the package's PlaceParts.
func (Files) PlaceParts(ctx context.Context, parts []Part, opts ExportOptions) ([]EpisodeResult, []OutputFileResult, error) {
	return PlaceParts(ctx, parts, opts)
}

// cameraEncoder is a CameraEncoder whose BeginPart answers media's
// PartWriter.
type cameraEncoder struct{ *CameraEncoder }

func (c cameraEncoder) BeginPart(e int, start int64, path string) (media.PartWriter, error) {
	w, err := c.CameraEncoder.BeginPart(e, start, path)
	if err != nil {
		return nil, err
	}
	return w, nil
}

var _ media.CameraEncoder = cameraEncoder{}

package video

import (
	"errors"
	"fmt"

	"github.com/asticode/go-astiav"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/media"
)

// Rational is an exact fraction Num/Den (media's, which the judging
// packages read without cgo).
type Rational = media.Rational

func rationalOf(r astiav.Rational) Rational { return Rational{Num: r.Num(), Den: r.Den()} }

// Probe opens path and reads every packet of it to describe its first video
// stream.
func Probe(path string) (p media.ProbeInfo, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("video: probe: %w", err)
		}
	}()
	fc := astiav.AllocFormatContext()
	if fc == nil {
		return p, fmt.Errorf("%s: alloc format context failed", path)
	}
	defer fc.Free()
	// FFmpeg would block on a FIFO for ever: only regular files.
	if err := input.Check(path); err != nil {
		return p, err
	}
	if err := fc.OpenInput(path, nil, nil); err != nil {
		return p, fmt.Errorf("%s: open: %w", path, err)
	}
	defer fc.CloseInput()
	if err := fc.FindStreamInfo(nil); err != nil {
		return p, fmt.Errorf("%s: stream info: %w", path, err)
	}
	p.Format = fc.InputFormat().Name()
	p.ContainerDurationUS = fc.Duration()
	if p.ContainerDurationUS == noPTS {
		p.ContainerDurationUS = 0
	}
	var video *astiav.Stream
	for _, s := range fc.Streams() {
		p.Streams++
		switch s.CodecParameters().MediaType() {
		case astiav.MediaTypeAudio:
			p.HasAudio = true
		case astiav.MediaTypeVideo:
			if video == nil {
				video = s
			}
		}
	}
	if video == nil {
		return p, fmt.Errorf("%s: no video stream", path)
	}
	cp := video.CodecParameters()
	p.Codec = cp.CodecID().Name()
	p.Width, p.Height = cp.Width(), cp.Height()
	p.PixFmt = cp.PixelFormat().Name()
	p.AvgFrameRate = rationalOf(video.AvgFrameRate())
	p.RealFrameRate = rationalOf(video.RFrameRate())
	p.TimeBase = rationalOf(video.TimeBase())
	if d := video.Duration(); d != noPTS {
		p.StreamDuration = d
	}
	pkt := astiav.AllocPacket()
	defer pkt.Free()
	p.PTSMonotone, p.DTSMonotone = true, true
	var lastPTS, lastDTS int64
	for {
		err := fc.ReadFrame(pkt)
		if err != nil {
			if !errors.Is(err, astiav.ErrEof) {
				p.ReadErr = fmt.Errorf("%s: read after packet %d: %w", path, p.Frames, err)
			}
			break
		}
		if pkt.StreamIndex() == video.Index() {
			pts, dts := pkt.Pts(), pkt.Dts()
			if p.Frames == 0 || pts < p.FirstPTS {
				p.FirstPTS = pts
			}
			if end := pts + pkt.Duration(); p.Frames == 0 || end > p.LastEndPTS {
				p.LastEndPTS = end
			}
			if p.Frames > 0 {
				p.PTSMonotone = p.PTSMonotone && pts > lastPTS
				p.DTSMonotone = p.DTSMonotone && dts > lastDTS
			}
			lastPTS, lastDTS = pts, dts
			p.Frames++
		}
		pkt.Unref()
	}
	return p, nil
}

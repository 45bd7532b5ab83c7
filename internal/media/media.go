// Package media holds what passes between FFmpeg (internal/video) and the
// packages that encode, judge or arrange video files without calling FFmpeg
// themselves (export, verify, merge): a camera's files, its episodes' frame
// times, the encoder settings and what an encode returns (files, where
// each episode lies in them, statistics); a file's description, its stream
// signature, its decoded frames as pictures in the output colour, and the
// picture comparisons verify makes. It needs no cgo, so those packages'
// rules build and are tested without FFmpeg; each declares the small
// interface it needs (export.Video, verify.FrameDecoder, merge.Video),
// internal/video implements them (video.Files) and the CLI wires them.
package media

import (
	"fmt"
	"math/big"
)

// Rational is an exact fraction Num/Den.
type Rational struct {
	Num, Den int
}

// ProbeInfo describes the first video stream of a file (video.Probe).
type ProbeInfo struct {
	// Format is the demuxer name, e.g. "mov,mp4,m4a,3gp,3g2,mj2".
	Format string
	// Codec is FFmpeg's codec name, e.g. "av1", "h264", "vp8".
	Codec string
	// Width, Height in pixels; PixFmt e.g. "yuv420p".
	Width, Height int
	PixFmt        string
	// AvgFrameRate and RealFrameRate (r_frame_rate) from the demuxer.
	AvgFrameRate, RealFrameRate Rational
	// TimeBase of the stream.
	TimeBase Rational
	// Frames counts the stream's packets (read, not taken from the header).
	Frames int
	// StreamDuration in TimeBase units as the container states it (0 if
	// unknown); ContainerDurationUS in microseconds (0 if unknown).
	StreamDuration      int64
	ContainerDurationUS int64
	// FirstPTS is the smallest packet pts; LastEndPTS the largest pts plus
	// that packet's duration (both in TimeBase units).
	FirstPTS, LastEndPTS int64
	// PTSMonotone is true when packet pts strictly increase in file order
	// (no reordering); DTSMonotone likewise for dts.
	PTSMonotone, DTSMonotone bool
	// HasAudio reports an audio stream; Streams counts all streams.
	HasAudio bool
	Streams  int
	// ReadErr is the demuxer's error if the file ended with one (cut short).
	ReadErr error
}

// StreamSignature describes what a joined file's stream must share with
// every source copied into it, as the mp4 header states it: codec, size,
// colour properties and the codec configuration (extradata). The pixel
// format is not in an mp4 header, but its chroma format and bit depth are in
// the configuration record (avcC's SPS, av1C), so equal extradata means an
// equal pixel format; the header alone is read (no frame decoded).
type StreamSignature struct {
	Codec         string
	Width, Height int
	Color         [4]int // space, range, primaries, transfer
	ExtraData     string // hex
}

// Differs says how t differs from s ("" when it does not).
func (s StreamSignature) Differs(t StreamSignature) string {
	switch {
	case t.Codec != s.Codec:
		return fmt.Sprintf("codec %s, joined file has %s", t.Codec, s.Codec)
	case t.Width != s.Width || t.Height != s.Height:
		return fmt.Sprintf("size %dx%d, joined file has %dx%d", t.Width, t.Height, s.Width, s.Height)
	case t.Color != s.Color:
		return "colour properties differ"
	case t.ExtraData != s.ExtraData:
		return "codec configuration (extradata) differs"
	}
	return ""
}

// JoinRange is frames [From, From+Frames) of the file at Path, copied into
// a joined file in the order given.
type JoinRange struct {
	Path         string
	From, Frames int
}

// Frame is one decoded frame of a file, in presentation order, handed to a
// decoder's callback and valid only during it.
type Frame struct {
	// Index counts frames in presentation order from 0.
	Index int
	// PTS is the raw container timestamp in TimeBase units.
	PTS int64
	// TimeBaseNum/TimeBaseDen is the stream time base in seconds.
	TimeBaseNum, TimeBaseDen int
	// Pixels reads the picture.
	Pixels Pixels
}

// Seconds returns PTS·TimeBase exactly.
func (f Frame) Seconds() *big.Rat {
	return new(big.Rat).SetFrac64(f.PTS*int64(f.TimeBaseNum), int64(f.TimeBaseDen))
}

// Pixels is a decoded frame's picture, as the judging packages read it.
type Pixels interface {
	// Code reads the frame-number code band of a synthetic camera's
	// picture; ok is false when the band is missing or damaged.
	Code() (code uint32, ok bool)
	// Planes returns the picture in the exporter's output colour at w×h
	// (even), with the scaler the exporter uses.
	Planes(w, h int) (Planes, error)
}

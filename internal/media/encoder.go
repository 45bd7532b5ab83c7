package media

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
)

// Encoder names accepted in EncoderOptions.Codec.
const (
	EncoderSVTAV1 = "libsvtav1"
	EncoderX264   = "libx264"
)

// LeRobot's defaults (configs/video.py VideoEncoderConfig, and
// video_utils.encode_video_frames): libsvtav1, g=2, crf=30, preset 12,
// yuv420p, fast_decode 0.
const (
	DefaultCRF          = 30
	DefaultGOP          = 2
	DefaultSVTPreset    = "12"
	DefaultX264Preset   = "veryfast"
	DefaultMaxFileBytes = lerobot.DefaultVideoFileSizeMB * lerobot.BytesPerMB
)

// DefaultX264Threads is libx264's thread count when EncoderOptions.Threads
// is 0. x264 codes frames differently with another thread count (its frame
// threads bound each other's motion search and rate control), and its
// automatic count is 1.5 per CPU of the process's affinity, which a SLURM
// or Kubernetes CPU set, or taskset, changes: an export on a node allowed
// one CPU wrote other bytes than one allowed two. A fixed count makes the
// bytes the machine's no more. 3 is what x264 chose on two CPUs, the
// project's reference machines, so the shards made there keep their bytes.
const DefaultX264Threads = 3

// EncoderOptions selects and tunes the output encoder. The zero value means
// LeRobot's default encoder: libsvtav1, crf 30, preset 12, g 2, yuv420p,
// svtav1-params fast-decode=0.
type EncoderOptions struct {
	// Codec is "libsvtav1" (default, "" too) or "libx264".
	Codec string
	// CRF is the constant rate factor; 0 means 30. (A true crf 0 cannot be
	// asked for; use ExtraOptions {"crf": "0"}.)
	CRF int
	// Preset: "" means "12" for libsvtav1 and "veryfast" for libx264.
	// LeRobot passes no preset to x264 (x264's "medium"); veryfast is
	// chosen here because x264 is picked for speed and portability, and
	// quality is held by CRF.
	Preset string
	// G is the GOP size (keyframe interval); 0 means 2.
	G int
	// PixFmt must be "" or "yuv420p" (the only format LeRobot's RGB
	// videos and every decoder accept).
	PixFmt string
	// FastDecode is SVT-AV1's fast-decode level 0..2 (ignored by x264
	// unless > 0, where it adds tune=fastdecode as LeRobot does).
	FastDecode int
	// Threads: libsvtav1 gets svtav1-params lp=Threads (FFmpeg 7.1's
	// wrapper ignores thread_count), libx264 gets thread_count. 0 means
	// DefaultX264Threads for libx264 and SVT-AV1's own choice (every CPU
	// the process may run on) for libsvtav1, whose bytes do not depend on
	// lp. x264's bytes depend on its thread count, so it is never left to
	// count the CPUs.
	Threads int
	// ExtraOptions are merged last into the encoder's option dictionary;
	// every key must be known to the encoder.
	ExtraOptions map[string]string
}

// Limits of the encoder settings: past them an encoder refuses to open, or
// an FFmpeg option (an int32) overflows, after the export has begun.
const (
	// MaxSVTCRF and MaxX264CRF are the encoders' CRF ranges' tops.
	MaxSVTCRF  = 63
	MaxX264CRF = 51
	// MaxGOP is the longest key frame interval asked for (frames).
	MaxGOP = 100000
	// MaxSide is the largest output width or height (8K).
	MaxSide = 8192
	// MaxThreads bounds threads per encoder.
	MaxThreads = 1024
)

// MinSVTSide is SVT-AV1's smallest picture width and height. Below it the
// encoder refuses to open: the size is checked before any encoder opens, so
// that the user reads which size to choose instead of a failed open.
const MinSVTSide = 64

// ErrSizeUnsupported marks an output size the chosen encoder cannot encode.
var ErrSizeUnsupported = errors.New("video: the encoder cannot encode this size")

// CheckOutputSize checks that the encoder can encode width×height.
func (o EncoderOptions) CheckOutputSize(width, height int) error {
	n, err := o.Normalized()
	if err != nil {
		return err
	}
	if n.Codec == EncoderSVTAV1 && (width < MinSVTSide || height < MinSVTSide) {
		return fmt.Errorf("%w: %dx%d: %s wants width and height of at least %d (choose a larger --video-size, or --vcodec h264)", ErrSizeUnsupported, width, height, n.Codec, MinSVTSide)
	}
	return nil
}

// x264Presets are libx264's preset names; SVT-AV1's presets are 0 to 13.
var x264Presets = []string{"ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"}

// OptionError is an encoder setting the encoder would refuse.
type OptionError struct {
	Option string // crf, preset, g, threads, size
	Value  string
	Want   string
}

func (e *OptionError) Error() string { return fmt.Sprintf("%s %s: %s", e.Option, e.Value, e.Want) }

// Validate checks the options as the encoder will take them (defaults
// filled in): the one check of encoder settings, run before an export
// starts, whether they came from flags or a manifest.
func (o EncoderOptions) Validate() error {
	_, err := o.Normalized()
	return err
}

// CheckSize checks an output size: positive, even, at most MaxSide.
func CheckSize(width, height int) error {
	if width <= 0 || height <= 0 || width%2 != 0 || height%2 != 0 || width > MaxSide || height > MaxSide {
		return &OptionError{Option: "size", Value: fmt.Sprintf("%dx%d", width, height), Want: fmt.Sprintf("want WIDTHxHEIGHT, both even, positive and at most %d", MaxSide)}
	}
	return nil
}

// Normalized returns a copy with defaults filled in, or an error.
func (o EncoderOptions) Normalized() (EncoderOptions, error) {
	if o.Codec == "" {
		o.Codec = EncoderSVTAV1
	}
	if o.CRF == 0 {
		o.CRF = DefaultCRF
	}
	if o.G == 0 {
		o.G = DefaultGOP
	}
	if o.PixFmt == "" {
		o.PixFmt = "yuv420p"
	}
	switch o.Codec {
	case EncoderSVTAV1:
		if o.Preset == "" {
			o.Preset = DefaultSVTPreset
		}
	case EncoderX264:
		if o.Preset == "" {
			o.Preset = DefaultX264Preset
		}
		if o.Threads == 0 {
			o.Threads = DefaultX264Threads
		}
	default:
		return o, fmt.Errorf("encoder %q: want %s or %s", o.Codec, EncoderSVTAV1, EncoderX264)
	}
	if o.PixFmt != "yuv420p" {
		return o, fmt.Errorf("pixel format %q: only yuv420p is supported", o.PixFmt)
	}
	maxCRF := MaxSVTCRF
	if o.Codec == EncoderX264 {
		maxCRF = MaxX264CRF
	}
	switch {
	case o.CRF < 0 || o.CRF > maxCRF:
		return o, &OptionError{"crf", strconv.Itoa(o.CRF), fmt.Sprintf("want 0 to %d for %s", maxCRF, o.Codec)}
	case o.G < 0 || o.G > MaxGOP:
		return o, &OptionError{"g", strconv.Itoa(o.G), fmt.Sprintf("want 1 to %d (frames from one key frame to the next)", MaxGOP)}
	case o.Threads < 0 || o.Threads > MaxThreads:
		return o, &OptionError{"threads", strconv.Itoa(o.Threads), fmt.Sprintf("want 0 (the default) to %d", MaxThreads)}
	case o.FastDecode < 0 || o.FastDecode > 2:
		return o, &OptionError{"fast_decode", strconv.Itoa(o.FastDecode), "want 0 to 2"}
	}
	if o.Codec == EncoderX264 && !slices.Contains(x264Presets, o.Preset) {
		return o, &OptionError{"preset", strconv.Quote(o.Preset), "want one of libx264's: " + strings.Join(x264Presets, ", ")}
	}
	if n, err := strconv.Atoi(o.Preset); o.Codec == EncoderSVTAV1 && (err != nil || n < 0 || n > 13) {
		return o, &OptionError{"preset", strconv.Quote(o.Preset), "want 0 (slowest) to 13 (fastest) for libsvtav1"}
	}
	return o, nil
}

// canonicalCodec is the name LeRobot records as video.codec
// (stream.codec.canonical_name).
func (o EncoderOptions) canonicalCodec() string {
	if o.Codec == EncoderX264 {
		return "h264"
	}
	return "av1"
}

// presetValue is the preset as LeRobot stores it: an int for SVT-AV1 when
// numeric, a string otherwise.
func (o EncoderOptions) presetValue() any {
	if n, err := strconv.Atoi(o.Preset); err == nil {
		return n
	}
	return o.Preset
}

// InfoStyle selects which keys FeatureInfo writes.
type InfoStyle int

const (
	// InfoLeRobot044 writes exactly the keys lerobot 0.4.4's get_video_info
	// writes: video.height, video.width, video.codec, video.pix_fmt,
	// video.is_depth_map, video.fps, video.channels, has_audio. Newer
	// LeRobot migrates video.is_depth_map on load.
	InfoLeRobot044 InfoStyle = iota
	// InfoWithEncoder writes the keys of LeRobot ≥ 0.5 (HEAD): the stream
	// keys, has_audio, is_depth_map, and the encoder keys video.g,
	// video.crf, video.preset, video.fast_decode, video.video_backend,
	// video.extra_options.
	InfoWithEncoder
)

// FeatureInfo returns the "info" block of a video feature in meta/info.json
// for an output of width×height at fps encoded with enc.
func FeatureInfo(width, height, fps int, enc EncoderOptions, style InfoStyle) (map[string]any, error) {
	enc, err := enc.Normalized()
	if err != nil {
		return nil, fmt.Errorf("video: %w", err)
	}
	m := map[string]any{
		"video.height":   height,
		"video.width":    width,
		"video.codec":    enc.canonicalCodec(),
		"video.pix_fmt":  enc.PixFmt,
		"video.fps":      fps,
		"video.channels": 3,
		"has_audio":      false,
	}
	switch style {
	case InfoLeRobot044:
		m["video.is_depth_map"] = false
	case InfoWithEncoder:
		m["is_depth_map"] = false
		m["video.g"] = enc.G
		m["video.crf"] = enc.CRF
		m["video.preset"] = enc.presetValue()
		m["video.fast_decode"] = enc.FastDecode
		m["video.video_backend"] = "pyav"
		extra := map[string]any{}
		for k, v := range enc.ExtraOptions {
			extra[k] = v
		}
		m["video.extra_options"] = extra
	default:
		return nil, fmt.Errorf("unknown info style %d", style)
	}
	return m, nil
}

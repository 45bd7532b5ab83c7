package video

import "github.com/ceres-robotics/ceres-export/internal/media"

// The names of what an export passes in and gets back for one camera are
// media's, which the export package plans and judges with without cgo.
type (
	Source           = media.Source
	EpisodeTimes     = media.EpisodeTimes
	ExportOptions    = media.ExportOptions
	Part             = media.Part
	SourceRef        = media.SourceRef
	EpisodeResult    = media.EpisodeResult
	FrameSpan        = media.FrameSpan
	OutputFileResult = media.OutputFileResult
	SourceReport     = media.SourceReport
	CameraResult     = media.CameraResult
	ImageStats       = media.ImageStats
	ReadPrint        = media.ReadPrint
	EncoderOptions   = media.EncoderOptions
	OptionError      = media.OptionError
	InfoStyle        = media.InfoStyle
)

// Encoder names and settings' limits (media's).
const (
	EncoderSVTAV1      = media.EncoderSVTAV1
	EncoderX264        = media.EncoderX264
	DefaultCRF         = media.DefaultCRF
	DefaultGOP         = media.DefaultGOP
	DefaultSVTPreset   = media.DefaultSVTPreset
	DefaultX264Preset  = media.DefaultX264Preset
	DefaultX264Threads = media.DefaultX264Threads
	MinSVTSide         = media.MinSVTSide
	InfoLeRobot044     = media.InfoLeRobot044
	InfoWithEncoder    = media.InfoWithEncoder
)

// ErrBehind and ErrSizeUnsupported are media's.
var (
	ErrBehind          = media.ErrBehind
	ErrSizeUnsupported = media.ErrSizeUnsupported
)

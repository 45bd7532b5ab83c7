package video

import (
	"os"

	"github.com/asticode/go-astiav"
)

// SetLibraryLogging sets how much FFmpeg and SVT-AV1 print to stderr for the
// whole process: errors only, or everything with verbose. It is process-wide
// because FFmpeg's log level is. go-astiav's log callback is not installed:
// it formats into a fixed 1024-byte C buffer (docs/video.md).
func SetLibraryLogging(verbose bool) {
	if verbose {
		astiav.SetLogLevel(astiav.LogLevelInfo)
		return
	}
	// Errors of cut-short camera files are expected and reported by the
	// exporter itself; FFmpeg's own lines would only repeat them.
	astiav.SetLogLevel(astiav.LogLevelFatal)
	// SVT-AV1 prints its banner through its own logger unless told not to.
	if os.Getenv("SVT_LOG") == "" {
		_ = os.Setenv("SVT_LOG", "1")
	}
}

//go:build !cgo

package export

import (
	"testing"

	synthsession "github.com/ceres-robotics/ceres-export/internal/synth/session"
	"github.com/ceres-robotics/ceres-export/internal/testenv"
)

// testVideo is nil: a build without cgo has no FFmpeg. Tests of sessions
// without cameras need none; the fake of fakevideo_test.go stands in where
// a test is about export's rules rather than the frames.
func testVideo() Video { return nil }

// writeSession synthesises a session's journal into dir. Its camera files
// would need FFmpeg to encode: a session with cameras is missing its tool
// here (make check skips it; make test, built with cgo, runs it).
func writeSession(tb testing.TB, dir string, o synthsession.Options) {
	tb.Helper()
	if o.Cameras > 0 {
		testenv.Missing(tb, "a session with %d cameras: its camera files need FFmpeg, which a build without cgo lacks", o.Cameras)
	}
	if _, _, err := synthsession.Write(dir, o); err != nil {
		tb.Fatal(err)
	}
}

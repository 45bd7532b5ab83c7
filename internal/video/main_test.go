package video

import (
	"os"
	"testing"

	"github.com/asticode/go-astiav"
)

func TestMain(m *testing.M) {
	// FFmpeg logs to stderr; keep test output readable.
	astiav.SetLogLevel(astiav.LogLevelQuiet)
	os.Setenv("SVT_LOG", "1")
	code := m.Run()
	for _, dir := range []string{fixturesDir, benchData.dir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

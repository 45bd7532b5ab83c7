package journal

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/testenv"
)

// A recorder imports journal (and a campaign tool taskspec) on its own: the
// public packages must build from the standard library, zstd and the few
// small modules listed here, never from the dataset side (Arrow, Parquet,
// FFmpeg through go-astiav) or the tool's other internal packages. This
// test fails when an import anywhere below them drags one in.
func TestPublicPackagesStayLight(t *testing.T) {
	const module = "github.com/ceres-robotics/ceres-export/"
	allowed := []string{
		"github.com/klauspost/compress", // zstd, the segments' compression
		"golang.org/x/sys/",             // fsync and the regular-file check
		"github.com/gowebpki/jcs",       // taskspec's RFC 8785 canonical JSON
		module + "journal",
		module + "taskspec",
		module + "internal/input", // opens only regular files
		module + "internal/fsync", // the one directory fsync
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		testenv.Missing(t, "the go command is not on PATH: %v", err)
	}
	for _, pkg := range []string{module + "journal", module + "taskspec"} {
		t.Run(strings.TrimPrefix(pkg, module), func(t *testing.T) {
			out, err := exec.Command(goTool, "list", "-deps", pkg).Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", pkg, err)
			}
			deps := strings.Fields(string(out))
			if len(deps) < 10 {
				t.Fatalf("go list -deps %s listed only %q", pkg, deps)
			}
			for _, dep := range deps {
				if first, _, _ := strings.Cut(dep, "/"); !strings.Contains(first, ".") {
					continue // the standard library
				}
				ok := false
				for _, a := range allowed {
					ok = ok || strings.HasPrefix(dep, a)
				}
				if !ok {
					t.Errorf("%s depends on %s: the public packages need only the standard library, zstd and %v", pkg, dep, allowed)
				}
			}
		})
	}
}

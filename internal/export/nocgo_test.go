package export

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/testenv"
)

// The packages that hold the exporter's, verifier's and merger's rules
// reach FFmpeg (go-astiav, cgo) only through the interfaces they declare
// (export.Video, verify.FrameDecoder, merge.Video), which internal/video
// implements and the CLI wires in. Built without cgo, they and their
// tests must import none of it: make check runs them so (PURE_PKGS), and
// a package that drags go-astiav back in drops out of that lane unseen.
// This test fails instead, naming the import.
func TestRulesBuildWithoutCgo(t *testing.T) {
	const module = "github.com/ceres-robotics/ceres-export/"
	goTool, err := exec.LookPath("go")
	if err != nil {
		testenv.Missing(t, "the go command is not on PATH: %v", err)
	}
	for _, pkg := range []string{"internal/export", "internal/verify", "internal/merge", "internal/media", "internal/exitstatus"} {
		t.Run(pkg, func(t *testing.T) {
			// -test: the package's test variants too (a _test file that
			// needs FFmpeg says //go:build cgo).
			cmd := exec.Command(goTool, "list", "-test", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+pkg)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("CGO_ENABLED=0 go list -test -deps %s: %v", pkg, err)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) < 10 {
				t.Fatalf("go list -test -deps %s listed only %q", pkg, lines)
			}
			for _, line := range lines {
				importer, imports, _ := strings.Cut(line, " ")
				for _, imp := range strings.Fields(imports) {
					if strings.HasPrefix(imp, "github.com/asticode/go-astiav") {
						t.Errorf("%s imports %s: %s must build without cgo (FFmpeg behind its interface)", strings.TrimPrefix(importer, module), imp, pkg)
					}
				}
			}
		})
	}
}

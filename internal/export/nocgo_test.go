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
	pkgs := []string{"internal/export", "internal/verify", "internal/merge", "internal/media", "internal/exitstatus"}
	// One go list of them all, -test: their test variants too (a _test
	// file that needs FFmpeg says //go:build cgo).
	args := []string{"list", "-test", "-deps", "-f", "{{.ImportPath}}|{{join .Imports \"|\"}}"}
	for _, pkg := range pkgs {
		args = append(args, module+pkg)
	}
	cmd := exec.Command(goTool, args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("CGO_ENABLED=0 go list -test -deps %v: %v", pkgs, err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Split(line, "|")
		imports[fields[0]] = fields[1:]
	}
	for _, pkg := range pkgs {
		t.Run(pkg, func(t *testing.T) {
			// What the package's test binary links, from its test main
			// (the package alone when it has no tests).
			seen := map[string]bool{}
			queue := []string{module + pkg + ".test"}
			if _, ok := imports[queue[0]]; !ok {
				queue[0] = module + pkg
			}
			if _, ok := imports[queue[0]]; !ok {
				t.Fatalf("go list -test -deps did not list %s", queue[0])
			}
			for len(queue) > 0 {
				p := queue[0]
				queue = queue[1:]
				for _, imp := range imports[p] {
					if strings.HasPrefix(imp, "github.com/asticode/go-astiav") {
						t.Errorf("%s imports %s: %s must build without cgo (FFmpeg behind its interface)", strings.TrimPrefix(p, module), imp, pkg)
					}
					if imp != "" && !seen[imp] {
						seen[imp] = true
						queue = append(queue, imp)
					}
				}
			}
			if len(seen) < 10 {
				t.Fatalf("%s's test binary links only %d packages", pkg, len(seen))
			}
		})
	}
}

package version

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

func TestVersionOf(t *testing.T) {
	rev := "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b"
	for _, c := range []struct {
		name    string
		main    string
		setting []debug.BuildSetting
		want    string
	}{
		{"local build without VCS", "(devel)", nil, release},
		{"local build", "(devel)", []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}, release + "+1a2b3c4d5e6f"},
		{"modified tree", "(devel)", []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}, release + "+1a2b3c4d5e6f.dirty"},
		{"go install module@v0.2.0", "v0.2.0", nil, "0.2.0"},
		{"pseudo-version with build metadata", "v0.2.1-0.20261201-1a2b3c4d5e6f+dirty", nil, release},
	} {
		t.Run(c.name, func(t *testing.T) {
			info := &debug.BuildInfo{Main: debug.Module{Version: c.main}, Settings: c.setting}
			if got := Of(info); got != c.want {
				t.Errorf("Of = %q, want %q", got, c.want)
			}
		})
	}
}

// Linkage tells a static binary from a dynamic one by its ELF headers:
// a binary built here with cgo off and -static is static, the test binary
// itself (cgo, FFmpeg) is dynamic and needs the C library.
func TestLinkage(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	static := filepath.Join(dir, "static")
	cmd := exec.Command("go", "build", "-o", static, src)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, linkage string
		needsLibc     bool
	}{{static, "static", false}, {self, "dynamic", true}} {
		linkage, needs, err := Linkage(c.path)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if linkage != c.linkage || slices.ContainsFunc(needs, func(n string) bool { return strings.HasPrefix(n, "libc.so") }) != c.needsLibc {
			t.Errorf("%s: linkage %q needs %v, want %q (libc needed: %v)", c.path, linkage, needs, c.linkage, c.needsLibc)
		}
	}
	if _, _, err := Linkage(src); err == nil {
		t.Errorf("Linkage(%s), a Go source file: no error", src)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
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
			if got := versionOf(info); got != c.want {
				t.Errorf("versionOf = %q, want %q", got, c.want)
			}
		})
	}
}

// The version command and --version print the same, and its JSON names
// the FFmpeg libraries and both encoders.
func TestVersionCommand(t *testing.T) {
	runMain := func(args ...string) string {
		var out, errOut bytes.Buffer
		if code := Main(context.Background(), args, streams{In: strings.NewReader(""), Out: &out, Err: &errOut}); code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, errOut.String())
		}
		return out.String()
	}
	text := runMain("version")
	if flag := runMain("--version"); flag != text {
		t.Errorf("--version printed\n%s\nversion printed\n%s", flag, text)
	}
	if !strings.HasPrefix(text, "ceres-export "+toolVersion()+"\n") || !strings.Contains(text, "libavcodec ") {
		t.Errorf("version printed:\n%s", text)
	}
	var r versionReport
	if err := json.Unmarshal([]byte(runMain("version", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	if r.Version != toolVersion() || r.FFmpeg == "" || len(r.Encoders) != 2 || r.Linkage != "dynamic" {
		t.Errorf("version --json: %+v", r)
	}
	// Every library the binary carries: FFmpeg's and the codecs'.
	var names []string
	for _, l := range r.Libraries {
		names = append(names, l.Name)
	}
	for _, want := range []string{"libavcodec", "libavformat", "libavutil", "libswscale", "svt-av1", "x264", "libvpx", "dav1d"} {
		if !slices.Contains(names, want) {
			t.Errorf("version --json names no %s: %v", want, names)
		}
	}
	for _, l := range r.Libraries {
		if l.Version == "" || l.Version == "0.0.0" {
			t.Errorf("library %s version %q", l.Name, l.Version)
		}
	}
}

// binaryVersion is the version string of the binary the end-to-end tests
// run (built apart from the test binary, so its build info may differ).
func binaryVersion(t *testing.T) string {
	t.Helper()
	var r versionReport
	if err := json.Unmarshal([]byte(mustRun(t, "version", "--json")), &r); err != nil || r.Version == "" {
		t.Fatalf("version --json: %v %+v", err, r)
	}
	return r.Version
}

// linkageOf tells a static binary from a dynamic one by its ELF headers:
// a binary built here with cgo off and -static is static, the test binary
// itself (cgo, FFmpeg) is dynamic and needs the C library.
func TestLinkageOf(t *testing.T) {
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
		linkage, needs, err := linkageOf(c.path)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if linkage != c.linkage || slices.ContainsFunc(needs, func(n string) bool { return strings.HasPrefix(n, "libc.so") }) != c.needsLibc {
			t.Errorf("%s: linkage %q needs %v, want %q (libc needed: %v)", c.path, linkage, needs, c.linkage, c.needsLibc)
		}
	}
	if _, _, err := linkageOf(src); err == nil {
		t.Errorf("linkageOf(%s), a Go source file: no error", src)
	}
}

// Package version is the exporter's version string, which every report,
// dataset card, merge report, campaign record and page carries, and the
// report of what the binary runs with (`ceres-export version`).
package version

import (
	"debug/elf"
	"fmt"
	"maps"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/video"
)

// release is the exporter's release. The version string (toolVersion) adds
// the revision the binary was built from.
const release = "0.1.0"

// Tool is the one version string: `ceres-export version`, every
// export report, dataset card, merge report, campaign record and page.
// It is the module version of a `go install module@version` build, else
// the release, with the VCS revision as build metadata when the build
// recorded one ("0.1.0+1a2b3c4d5e6f", ".dirty" for a modified tree).
func Tool() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return release
	}
	return Of(info)
}

// Of is the version string of a build with info (see Tool).
func Of(info *debug.BuildInfo) string {
	v := release
	if mv := info.Main.Version; mv != "" && mv != "(devel)" && !strings.Contains(mv, "+") {
		v = strings.TrimPrefix(mv, "v")
	}
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return v
	}
	v += "+" + rev[:min(12, len(rev))]
	if dirty {
		v += ".dirty"
	}
	return v
}

// Report is what `ceres-export version` prints (with --json, as JSON):
// the version, the toolchain, how the binary is linked, and the FFmpeg and
// codec libraries and encoders it runs with.
type Report struct {
	Version   string          `json:"version"`
	Go        string          `json:"go"`
	Platform  string          `json:"platform"`
	Linkage   string          `json:"linkage"`
	Needs     []string        `json:"needs,omitempty"`
	FFmpeg    string          `json:"ffmpeg"`
	Libraries []video.Library `json:"libraries"`
	Encoders  map[string]bool `json:"encoders"`
}

// NewReport is the Report of the running binary.
func NewReport() Report {
	ff, libs := video.Libraries()
	r := Report{
		Version: Tool(), Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		FFmpeg: ff, Libraries: libs, Encoders: video.Encoders(),
	}
	if exe, err := os.Executable(); err != nil {
		r.Linkage = "unknown (" + err.Error() + ")"
	} else if r.Linkage, r.Needs, err = Linkage(exe); err != nil {
		r.Linkage = "unknown (" + err.Error() + ")"
	}
	return r
}

// Linkage reads how the binary at path was linked, from its ELF headers
// rather than from a build flag, so that what version says is what runs:
// "static" for a binary with no program interpreter (the release binaries,
// which carry FFmpeg, its codecs and the C library inside and run on any
// Linux of their architecture), "dynamic" with the shared libraries it needs
// otherwise (a development build).
func Linkage(path string) (linkage string, needs []string, err error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			if needs, err = f.ImportedLibraries(); err != nil {
				return "", nil, fmt.Errorf("%s: %w", path, err)
			}
			return "dynamic", needs, nil
		}
	}
	return "static", nil, nil
}

// Text is the report as `ceres-export version` prints it.
func (r Report) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ceres-export %s\n", r.Version)
	fmt.Fprintf(&b, "  go        %s %s\n", r.Go, r.Platform)
	if len(r.Needs) > 0 {
		fmt.Fprintf(&b, "  linkage   %s (%s)\n", r.Linkage, strings.Join(r.Needs, ", "))
	} else {
		fmt.Fprintf(&b, "  linkage   %s\n", r.Linkage)
	}
	libs := make([]string, len(r.Libraries))
	for i, l := range r.Libraries {
		libs[i] = l.Name + " " + l.Version
	}
	fmt.Fprintf(&b, "  ffmpeg    %s\n", r.FFmpeg)
	fmt.Fprintf(&b, "  libraries %s\n", strings.Join(libs, ", "))
	var encs []string
	for _, name := range slices.Sorted(maps.Keys(r.Encoders)) {
		state := "available"
		if !r.Encoders[name] {
			state = "missing"
		}
		encs = append(encs, name+" "+state)
	}
	fmt.Fprintf(&b, "  encoders  %s\n", strings.Join(encs, ", "))
	return b.String()
}

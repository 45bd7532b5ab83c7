package main

import (
	"debug/elf"
	"fmt"
	"maps"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ceres-robotics/ceres-export/internal/video"
)

// release is the exporter's release. The version string (toolVersion) adds
// the revision the binary was built from.
const release = "0.1.0"

// toolVersion is the one version string: `ceres-export version`, every
// export report, dataset card, merge report, campaign record and page.
// It is the module version of a `go install module@version` build, else
// the release, with the VCS revision as build metadata when the build
// recorded one ("0.1.0+1a2b3c4d5e6f", ".dirty" for a modified tree).
func toolVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return release
	}
	return versionOf(info)
}

func versionOf(info *debug.BuildInfo) string {
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

// versionReport is what `ceres-export version --json` prints.
type versionReport struct {
	Version   string          `json:"version"`
	Go        string          `json:"go"`
	Platform  string          `json:"platform"`
	Linkage   string          `json:"linkage"`
	Needs     []string        `json:"needs,omitempty"`
	FFmpeg    string          `json:"ffmpeg"`
	Libraries []video.Library `json:"libraries"`
	Encoders  map[string]bool `json:"encoders"`
}

func newVersionReport() versionReport {
	ff, libs := video.Libraries()
	r := versionReport{
		Version: toolVersion(), Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		FFmpeg: ff, Libraries: libs, Encoders: video.Encoders(),
	}
	if exe, err := os.Executable(); err != nil {
		r.Linkage = "unknown (" + err.Error() + ")"
	} else if r.Linkage, r.Needs, err = linkageOf(exe); err != nil {
		r.Linkage = "unknown (" + err.Error() + ")"
	}
	return r
}

// linkageOf reads how the binary at path was linked, from its ELF headers
// rather than from a build flag, so that what version says is what runs:
// "static" for a binary with no program interpreter (the release binaries,
// which carry FFmpeg, its codecs and the C library inside and run on any
// Linux of their architecture), "dynamic" with the shared libraries it needs
// otherwise (a development build).
func linkageOf(path string) (linkage string, needs []string, err error) {
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

func (r versionReport) text() string {
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

func newVersionCmd(s streams) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version, the FFmpeg libraries and the encoders this binary runs with",
		Long: `Print the exporter's version (the one every report, dataset card and
campaign record carries), the Go toolchain, how the binary is linked
("static" for the release binaries, which carry FFmpeg, its codec
libraries and the C library inside; otherwise the shared libraries it
needs), the versions of the FFmpeg and codec libraries it runs with, and
which of the encoders export uses (libsvtav1 for --vcodec av1, libx264 for
h264) this FFmpeg has.
ceres-export --version prints the same.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r := newVersionReport()
			if asJSON {
				return writeJSON(s, r)
			}
			_, err := fmt.Fprint(s.Out, r.text())
			return err
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return c
}

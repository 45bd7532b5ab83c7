package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/ceres-robotics/ceres-export/internal/version"
	"slices"
	"strings"
	"testing"
)

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
	if !strings.HasPrefix(text, "ceres-export "+version.Tool()+"\n") || !strings.Contains(text, "libavcodec ") {
		t.Errorf("version printed:\n%s", text)
	}
	var r version.Report
	if err := json.Unmarshal([]byte(runMain("version", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	if r.Version != version.Tool() || r.FFmpeg == "" || len(r.Encoders) != 2 || r.Linkage != "dynamic" {
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

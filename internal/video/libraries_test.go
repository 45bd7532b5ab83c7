package video

import (
	"regexp"
	"testing"
)

// Libraries names FFmpeg's libraries and the codec libraries it was built
// with, in a fixed order, each with a version as the library states it
// (x264's carries its git revision: "0.164.3095 baee400").
func TestLibraries(t *testing.T) {
	release, libs := Libraries()
	if release == "" {
		t.Error("no FFmpeg release")
	}
	number := `^[0-9]+\.[0-9]+\.[0-9]+$`
	want := []struct{ name, version string }{
		{"libavcodec", number},
		{"libavformat", number},
		{"libavutil", number},
		{"libswscale", number},
		{"libswresample", number},
		{"libavfilter", number},
		{"libavdevice", number},
		{"svt-av1", number},
		{"x264", `^0\.[0-9]+\.[0-9]+ [0-9a-f]+$`},
		{"libvpx", number},
		{"dav1d", number},
	}
	if len(libs) != len(want) {
		t.Fatalf("%d libraries %v, want %d", len(libs), libs, len(want))
	}
	for i, w := range want {
		l := libs[i]
		if l.Name != w.name || !regexp.MustCompile(w.version).MatchString(l.Version) || l.Version == "0.0.0" {
			t.Errorf("library %d: %s %q, want %s matching %s", i, l.Name, l.Version, w.name, w.version)
		}
	}
	t.Logf("FFmpeg %s: %v", release, libs)
}

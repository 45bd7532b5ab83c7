package main

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime/debug"
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
	if r.Version != toolVersion() || r.FFmpeg == "" || len(r.Libraries) != 4 || len(r.Encoders) != 2 {
		t.Errorf("version --json: %+v", r)
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

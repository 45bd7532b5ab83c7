package export

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/settings"
	synthsession "github.com/ceres-robotics/ceres-export/internal/synth/session"
)

// The license setting takes the Hub's licence ids; anything else is a
// setting error naming the nearest id (the command line shows it as
// --license, a manifest at the JSON path that wrote it).
func TestResolveLicense(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ license, want, err string }{
		{"", "", ""},
		{"cc-by-4.0", "cc-by-4.0", ""},
		{"other", "other", ""},
		{"CC-BY-4.0", "", `license "CC-BY-4.0": not a licence id of the Hugging Face Hub (did you mean cc-by-4.0?`},
		{"cc-by-4", "", `license "cc-by-4": not a licence id of the Hugging Face Hub (did you mean cc-by-4.0?`},
	} {
		o, err := Resolve(settings.Settings{License: c.license}, "")
		var se *settings.SettingError
		switch {
		case c.err == "" && (err != nil || o.License != c.want):
			t.Errorf("license %q: %q, %v; want %q", c.license, o.License, err, c.want)
		case c.err != "" && (!errors.As(err, &se) || se.Setting != "license" || !strings.Contains(err.Error(), c.err)):
			t.Errorf("license %q: %v; want a setting error saying %q", c.license, err, c.err)
		}
	}
}

// An export with a licence writes it into the card (where the Hub reads
// it) and the export report (where merge reads it back); the rest of the
// card is the unlicensed export's, byte for byte.
func TestExportLicense(t *testing.T) {
	session := smallSession(t, synthsession.Options{Seed: 54, Cameras: 0})
	plain, licensed := filepath.Join(t.TempDir(), "plain"), filepath.Join(t.TempDir(), "licensed")
	if _, err := exportWithVideo(context.Background(), session, plain, Options{}); err != nil {
		t.Fatal(err)
	}
	rep, err := exportWithVideo(context.Background(), session, licensed, Options{License: "cc-by-nc-4.0"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Exporter.Options.License != "cc-by-nc-4.0" {
		t.Errorf("report options license %q", rep.Exporter.Options.License)
	}
	for dir, want := range map[string]any{plain: nil, licensed: "cc-by-nc-4.0"} {
		// A fresh value for each report: decoding into a map keeps the
		// keys an earlier report left there.
		var stored struct {
			Exporter struct {
				Options map[string]any `json:"options"`
			} `json:"exporter"`
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(layout.ExportReportPath)))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &stored); err != nil {
			t.Fatal(err)
		}
		if got := stored.Exporter.Options["license"]; got != want {
			t.Errorf("%s: export report license %v, want %v", filepath.Base(dir), got, want)
		}
	}
	read := func(dir string) string {
		b, err := os.ReadFile(filepath.Join(dir, layout.CardPath))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	p, l := read(plain), read(licensed)
	want := "---\nlicense: cc-by-nc-4.0\n" + strings.TrimPrefix(strings.Replace(p, "\n- **License:** [More Information Needed]\n", "\n- **License:** cc-by-nc-4.0\n", 1), "---\n")
	if l != want {
		t.Errorf("licensed card:\n%s\nwant the unlicensed one with the licence:\n%s", l, want)
	}
}

//go:build cgo

package merge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/shard"
)

// A merged dataset's licence is --license when given; otherwise its
// sources' when they all agree (none included), and sources that differ
// are refused, naming two of them and their licences.
func TestMergedLicense(t *testing.T) {
	t.Parallel()
	src := func(licenses ...string) []*source {
		var out []*source
		for i, l := range licenses {
			out = append(out, &source{dir: string(rune('a' + i)), license: l})
		}
		return out
	}
	for _, c := range []struct {
		name    string
		sources []*source
		want    string // the licence, or with err the message's part
		wantErr error
	}{
		{"none", src("", ""), "", nil},
		{"all agree", src("mit", "mit", "mit"), "mit", nil},
		{"one differs", src("mit", "mit", "cc-by-4.0"), "a is licensed mit and c is licensed cc-by-4.0; a merged dataset has one licence: give --license", ErrLicenses},
		{"one has none", src("mit", ""), "a is licensed mit and b is without a licence", ErrLicenses},
		{"the first has none", src("", "apache-2.0"), "a is without a licence and b is licensed apache-2.0", ErrLicenses},
		{"agree on an id the Hub lacks", src("gpl-2.0-or-later", "gpl-2.0-or-later"), "every source is licensed gpl-2.0-or-later, which is not a licence id of the Hugging Face Hub (did you mean gpl-2.0?", ErrLicenses},
	} {
		got, err := mergedLicense(c.sources, "")
		switch {
		case c.wantErr == nil && (err != nil || got != c.want):
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		case c.wantErr != nil && (!errors.Is(err, c.wantErr) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %q, %v; want %v saying %q", c.name, got, err, c.wantErr, c.want)
		}
	}
	// --license is the dataset's, whatever its sources say.
	if got, err := mergedLicense(src("mit", "", "cc-by-4.0"), "cc-by-sa-4.0"); err != nil || got != "cc-by-sa-4.0" {
		t.Errorf("--license cc-by-sa-4.0: %q, %v", got, err)
	}
	if _, err := mergedLicense(src("mit"), "CC-BY-4.0"); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "--license CC-BY-4.0") || !strings.Contains(err.Error(), "did you mean cc-by-4.0?") {
		t.Errorf("--license CC-BY-4.0: %v, want a usage error suggesting cc-by-4.0", err)
	}
}

// A foreign dataset's licence is its card's license, as the Hub reads it.
func TestForeignLicense(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		card string // "-": no README.md
		want string
	}{
		{"-", ""},
		{"no card data\n", ""},
		{"---\nlicense: apache-2.0\ntask_categories:\n- robotics\n---\n\ntext", "apache-2.0"},
		{"---\ntags:\n- LeRobot\nlicense: 'cc-by-4.0'\n---\n", "cc-by-4.0"},
		{"---\nlicense:\n- mit\n- apache-2.0\n---\n", "mit,apache-2.0"},
		{"---\nlicense: null\n---\n", ""},
		{"---\ntags: [LeRobot]\n---\n", ""},
		{"---\nlicense: [unclosed\n---\n", ""},
	} {
		dir := t.TempDir()
		if c.card != "-" {
			if err := os.WriteFile(filepath.Join(dir, layout.CardPath), []byte(c.card), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := foreignLicense(&shard.Dataset{Dir: dir})
		if err != nil || got != c.want {
			t.Errorf("card %q: licence %q, %v; want %q", c.card, got, err, c.want)
		}
	}
}

// The merged dataset carries its licence where the Hub reads it (the
// card's license and License line) and where a later merge reads it back
// (the merge report: the dataset's, and each source's own); a merge of
// shards under different licences is refused unless --license chooses.
func TestMergeLicense(t *testing.T) {
	mitA, mitB, ccBy, none := fixtureShard(t, "h264-mit-a"), fixtureShard(t, "h264-mit-b"), fixtureShard(t, "h264-cc-by"), fixtureShard(t, "h264-a")
	dir := t.TempDir()
	ctx := context.Background()
	card := func(out string) string {
		b, err := os.ReadFile(filepath.Join(out, layout.CardPath))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	checkLicensed := func(out, want string, sources ...string) {
		t.Helper()
		var r Report
		readJSON(t, filepath.Join(out, filepath.FromSlash(layout.MergeReportPath)), &r)
		if r.License != want {
			t.Errorf("%s: merge report license %q, want %q", out, r.License, want)
		}
		for i, s := range r.Sources {
			if i < len(sources) && s.License != sources[i] {
				t.Errorf("%s: source %d (%s) license %q, want its own %q", out, i, s.Name, s.License, sources[i])
			}
		}
		c := card(out)
		if !strings.HasPrefix(c, "---\nlicense: "+want+"\ntask_categories:\n") || !strings.Contains(c, "\n- **License:** "+want+"\n") {
			t.Errorf("%s: card does not say license %s:\n%.300s", out, want, c)
		}
	}

	agreed := filepath.Join(dir, "agreed")
	if _, err := mergeVideo(ctx, Options{Sources: []string{mitA, mitB}, Output: agreed}); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, agreed)
	checkLicensed(agreed, "mit", "mit", "mit")

	chosen := filepath.Join(dir, "chosen")
	if _, err := mergeVideo(ctx, Options{Sources: []string{mitA, ccBy, none}, Output: chosen, License: "cc-by-sa-4.0"}); err != nil {
		t.Fatal(err)
	}
	checkLicensed(chosen, "cc-by-sa-4.0", "mit", "cc-by-4.0", "")

	// No licence anywhere: the report says none and the card is LeRobot's
	// without one, as before licences.
	unlicensed := filepath.Join(dir, "unlicensed")
	if _, err := mergeVideo(ctx, Options{Sources: []string{none, fixtureShard(t, "h264-b")}, Output: unlicensed}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(unlicensed, filepath.FromSlash(layout.MergeReportPath))); strings.Contains(string(b), `"license"`) {
		t.Errorf("an unlicensed merge's report names a licence:\n%.400s", b)
	}
	if c := card(unlicensed); strings.Contains(c, "license:") || !strings.Contains(c, "\n- **License:** [More Information Needed]\n") {
		t.Errorf("an unlicensed merge's card:\n%.300s", c)
	}

	// Appending: the dataset's licence is one of the sources.
	into := filepath.Join(dir, "into")
	if _, err := mergeVideo(ctx, Options{Sources: []string{mitA}, Output: into}); err != nil {
		t.Fatal(err)
	}
	if _, err := mergeVideo(ctx, Options{Sources: []string{mitB}, Into: into}); err != nil {
		t.Fatal(err)
	}
	checkLicensed(into, "mit", "mit", "mit")

	// A foreign dataset's licence is its card's.
	foreign := foreignCopy(t, mitB)
	if err := os.WriteFile(filepath.Join(foreign, layout.CardPath), []byte("---\nlicense: mit\ntags:\n- LeRobot\n---\n\nA LeRobot dataset.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	withForeign := filepath.Join(dir, "with-foreign")
	if _, err := mergeVideo(ctx, Options{Sources: []string{mitA, foreign}, Output: withForeign}); err != nil {
		t.Fatal(err)
	}
	checkLicensed(withForeign, "mit", "mit", "mit")

	for _, c := range []struct {
		name    string
		opts    Options
		want    error
		message string
	}{
		{"licences differ", Options{Sources: []string{mitA, mitB, ccBy}}, ErrLicenses, mitA + " is licensed mit and " + ccBy + " is licensed cc-by-4.0"},
		{"one without", Options{Sources: []string{none, mitA}}, ErrLicenses, none + " is without a licence and " + mitA + " is licensed mit"},
		{"appending another licence", Options{Sources: []string{ccBy}, Into: into}, ErrLicenses, into + " is licensed mit and " + ccBy + " is licensed cc-by-4.0"},
		{"not a Hub id", Options{Sources: []string{mitA, mitB}, License: "mit-0"}, ErrUsage, "--license mit-0: not a licence id of the Hugging Face Hub (did you mean mit?"},
	} {
		out := filepath.Join(dir, "refused-"+strings.ReplaceAll(c.name, " ", "-"))
		if c.opts.Into == "" {
			c.opts.Output = out
		}
		_, err := mergeVideo(ctx, c.opts)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.message) {
			t.Errorf("%s: %v, want %v saying %q", c.name, err, c.want, c.message)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: %s was written", c.name, out)
		}
	}
	checkLicensed(into, "mit", "mit", "mit")
}

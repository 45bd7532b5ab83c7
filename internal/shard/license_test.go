package shard

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
)

// Every licence id is one the card may write unquoted: lower case letters,
// digits, '.', '+' and '-', starting with a letter (PyYAML writes such a
// scalar plain, and it reads back as the same string), and none twice.
func TestLicenses(t *testing.T) {
	t.Parallel()
	plain := regexp.MustCompile(`^[a-z][a-z0-9.+-]*$`)
	seen := map[string]bool{}
	for _, id := range Licenses {
		if !plain.MatchString(id) {
			t.Errorf("licence id %q is not a plain lower-case YAML scalar", id)
		}
		if seen[id] {
			t.Errorf("licence id %q listed twice", id)
		}
		seen[id] = true
		var v map[string]any
		if err := yaml.Unmarshal([]byte("license: "+id), &v); err != nil || v["license"] != id {
			t.Errorf("license: %s reads back as %#v (%v)", id, v["license"], err)
		}
	}
	for _, id := range []string{"apache-2.0", "mit", "cc-by-4.0", "cc-by-nc-4.0", "cc0-1.0", "other", "unknown"} {
		if !seen[id] {
			t.Errorf("the Hub's licence %s is missing", id)
		}
	}
}

// CheckLicense takes the Hub's ids as written and names the nearest id for
// anything else: a typo, an SPDX spelling, a missing version.
func TestCheckLicense(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		id, near string // near "" : accepted
	}{
		{"apache-2.0", ""},
		{"cc-by-nc-sa-4.0", ""},
		{"openrail++", ""},
		{"llama3.1", ""},
		{"other", ""},
		{"cc-by-4", "cc-by-4.0"},
		{"CC-BY-4.0", "cc-by-4.0"},
		{"Apache-2.0", "apache-2.0"},
		{"apache2", "apache-2.0"},
		{"MIT", "mit"},
		{"cc0", "cc0-1.0"},
		{"cc-by-nc", "cc-by-nc-4.0"},
		{"lgpl-2", "lgpl-2.1"},
		{"gpl-2.0-or-later", "gpl-2.0"},
	} {
		err := CheckLicense(c.id)
		var le *LicenseError
		switch {
		case c.near == "" && err != nil:
			t.Errorf("CheckLicense(%q): %v, want it accepted", c.id, err)
		case c.near != "" && !errors.As(err, &le):
			t.Errorf("CheckLicense(%q) = %v, want a *LicenseError", c.id, err)
		case c.near != "" && (le.Near != c.near || !strings.Contains(err.Error(), "did you mean "+c.near+"?")):
			t.Errorf("CheckLicense(%q) suggests %q (%v), want %q", c.id, le.Near, err, c.near)
		}
	}
}

// cardOf writes a one-episode dataset's card for c and returns it.
func cardOf(t *testing.T, c Card) (string, error) {
	t.Helper()
	dir := t.TempDir()
	b, err := NewBuilder(dir, []Feature{{Name: "observation.state", Dtype: lerobot.Float32, Shape: []int{1}}}, Options{FPS: 10})
	if err != nil {
		t.Fatal(err)
	}
	rows := b.NewRows(2)
	rows.Len = 2
	appendValues(&rows.Columns[0], float32(0), float32(1))
	if err := b.WriteEpisode(EpisodeMeta{Task: "pick"}, rows); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(nil); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteCard(c); err != nil {
		return "", err
	}
	out, err := os.ReadFile(filepath.Join(dir, layout.CardPath))
	if err != nil {
		t.Fatal(err)
	}
	return string(out), nil
}

// A licensed card is LeRobot's create_lerobot_dataset_card(...,
// license=ID): the card without a licence, with `license: ID` as the first
// key of the card data (where DatasetCardData puts it, before
// task_categories) and the template's License line saying ID instead of
// "[More Information Needed]". Without a licence the card is the one
// LeRobot writes without it, which the conformance run compares byte for
// byte.
func TestCardLicense(t *testing.T) {
	t.Parallel()
	base := Card{Tags: []string{"CERES", "so100"}, Description: "A description."}
	plain, err := cardOf(t, base)
	if err != nil {
		t.Fatal(err)
	}
	const noLicense = "\n- **License:** [More Information Needed]\n"
	if !strings.HasPrefix(plain, "---\ntask_categories:\n- robotics\ntags:\n- LeRobot\n- CERES\n- so100\nconfigs:\n") ||
		strings.Count(plain, noLicense) != 1 || strings.Contains(plain, "license:") {
		t.Fatalf("card without a licence:\n%s", plain)
	}
	for _, id := range []string{"apache-2.0", "cc-by-nc-4.0", "openrail++", "other"} {
		c := base
		c.License = id
		want := "---\nlicense: " + id + "\n" + strings.TrimPrefix(strings.Replace(plain, noLicense, "\n- **License:** "+id+"\n", 1), "---\n")
		if got, err := cardOf(t, c); err != nil || got != want {
			t.Errorf("card licensed %s (%v):\n%s\nwant:\n%s", id, err, got, want)
		}
	}
	if slices.Contains(Licenses, "cc-by-4") {
		t.Fatal("cc-by-4 became a Hub licence id; pick another unknown id for this test")
	}
	c := base
	c.License = "cc-by-4"
	if _, err := cardOf(t, c); err == nil || !strings.Contains(err.Error(), "cc-by-4.0") {
		t.Errorf("a card licensed cc-by-4: %v, want an error naming cc-by-4.0", err)
	}
}

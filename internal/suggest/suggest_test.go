package suggest

import (
	"slices"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "mit", 3},
		{"mit", "", 3},
		{"mit", "mit", 0},
		{"cc-by-4", "cc-by-4.0", 2},
		{"--vcodce", "--vcodec", 2},
		{"kitten", "sitting", 3},
		{"apache-2.0", "apache-2.1", 1},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
}

func TestNear(t *testing.T) {
	names := []string{"output", "overwrite", "fps", "follow", "follow-idle", "output"}
	for _, tc := range []struct {
		typed string
		want  []string
	}{
		{"outptu", []string{"output"}},
		{"fol", []string{"follow", "follow-idle", "fps"}},
		{"fp", []string{"fps"}},
		{"salvage", nil},
	} {
		if got := Near(tc.typed, names); !slices.Equal(got, tc.want) {
			t.Errorf("Near(%q) = %q, want %q", tc.typed, got, tc.want)
		}
	}
}

//go:build cgo

package merge

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/verify"
)

// A merged dataset has a card that says what it was merged from, which
// verify checks against the episodes, tasks and specifications; a card
// that says anything else is an error.
func TestMergedCard(t *testing.T) {
	src := shards(t, "h264-a", "h264-crash", "h264-spec2")
	out := filepath.Join(t.TempDir(), "merged")
	if _, err := mergeVideo(context.Background(), Options{Sources: src, Output: out, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, out)
	b, err := os.ReadFile(filepath.Join(out, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	card := string(b)
	merged := readDataset(t, out)
	for _, want := range []string{
		"merged by ceres-export test from 3 shards of 3 sessions",
		"| h264-a | ", "| h264-crash | ", "| h264-spec2 | ",
		"| 0 | test | 3 | weighted-mean |",
	} {
		if !strings.Contains(card, want) {
			t.Errorf("the card lacks %q:\n%s", want, card)
		}
	}
	for h := range merged.src.specs {
		if !strings.Contains(card, "`"+h+"`") {
			t.Errorf("the card lacks specification %s", h)
		}
	}
	for _, task := range merged.tasks {
		if !strings.Contains(card, " | "+task+" | ") {
			t.Errorf("the card lacks task %q", task)
		}
	}

	// Each mutation must be caught by verify as card.provenance.
	first := merged.tasks[0]
	for _, c := range []struct{ name, old, new string }{
		{"a source's session", "| h264-a | ", "| h264-a | someone-else "},
		{"an episode range", "| 0-", "| 1-"},
		{"a task's episode count", " | " + first + " | ", " | " + first + " | 9"},
		{"a task string", " | " + first + " | ", " | renamed | "},
		{"the totals", "from 3 shards", "from 4 shards"},
		{"a specification", "| `", "| `0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "merged")
			if err := os.CopyFS(dir, os.DirFS(out)); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(card, c.old) {
				t.Fatalf("the card lacks %q", c.old)
			}
			if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(strings.Replace(card, c.old, c.new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := verify.Shard(context.Background(), dir, verify.Options{Quick: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Sound || !slices.Contains(res.Codes(), "card.provenance") {
				t.Errorf("sound=%v, codes %v; want card.provenance", res.Sound, res.Codes())
			}
		})
	}
}

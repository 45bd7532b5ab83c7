package merge

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/input"
)

// TestFileSums: a file is hashed once per identity (a hard link of it is
// the same file), and any change of size or modification time hashes it
// again.
func TestFileSums(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "a.parquet")
	if err := os.WriteFile(orig, []byte("first bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "linked.parquet")
	if err := os.Link(orig, link); err != nil {
		t.Skip("no hard links here:", err)
	}
	sums := newFileSums()
	sumOf := func(p string) string {
		t.Helper()
		info, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sums.sha256(p, info)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	first := sumOf(orig)
	if want, _, _ := input.SHA256(orig); first != want {
		t.Fatalf("sum %s, want %s", first, want)
	}
	stamp := time.Unix(1764662400, 0)
	steps := []struct {
		name   string
		change func() error
		same   bool // the remembered sum is served
	}{
		{"rewritten", func() error {
			if err := os.WriteFile(orig, []byte("other bytes"), 0o644); err != nil {
				return err
			}
			return os.Chtimes(orig, stamp, stamp)
		}, false},
		{"link of it", func() error { return nil }, true},
		{"new modification time", func() error { return os.Chtimes(orig, stamp.Add(time.Second), stamp.Add(time.Second)) }, false},
		{"new size", func() error { return os.WriteFile(orig, []byte("longer bytes now"), 0o644) }, false},
	}
	prev := first
	for _, s := range steps {
		if err := s.change(); err != nil {
			t.Fatal(err)
		}
		got := sumOf(link)
		want, _, _ := input.SHA256(link)
		if s.same && got != prev {
			t.Errorf("%s: sum %s, want the remembered %s", s.name, got, prev)
		}
		if !s.same && got != want {
			t.Errorf("%s: sum %s, want the file's %s", s.name, got, want)
		}
		prev = got
	}
	var none *fileSums
	info, _ := os.Lstat(orig)
	if got, _ := none.sha256(orig, info); got != prev {
		t.Errorf("nil fileSums: %s, want %s", got, prev)
	}
}

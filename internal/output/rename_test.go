package output

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestExchangeAndRenameNoReplace checks this platform's directory renames:
// exchange swaps two directories, renameNoReplace refuses an existing
// destination and moves into a missing one.
func TestExchangeAndRenameNoReplace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "name"), []byte(filepath.Base(d)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(d string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(d, "name"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if err := exchange(a, b); err != nil {
		t.Fatalf("exchange: %v", err)
	}
	if read(a) != "b" || read(b) != "a" {
		t.Errorf("after exchange a holds %q, b holds %q; want b, a", read(a), read(b))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("exchange left %d entries, want 2", len(entries))
	}
	if err := renameNoReplace(a, b); !errors.Is(err, fs.ErrExist) {
		t.Errorf("renameNoReplace onto an existing directory: %v, want ErrExist", err)
	}
	if read(a) != "b" || read(b) != "a" {
		t.Error("a refused renameNoReplace changed the directories")
	}
	c := filepath.Join(dir, "c")
	if err := renameNoReplace(a, c); err != nil {
		t.Fatalf("renameNoReplace onto a missing name: %v", err)
	}
	if read(c) != "b" {
		t.Errorf("c holds %q, want b", read(c))
	}
	if _, err := os.Stat(a); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a still exists after the rename: %v", err)
	}
	if err := exchange(c, a); err == nil {
		t.Error("exchange with a missing directory succeeded")
	}
}

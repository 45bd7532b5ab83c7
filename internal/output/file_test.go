package output

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "page.html")
	if err := WriteFileBytes(p, 0o644, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileBytes(p, 0o644, []byte("two")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "two" {
		t.Fatalf("content %q %v, want two", b, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	// A write that fails leaves the old file and no temporary file.
	boom := errors.New("boom")
	err = WriteFile(p, 0o644, func(w io.Writer) error {
		_, _ = w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Errorf("a failed write changed the file to %q", b)
	}
	if entries, _ := os.ReadDir(filepath.Dir(p)); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestCreateFile(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "attempt-0001.json")
	if err := CreateFile(p, 0o644, []byte("first")); err != nil {
		t.Fatal(err)
	}
	err := CreateFile(p, 0o644, []byte("second"))
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second create: %v, want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "first" {
		t.Errorf("content %q, want first", b)
	}
	if entries, _ := os.ReadDir(filepath.Dir(p)); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

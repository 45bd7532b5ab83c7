package input

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOpenRegularOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	fifoLink := filepath.Join(dir, "fifo-link")
	if err := os.Symlink(fifo, fifoLink); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want error  // nil: readable
		what string // in the message
	}{
		{file, nil, ""},
		{link, nil, ""},
		{fifo, ErrNotRegular, "named pipe"},
		{fifoLink, ErrNotRegular, "named pipe"},
		{dir, ErrNotRegular, "directory"},
		{"/dev/zero", ErrNotRegular, "device"},
		{"/dev/null", ErrNotRegular, "device"},
		{filepath.Join(dir, "missing"), os.ErrNotExist, "no such file"},
	} {
		for name, read := range map[string]func(string) error{
			"Open":     func(p string) error { f, err := Open(p); f.Close(); return err },
			"ReadFile": func(p string) error { _, err := ReadFile(p); return err },
			"Check":    Check,
		} {
			done := make(chan error, 1)
			go func() { done <- read(c.path) }()
			select {
			case err := <-done:
				if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
					t.Errorf("%s(%s) = %v, want %v", name, c.path, err, c.want)
				} else if err != nil && !contains(err.Error(), c.path, c.what) {
					t.Errorf("%s(%s): message %q does not name the file and what it is", name, c.path, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s(%s) blocks", name, c.path)
			}
		}
	}
}

// CheckEntry is Check without following links: a dataset this tool made
// holds regular files only.
func TestCheckEntry(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(file, link)
	fifo := filepath.Join(dir, "fifo")
	syscall.Mkfifo(fifo, 0o644)
	for _, c := range []struct {
		path string
		what string // "" for no error
	}{{file, ""}, {link, "symbolic link"}, {fifo, "named pipe"}, {dir, "directory"}, {"/dev/null", "device"}, {filepath.Join(dir, "nope"), "no such file"}} {
		err := CheckEntry(c.path)
		if c.what == "" && err != nil || c.what != "" && (err == nil || !contains(err.Error(), c.path, c.what)) {
			t.Errorf("CheckEntry(%s) = %v, want %q", c.path, err, c.what)
		}
		if c.what != "" && c.what != "no such file" && !errors.Is(err, ErrNotRegular) {
			t.Errorf("CheckEntry(%s) = %v, not ErrNotRegular", c.path, err)
		}
	}
}

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

package input

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
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
			"SHA256":   func(p string) error { _, _, err := SHA256(p); return err },
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

// ReadFile and SHA256 read a file whole, whatever its size against their
// buffers: empty, smaller than, as large as and larger than them.
func TestReadFileAndSHA256(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 511, 512, 513, 4096, 1 << 20, 1<<20 + 3, 3<<20 + 1} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i*7 + i>>9)
		}
		p := filepath.Join(dir, fmt.Sprintf("f%d", size))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("ReadFile of %d bytes: %d bytes, %v", size, len(got), err)
		}
		sum, n, err := SHA256(p)
		if want := sha256.Sum256(data); err != nil || n != int64(size) || sum != hex.EncodeToString(want[:]) {
			t.Errorf("SHA256 of %d bytes: %s, %d bytes, %v; want %x", size, sum, n, err, want)
		}
	}
	// A file whose size says 0 but that holds bytes: read to its end all
	// the same, as os.ReadFile does.
	const status = "/proc/self/status"
	if st, err := os.Stat(status); err == nil && st.Size() == 0 {
		got, err := ReadFile(status)
		if err != nil || !bytes.Contains(got, []byte("\nVmPeak:")) {
			t.Errorf("ReadFile(%s): %d bytes, %v; want the whole file", status, len(got), err)
		}
		if _, n, err := SHA256(status); err != nil || n < 512 {
			t.Errorf("SHA256(%s): %d bytes, %v; want the whole file", status, n, err)
		}
	}
}

// A file larger than MaxReadFile is refused before a byte of it is read:
// a sparse file of MaxReadFile+1 bytes takes no disk, and reading it whole
// would take 256 MiB.
func TestReadFileRefusesTooLarge(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		size int64
		ok   bool
	}{{MaxReadFile, true}, {MaxReadFile + 1, false}} {
		p := filepath.Join(dir, fmt.Sprintf("f%d", tc.size))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, tc.size); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(p)
		if tc.ok {
			if err != nil || int64(len(got)) != tc.size {
				t.Errorf("%d bytes: %d read, %v", tc.size, len(got), err)
			}
			continue
		}
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "at most") {
			t.Errorf("%d bytes: %d read, error %v; want ErrTooLarge naming %s and the bound", tc.size, len(got), err, p)
		}
	}
}

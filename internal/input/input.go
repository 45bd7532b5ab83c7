// Package input opens the files a command reads: regular files only. A
// named pipe, a device or a socket given where a file is expected would
// block a reader forever (or feed it endless bytes); it is an error naming
// the path instead, found without blocking.
package input

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// ErrNotRegular is the error (inside an *fs.PathError) for a path that is
// not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// kindError says what the file is instead, and matches ErrNotRegular.
type kindError struct{ what string }

func (e *kindError) Error() string        { return "is " + e.what + ", not a regular file" }
func (e *kindError) Is(target error) bool { return target == ErrNotRegular }

// Open opens path for reading if it is a regular file (after following
// links). Opening never blocks: a FIFO is opened non-blocking, found out
// and closed.
func Open(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if what := kind(uint32(st.Mode)); what != "" { // uint16 on macOS
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: path, Err: &kindError{what}}
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// ReadFile reads the whole regular file path.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Sized by the file, as os.ReadFile does: io.ReadAll's doubling made
	// a merge's most common garbage after Parquet's.
	size := 512
	if st, err := f.Stat(); err == nil && st.Size() < 1<<30 {
		size = max(int(st.Size())+1, size)
	}
	b := make([]byte, 0, size)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// Check reports an error unless path is a regular file (after following
// links), for files another library opens (FFmpeg).
func Check(path string) error {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if what := kind(uint32(st.Mode)); what != "" { // uint16 on macOS
		return &fs.PathError{Op: "open", Path: path, Err: &kindError{what}}
	}
	return nil
}

// CheckEntry reports an error unless path itself is a regular file, not a
// symbolic link to one: for the files of a dataset this tool made, which
// are only ever regular files (a link in one may point out of it).
func CheckEntry(path string) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	if what := kind(uint32(st.Mode)); what != "" { // uint16 on macOS
		return &fs.PathError{Op: "open", Path: path, Err: &kindError{what}}
	}
	return nil
}

// kind returns what a non-regular file is, "" for a regular file.
func kind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return ""
	case unix.S_IFIFO:
		return "a named pipe"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "a device"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFLNK:
		return "a symbolic link"
	}
	return "not a regular file"
}

// SHA256 returns the lowercase hex SHA-256 of the regular file path and its
// size: the one file hash every package uses (video reuse, fingerprints,
// verify, merge provenance).
func SHA256(path string) (string, int64, error) {
	f, err := Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	// A buffer no larger than the file (at most 1 MiB): io.Copy from a file
	// takes a new 32 KiB one each call, whatever the file's size.
	size := 1 << 20
	if st, err := f.Stat(); err == nil {
		size = int(min(max(st.Size(), 512), 1<<20))
	}
	buf := make([]byte, size)
	h := sha256.New()
	var n int64
	for {
		k, err := f.Read(buf)
		h.Write(buf[:k])
		n += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", 0, fmt.Errorf("hashing %s: %w", path, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

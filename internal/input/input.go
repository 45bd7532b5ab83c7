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
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// ErrNotRegular is the error (inside an *fs.PathError) for a path that is
// not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// MaxReadFile bounds a file ReadFile reads whole. Whole files are the
// small ones: a task specification, a manifest, a profile, a dataset's
// JSON metadata (a merge report of thousands of shards is a few MB). A
// source that holds more is refused before its bytes are read, so that
// the memory a command takes follows what it is asked to do, not what a
// damaged or hostile file holds.
const MaxReadFile = 256 << 20

// ErrTooLarge is the error (inside an *fs.PathError) for a file larger
// than MaxReadFile.
var ErrTooLarge = errors.New("too large to read whole")

// kindError says what the file is instead, and matches ErrNotRegular.
type kindError struct{ what string }

func (e *kindError) Error() string        { return "is " + e.what + ", not a regular file" }
func (e *kindError) Is(target error) bool { return target == ErrNotRegular }

// Open opens path for reading if it is a regular file (after following
// links). Opening never blocks: a FIFO is opened non-blocking, found out
// and closed.
func Open(path string) (*os.File, error) {
	fd, _, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// openRegular opens path non-blocking and returns its descriptor and size
// if it is a regular file (O_NONBLOCK means nothing to a regular file's
// reads).
func openRegular(path string) (int, int64, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, 0, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if what := kind(uint32(st.Mode)); what != "" { // uint16 on macOS
		unix.Close(fd)
		return -1, 0, &fs.PathError{Op: "open", Path: path, Err: &kindError{what}}
	}
	return fd, st.Size, nil
}

// ReadFile reads the whole regular file path, of at most MaxReadFile
// bytes (a larger one is an error matching ErrTooLarge, nothing read).
//
// It reads the descriptor directly, not through an *os.File: a merge
// reads thousands of small files, and the os.File's setup and second stat
// were half of each read's system calls.
func ReadFile(path string) ([]byte, error) {
	fd, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if size > MaxReadFile {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, size, MaxReadFile)}
	}
	// Sized by the file (one byte more to see the end in the same read):
	// io.ReadAll's doubling made a merge's most common garbage after
	// Parquet's.
	b := make([]byte, 0, max(min(size, 1<<30)+1, 512))
	for {
		n, err := readFull(fd, b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if len(b) < cap(b) {
			return b, nil
		}
		if len(b) > MaxReadFile { // it grew while read
			return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, MaxReadFile)}
		}
		b = append(b, 0)[:len(b)]
	}
}

// readFull reads into p until it is full or the file ends (n < len(p)),
// retrying interrupted reads.
func readFull(fd int, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k, err := unix.Read(fd, p[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if k == 0 {
			break
		}
		n += k
	}
	return n, nil
}

// SHA256 returns the lowercase hex SHA-256 of the regular file path and its
// size: the one file hash every package uses (video reuse, fingerprints,
// verify, merge provenance).
func SHA256(path string) (string, int64, error) {
	fd, size, err := openRegular(path)
	if err != nil {
		return "", 0, err
	}
	defer unix.Close(fd)
	// A buffer no larger than the file (at most 1 MiB): io.Copy from a file
	// takes a new 32 KiB one each call, whatever the file's size.
	buf := make([]byte, min(max(size+1, 512), 1<<20))
	h := sha256.New()
	var n int64
	for {
		k, err := readFull(fd, buf)
		h.Write(buf[:k])
		n += int64(k)
		if err != nil {
			return "", 0, fmt.Errorf("hashing %s: %w", path, err)
		}
		if k < len(buf) {
			return hex.EncodeToString(h.Sum(nil)), n, nil
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

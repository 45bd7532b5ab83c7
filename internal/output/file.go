package output

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ceres-robotics/ceres-export/internal/fsync"
	"github.com/ceres-robotics/ceres-export/internal/input"
)

// The one definition of a durable file write. A file outside a staging
// directory (an attempt record, a campaign page, a session page written on
// its own) is written by WriteFile or CreateFile; a file inside one needs
// neither, as Commit fsyncs the whole tree before it moves it into place.

// WriteFile writes path atomically with the bytes write produces: into a
// temporary file beside path, fsynced, made mode perm, renamed over path,
// and the directory fsynced, so a failed or killed run leaves no
// half-written file and an existing one stays until the new one is whole.
// Missing parent directories are made.
func WriteFile(path string, perm fs.FileMode, write func(io.Writer) error) error {
	tmp, err := writeTemp(path, perm, write)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return syncParent(path)
}

// WriteFileBytes is WriteFile of data.
func WriteFileBytes(path string, perm fs.FileMode, data []byte) error {
	return WriteFile(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// CreateFile writes a new file at path with data, whole or not at all,
// like WriteFile, but never replaces one: when path exists it returns an
// error that is fs.ErrExist and leaves both as they were. (The temporary
// file is hard-linked to path, which fails on a name that is taken.)
func CreateFile(path string, perm fs.FileMode, data []byte) error {
	tmp, err := writeTemp(path, perm, func(w io.Writer) error {
		_, err := io.Copy(w, bytes.NewReader(data))
		return err
	})
	if err != nil {
		return err
	}
	err = os.Link(tmp, path)
	_ = os.Remove(tmp)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", path, fs.ErrExist)
		}
		return fmt.Errorf("create %s: %w", path, err)
	}
	return syncParent(path)
}

// writeTemp writes a synced temporary file of mode perm beside path and
// returns its name.
func writeTemp(path string, perm fs.FileMode, write func(io.Writer) error) (_ string, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return "", err
	}
	// CreateTemp makes 0600; the files are for everyone to read.
	if err := f.Chmod(perm); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return f.Name(), nil
}

func syncParent(path string) error {
	if err := SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// SyncFile fsyncs the regular file at path.
func SyncFile(path string) error { return fsync.File(path) }

// SyncDir fsyncs the directory at path, making the entries made, renamed
// or removed in it durable (internal/fsync holds the one definition).
func SyncDir(path string) error { return fsync.Dir(path) }

// LinkOrCopy makes dst a hard link of src, or a copy where the file system
// cannot link: how a dataset carries a file of the dataset it replaces or
// appends to unchanged. Nothing ever writes into a file of a dataset (a
// staging directory's files are created, never rewritten), so sharing the
// inode is safe.
func LinkOrCopy(src, dst string) error {
	// link(2) does not follow a symbolic link: it would link the link,
	// which may point out of the dataset.
	if err := input.CheckEntry(src); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := input.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errors.Join(fmt.Errorf("copy %s: %w", src, err), os.Remove(dst))
	}
	return nil
}

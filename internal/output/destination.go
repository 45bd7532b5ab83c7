package output

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"golang.org/x/sys/unix"
)

// The rules every command that writes an output directory (export, merge,
// batch) follows, in one place. Stage applies all of them; CheckDestination
// applies the first three on their own so that a command can refuse before
// it does any work.
//
//  1. An output is never an input: a destination that is, contains or lies
//     inside any of the command's inputs (session directory, spec file,
//     shards being merged, ...) is refused, symbolic links resolved on both
//     sides. A file name inside a session's journal/ is refused as well as
//     the session itself.
//  2. A destination that is a symbolic link is refused (its target would be
//     written to). Links in the parent's path are resolved: the staging
//     directory, the lock file and the output all live in the destination's
//     real parent directory and nowhere else.
//  3. Replace only replaces what this tool made: a directory holding the
//     regular file layout.OutputMarkerPath ({"tool":
//     "ceres-export", "kind": ...}). Stage's Commit writes that marker into
//     every output, so shards, merged datasets and campaign outputs all
//     carry it. A regular file, a directory of other files, a FIFO, or a
//     dataset without the marker is refused, naming what is there.
//  4. One writer per destination: Stage takes an exclusive flock on
//     ".<base>.ceres-lock" beside the destination and holds it until Commit
//     or Abort; a second writer is refused with ErrDestinationBusy naming
//     the holder's pid. Because staging directories of a destination are
//     made only under its lock, every staging directory found while holding
//     the lock belongs to a process that is gone and is removed.
//
// Errors: ErrDestinationExists (exists, Replace not set) and
// ErrDestinationRefused (rules 1-3) are the caller's to fix (exit 2);
// ErrDestinationBusy is a transient failure (exit 4).

var (
	// ErrDestinationRefused is returned when a destination breaks rules 1-3
	// above: it overlaps an input, it is a symbolic link, or Replace would
	// replace something this tool did not make.
	ErrDestinationRefused = errors.New("output: destination refused")
	// ErrDestinationBusy is returned when another process holds the
	// destination's lock.
	ErrDestinationBusy = errors.New("output: destination is being written by another process")
)

// markerTool is the "tool" value of layout.OutputMarkerPath.
const markerTool = "ceres-export"

// Output kinds recorded in layout.OutputMarkerPath.
const (
	KindShard    = "shard"    // one session's export
	KindMerged   = "merged"   // shards merged into one dataset
	KindCampaign = "campaign" // a batch run's output
)

// lockSuffix ends the name of a destination's lock file:
// ".<dest-base>.ceres-lock".
const lockSuffix = ".ceres-lock"

// outputMarker is the content of layout.OutputMarkerPath.
type outputMarker struct {
	Tool string `json:"tool"`
	Kind string `json:"kind"`
}

// writeOutputMarker writes layout.OutputMarkerPath of kind into root. Its bytes
// depend only on kind (deterministic output).
func writeOutputMarker(root, kind string) error {
	p := filepath.Join(root, filepath.FromSlash(layout.OutputMarkerPath))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(outputMarker{Tool: markerTool, Kind: kind})
	if err != nil {
		return err
	}
	return os.WriteFile(p, append(b, '\n'), 0o644)
}

// KindOf returns the kind recorded in dir's layout.OutputMarkerPath, and false
// when dir is not a directory this tool made (no marker, a marker that is
// not a regular file, or not ours). It never follows a symbolic link at
// dir or at the marker and never opens anything but a regular file.
func KindOf(dir string) (string, bool) {
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", false
	}
	p := filepath.Join(dir, filepath.FromSlash(layout.OutputMarkerPath))
	if fi, err := os.Lstat(filepath.Dir(p)); err != nil || !fi.IsDir() {
		return "", false
	}
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return "", false
	}
	b, err := input.ReadFile(p)
	if err != nil {
		return "", false
	}
	var m outputMarker
	if err := json.Unmarshal(b, &m); err != nil || m.Tool != markerTool || m.Kind == "" {
		return "", false
	}
	return m.Kind, true
}

// CheckDestination applies rules 1-3 to dest for a command reading inputs
// and returns the destination's resolved path (its parent's symbolic links
// resolved, absolute). It writes nothing. Inputs that do not exist are
// compared by their absolute path.
func CheckDestination(dest string, inputs []string, replace bool) (string, error) {
	dest = filepath.Clean(dest)
	base := filepath.Base(dest)
	if base == "." || base == ".." || base == string(filepath.Separator) {
		return "", fmt.Errorf("%w: %s: not a directory name", ErrDestinationRefused, dest)
	}
	if strings.Contains(base, tempInfix) || strings.HasSuffix(base, lockSuffix) {
		return "", fmt.Errorf("%w: %s: the name is reserved for staging and lock files", ErrDestinationRefused, dest)
	}
	parent, err := realPath(filepath.Dir(dest))
	if err != nil {
		return "", fmt.Errorf("destination %s: %w", dest, err)
	}
	if fi, err := os.Stat(parent); err != nil {
		return "", fmt.Errorf("destination %s: parent directory: %w", dest, err)
	} else if !fi.IsDir() {
		return "", fmt.Errorf("%w: %s: parent %s is not a directory", ErrDestinationRefused, dest, parent)
	}
	resolved := filepath.Join(parent, base)
	for _, in := range inputs {
		real, err := realPath(in)
		if err != nil {
			return "", fmt.Errorf("input %s: %w", in, err)
		}
		switch {
		case real == resolved:
			return "", fmt.Errorf("%w: %s is the input %s", ErrDestinationRefused, dest, in)
		case within(real, resolved):
			return "", fmt.Errorf("%w: %s lies inside the input %s", ErrDestinationRefused, dest, in)
		case within(resolved, real):
			return "", fmt.Errorf("%w: %s contains the input %s", ErrDestinationRefused, dest, in)
		}
	}
	fi, err := os.Lstat(resolved)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return resolved, nil
	case err != nil:
		return "", fmt.Errorf("destination %s: %w", dest, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(resolved)
		return "", fmt.Errorf("%w: %s is a symbolic link (to %s); give the real path", ErrDestinationRefused, dest, target)
	case !replace:
		return "", fmt.Errorf("%s: %w (use --replace)", dest, ErrDestinationExists)
	}
	if _, ok := KindOf(resolved); !ok {
		why := "no " + layout.OutputMarkerPath
		if err := input.CheckEntry(filepath.Join(resolved, filepath.FromSlash(layout.OutputMarkerPath))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			why = err.Error()
		}
		return "", fmt.Errorf("%w: will not replace %s: it is %s, not an output of ceres-export (%s)",
			ErrDestinationRefused, dest, describe(resolved, fi), why)
	}
	return resolved, nil
}

// describe says what is at path, for a refusal.
func describe(path string, fi fs.FileInfo) string {
	switch m := fi.Mode(); {
	case m.IsRegular():
		return fmt.Sprintf("a regular file of %d bytes", fi.Size())
	case m.IsDir():
		entries, err := os.ReadDir(path)
		if err != nil {
			return "a directory"
		}
		names := make([]string, 0, 3)
		for _, e := range entries[:min(3, len(entries))] {
			names = append(names, e.Name())
		}
		more := ""
		if len(entries) > 3 {
			more = ", ..."
		}
		return fmt.Sprintf("a directory of %d entries (%s%s)", len(entries), strings.Join(names, ", "), more)
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a directory"
}

// realPath returns p absolute with every symbolic link resolved; for a path
// that does not exist, its longest existing prefix is resolved.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	parent := filepath.Dir(abs)
	if parent == abs {
		return abs, nil
	}
	rp, err := realPath(parent)
	if err != nil {
		return "", err
	}
	return filepath.Join(rp, filepath.Base(abs)), nil
}

// within reports whether path lies strictly inside dir (both clean and absolute).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// DestinationLock is the exclusive lock of one destination (rule 4).
type DestinationLock struct {
	f    *os.File
	path string
}

// LockDestination takes the lock of dest (a path CheckDestination
// resolved) without waiting: another holder's lock is ErrDestinationBusy.
// The lock file is removed again by Unlock; a waiter that locked a file
// already removed retries on the new one, so two holders never coexist.
func LockDestination(dest string) (*DestinationLock, error) {
	path := filepath.Join(filepath.Dir(dest), "."+filepath.Base(dest)+lockSuffix)
	for {
		fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", path, &fs.PathError{Op: "open", Path: path, Err: err})
		}
		f := os.NewFile(uintptr(fd), path)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			f.Close()
			return nil, fmt.Errorf("%w: lock %s is not a regular file", ErrDestinationRefused, path)
		}
		if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
			holder, _ := input.ReadFile(path)
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				who := strings.TrimSpace(string(holder))
				if who != "" {
					who = " (" + who + ")"
				}
				return nil, fmt.Errorf("%s: %w%s; try again when it is done", dest, ErrDestinationBusy, who)
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// The holder before us may have removed the file between our open
		// and our flock: then we hold a lock nobody else can see. Retry.
		var now unix.Stat_t
		if err := unix.Stat(path, &now); err != nil || now.Ino != st.Ino || now.Dev != st.Dev {
			f.Close()
			continue
		}
		_ = f.Truncate(0)
		_, _ = f.WriteAt([]byte("pid "+strconv.Itoa(os.Getpid())+"\n"), 0)
		return &DestinationLock{f: f, path: path}, nil
	}
}

// Unlock removes the lock file and releases the lock. It does nothing on a
// nil lock or a second call.
func (l *DestinationLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := os.Remove(l.path) // while still holding it: see LockDestination
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

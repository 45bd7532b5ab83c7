//go:build !linux && !darwin

package output

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
)

// renameNoReplace renames from to to, failing when to exists. Without an
// exclusive rename the check and the rename are two steps; the
// destination's lock (see Stage) keeps other ceres-export writers out of
// the gap.
func renameNoReplace(from, to string) error {
	if _, err := os.Lstat(to); err == nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: fs.ErrExist}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Rename(from, to)
}

// exchange swaps the directory entries from and to with three renames:
// to moves aside, from takes its place, and the old entry takes from's
// name. Between the first two renames to is missing (a reader sees no
// shard, never a half-written one); a failure of the second rename puts
// the old entry back.
func exchange(from, to string) error {
	aside := to + ".ceres-old-" + strconv.Itoa(os.Getpid())
	if err := os.Rename(to, aside); err != nil {
		return err
	}
	if err := os.Rename(from, to); err != nil {
		if back := os.Rename(aside, to); back != nil {
			return fmt.Errorf("%w (and restoring %s from %s: %v)", err, to, aside, back)
		}
		return err
	}
	return os.Rename(aside, from)
}

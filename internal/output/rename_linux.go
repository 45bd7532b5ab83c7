//go:build linux

package output

import "golang.org/x/sys/unix"

// renameNoReplace renames from to to, failing when to exists, in one
// step: renameat2(RENAME_NOREPLACE).
func renameNoReplace(from, to string) error {
	return unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
}

// exchange swaps the directory entries from and to atomically:
// renameat2(RENAME_EXCHANGE). Both must exist.
func exchange(from, to string) error {
	return unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_EXCHANGE)
}

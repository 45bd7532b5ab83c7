//go:build darwin

package output

import "golang.org/x/sys/unix"

// renameNoReplace renames from to to, failing when to exists, in one
// step: renamex_np(RENAME_EXCL).
func renameNoReplace(from, to string) error {
	return unix.RenamexNp(from, to, unix.RENAME_EXCL)
}

// exchange swaps the directory entries from and to atomically:
// renamex_np(RENAME_SWAP), which APFS and HFS+ support. Both must exist.
func exchange(from, to string) error {
	return unix.RenamexNp(from, to, unix.RENAME_SWAP)
}

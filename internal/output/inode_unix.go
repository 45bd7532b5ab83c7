//go:build linux || darwin

package output

import (
	"io/fs"
	"syscall"
)

// inode names a file: its device and inode number.
type inode struct{ dev, ino uint64 }

// inodeOf returns info's inode; ok is false where the platform does not say.
func inodeOf(info fs.FileInfo) (inode, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return inode{}, false
	}
	return inode{dev: uint64(st.Dev), ino: st.Ino}, true
}

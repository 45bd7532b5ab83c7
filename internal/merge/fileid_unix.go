//go:build linux || darwin

package merge

import (
	"io/fs"
	"syscall"
)

// fileID names a file's bytes as long as nothing writes into it.
type fileID struct {
	dev, ino uint64
	size     int64
	mtime    int64 // nanoseconds
}

// identify returns info's fileID; ok is false where the platform does not
// say (then nothing is remembered).
func identify(info fs.FileInfo) (fileID, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino, size: info.Size(), mtime: info.ModTime().UnixNano()}, true
}

// identifyDir returns a directory's identity: its device and inode.
func identifyDir(info fs.FileInfo) (fileID, bool) {
	id, ok := identify(info)
	id.size, id.mtime = 0, 0
	return id, ok
}

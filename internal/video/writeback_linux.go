package video

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to begin writing f's dirty pages to disk
// without waiting for them (sync_file_range SYNC_FILE_RANGE_WRITE), so that
// a long file's final fsync waits only for its last stretch instead of for
// all of it while nothing else runs.
func startWriteback(f *os.File) {
	_ = unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
}

//go:build !linux

package video

import "os"

// startWriteback does nothing outside Linux (see writeback_linux.go): the
// final fsync then writes the whole file.
func startWriteback(f *os.File) {}

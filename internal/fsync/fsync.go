// Package fsync makes what a writer put on disk durable: the one definition
// of a file's and a directory's fsync. It needs only the standard library,
// so that the journal writer a recorder imports uses the same directory
// fsync as the exporter's output transaction (internal/output) without
// pulling in the dataset side.
package fsync

import "os"

// File fsyncs the regular file at path.
func File(path string) error { return syncPath(path) }

// Dir fsyncs the directory at path, making the entries made, renamed or
// removed in it durable.
func Dir(path string) error { return syncPath(path) }

func syncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

//go:build !linux

package video

// withNormalScheduling runs open; the realtime requests it guards against
// on Linux (realtime_linux.go) do not apply elsewhere.
func withNormalScheduling(open func() error) error { return open() }

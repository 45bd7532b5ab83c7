//go:build !linux

package video

// MapLargeAllocations does nothing outside Linux (see malloc_linux.go).
func MapLargeAllocations(threshold int) bool { return false }

// ReturnFreedMemory does nothing outside Linux (see malloc_linux.go).
func ReturnFreedMemory() {}

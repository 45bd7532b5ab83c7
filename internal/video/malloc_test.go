package video

import "testing"

// TestMapLargeAllocations checks that glibc takes the threshold; its effect
// on a long export's peak memory is measured by BenchmarkExportMemory.
func TestMapLargeAllocations(t *testing.T) {
	if !MapLargeAllocations(128 << 10) {
		t.Error("glibc refused M_MMAP_THRESHOLD = 128 KiB")
	}
}

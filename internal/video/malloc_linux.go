package video

//#include <malloc.h>
//static int ceres_set_mmap_threshold(int n) { return mallopt(M_MMAP_THRESHOLD, n); }
//static void ceres_trim(void) { malloc_trim(0); }
import "C"

// MapLargeAllocations makes the C allocator (glibc) give every block of at
// least threshold bytes a memory mapping of its own, for the rest of the
// process. FFmpeg's MP4 muxer grows its per-frame sample index by realloc
// in steps of 1024 entries until the file is finished; by default glibc
// raises its mapping threshold as blocks are freed and then grows such an
// array inside its heap, where each step can leave the old block behind as
// a hole. A mapped block grows by mremap and goes back to the system when
// freed, so a long export holds its index and little more. Call it once at
// start, before any encoding; it reports whether the allocator took it.
func MapLargeAllocations(threshold int) bool {
	return C.ceres_set_mmap_threshold(C.int(threshold)) == 1
}

// ReturnFreedMemory hands the C allocator's free memory back to the
// system (glibc's malloc_trim(0), over every arena).
func ReturnFreedMemory() { C.ceres_trim() }

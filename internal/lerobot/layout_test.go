package lerobot

import "testing"

// TestNextChunkFile is LeRobot's update_chunk_file_indices.
func TestNextChunkFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ chunk, file, size, wantChunk, wantFile int }{
		{0, 0, 1000, 0, 1}, {0, 998, 1000, 0, 999}, {0, 999, 1000, 1, 0}, {3, 0, 1, 4, 0},
	} {
		c, f := NextChunkFile(tc.chunk, tc.file, tc.size)
		if c != tc.wantChunk || f != tc.wantFile {
			t.Errorf("next(%d,%d,%d) = (%d,%d), want (%d,%d)", tc.chunk, tc.file, tc.size, c, f, tc.wantChunk, tc.wantFile)
		}
	}
}

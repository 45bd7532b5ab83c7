package lerobot

// CodebaseVersion is the dataset format version info.json states.
const CodebaseVersion = "v3.0"

// LeRobot's default sizes.
const (
	DefaultChunksSize      = 1000 // DEFAULT_CHUNK_SIZE: files per chunk directory
	DefaultDataFileSizeMB  = 100  // DEFAULT_DATA_FILE_SIZE_IN_MB
	DefaultVideoFileSizeMB = 200  // DEFAULT_VIDEO_FILE_SIZE_IN_MB
	// BytesPerMB is the unit of the size limits: LeRobot's
	// get_file_size_in_mb divides by 1024².
	BytesPerMB = 1 << 20
)

// NextChunkFile returns the index after (chunk, file) with chunksSize files
// per chunk: LeRobot's update_chunk_file_indices.
func NextChunkFile(chunk, file, chunksSize int) (int, int) {
	if file == chunksSize-1 {
		return chunk + 1, 0
	}
	return chunk, file + 1
}

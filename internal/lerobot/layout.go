package lerobot

import "fmt"

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

// The path templates info.json states (data_path, video_path), in Python
// format syntax; DataPath, VideoPath and EpisodesPath expand them.
const (
	DataPathTemplate  = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
	VideoPathTemplate = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
)

// Paths of the metadata files, relative to the dataset root.
const (
	InfoPath  = "meta/info.json"
	StatsPath = "meta/stats.json"
	TasksPath = "meta/tasks.parquet"
)

// DataPath is the slash-separated path of data file (chunk, file).
func DataPath(chunk, file int) string {
	return fmt.Sprintf("data/chunk-%03d/file-%03d.parquet", chunk, file)
}

// VideoPath is the slash-separated path of video file (chunk, file) of the
// feature key.
func VideoPath(key string, chunk, file int) string {
	return fmt.Sprintf("videos/%s/chunk-%03d/file-%03d.mp4", key, chunk, file)
}

// EpisodesPath is the slash-separated path of episode-metadata file
// (chunk, file).
func EpisodesPath(chunk, file int) string {
	return fmt.Sprintf("meta/episodes/chunk-%03d/file-%03d.parquet", chunk, file)
}

// NextChunkFile returns the index after (chunk, file) with chunksSize files
// per chunk: LeRobot's update_chunk_file_indices.
func NextChunkFile(chunk, file, chunksSize int) (int, int) {
	if file == chunksSize-1 {
		return chunk + 1, 0
	}
	return chunk, file + 1
}

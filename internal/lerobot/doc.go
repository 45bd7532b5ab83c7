// Package lerobot is the one home of the LeRobot v3.0 dataset rules that
// plan, video, shard and verify all rely on, so that none of them keeps its
// own copy:
//
// The frame clock. A dataset has one integer rate fps in [1, MaxFPS]. An
// episode whose window on the journal clock (integer nanoseconds) is
// [s, e) has
//
//	Length(s, e, fps)    = floor((e - s) * fps / 1e9)
//	FrameTime(s, k, fps) = s + round(k * 1e9 / fps)   (round half up)
//
// both exact, with 128-bit intermediates, so a frame's time depends on k
// alone and never accumulates error, and no int64 window overflows. Every
// frame k < Length lies inside [s, e).
//
// The layout. Data, video and episode-metadata files are numbered by a
// (chunk, file) index pair. A writer starts a new file when the current one
// would reach its size limit (data_files_size_in_mb, default 100;
// video_files_size_in_mb, default 200; both counted in MiB, as LeRobot's
// get_file_size_in_mb does), and steps the pair as LeRobot's
// update_chunk_file_indices: the file index counts up to chunks_size - 1
// (default 1000), then the chunk index steps and the file index returns to
// 0. The files' names are internal/layout's, with every other path of a
// dataset.
//
// The dtypes. One table (dtype.go) says what every feature dtype is: its
// element size and little-endian decoding, the Arrow type datasets gives
// it, the Parquet leaf pyarrow writes, and the column operations every
// writer and reader uses (Values). The package imports nothing of
// ceres-export's own, so that shard and video depend on no journal: export
// maps the journal's field dtypes onto this table at its boundary.
//
// The sources are lerobot/datasets/utils.py (DEFAULT_CHUNK_SIZE,
// DEFAULT_DATA_FILE_SIZE_IN_MB, DEFAULT_VIDEO_FILE_SIZE_IN_MB,
// update_chunk_file_indices) of
// LeRobot 0.4; docs/lerobot-format.md describes them in prose.
package lerobot

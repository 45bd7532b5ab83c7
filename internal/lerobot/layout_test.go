package lerobot

import "testing"

// TestNextChunkFile is LeRobot's update_chunk_file_indices.
func TestNextChunkFile(t *testing.T) {
	for _, tc := range []struct{ chunk, file, size, wantChunk, wantFile int }{
		{0, 0, 1000, 0, 1}, {0, 998, 1000, 0, 999}, {0, 999, 1000, 1, 0}, {3, 0, 1, 4, 0},
	} {
		c, f := NextChunkFile(tc.chunk, tc.file, tc.size)
		if c != tc.wantChunk || f != tc.wantFile {
			t.Errorf("next(%d,%d,%d) = (%d,%d), want (%d,%d)", tc.chunk, tc.file, tc.size, c, f, tc.wantChunk, tc.wantFile)
		}
	}
}

// TestPaths checks that the path functions expand the templates info.json
// states.
func TestPaths(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{DataPath(0, 7), "data/chunk-000/file-007.parquet"},
		{DataPath(1234, 5), "data/chunk-1234/file-005.parquet"},
		{VideoPath("observation.images.front", 2, 999), "videos/observation.images.front/chunk-002/file-999.mp4"},
		{EpisodesPath(0, 0), "meta/episodes/chunk-000/file-000.parquet"},
	} {
		if tc.got != tc.want {
			t.Errorf("path %q, want %q", tc.got, tc.want)
		}
	}
	// The templates, expanded the way Python's str.format does for these
	// fields, give the same paths.
	if got := pyFormat(DataPathTemplate, map[string]string{"chunk_index": "003", "file_index": "014"}); got != DataPath(3, 14) {
		t.Errorf("DataPathTemplate expands to %q, DataPath to %q", got, DataPath(3, 14))
	}
	if got := pyFormat(VideoPathTemplate, map[string]string{"video_key": "k", "chunk_index": "003", "file_index": "014"}); got != VideoPath("k", 3, 14) {
		t.Errorf("VideoPathTemplate expands to %q, VideoPath to %q", got, VideoPath("k", 3, 14))
	}
}

// pyFormat replaces each {name} or {name:03d} field of tmpl by vals[name].
func pyFormat(tmpl string, vals map[string]string) string {
	out := []byte{}
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '{' {
			out = append(out, tmpl[i])
			continue
		}
		j := i + 1
		for tmpl[j] != '}' {
			j++
		}
		name := tmpl[i+1 : j]
		for k := range name {
			if name[k] == ':' {
				name = name[:k]
				break
			}
		}
		out = append(out, vals[name]...)
		i = j
	}
	return string(out)
}

package shard

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// TestReadBackMemoryDoesNotGrowWithRowGroups: a data file holds one row
// group per episode, and a merge of thousands of short takes writes one
// file of thousands of them. Reading its footer back must cost the
// footer's bytes, not a decoded copy of every row group's column
// metadata (about 11 times the footer: 45 MB for the 4,000 episodes of a
// 1,000-shard merge, the largest part of its peak memory).
func TestReadBackMemoryDoesNotGrowWithRowGroups(t *testing.T) {
	feats := fixtureFeatures[:1]
	type file struct {
		path          string
		rows          int64
		groups        int
		footer, alloc int64
	}
	write := func(episodes int) file {
		dir := t.TempDir()
		w, err := NewDataWriter(dir, feats, DataWriterOptions{FPS: 10})
		if err != nil {
			t.Fatal(err)
		}
		const n = 3
		for e := range episodes {
			if _, err := w.WriteEpisode(int64(e), 0, &EpisodeRows{Len: n, Columns: []ColumnData{ColumnOf(make([]float32, 3*n))}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f := file{path: filepath.Join(dir, layout.DataPath(0, 0)), rows: int64(n * episodes), groups: episodes}
		b, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		f.footer = int64(binary.LittleEndian.Uint32(b[len(b)-8:]))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := verifyDataFile(f.path, f.rows, f.groups); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		f.alloc = int64(after.TotalAlloc - before.TotalAlloc)
		return f
	}
	small, large := write(10), write(2000)
	grew, footerGrew := large.alloc-small.alloc, large.footer-small.footer
	t.Logf("read back: %d row groups %d B allocated (footer %d B), %d row groups %d B (footer %d B)",
		small.groups, small.alloc, small.footer, large.groups, large.alloc, large.footer)
	if grew > 3*footerGrew {
		t.Errorf("reading back %d more row groups allocated %d B more, over 3 times the %d B their footer grew by", large.groups-small.groups, grew, footerGrew)
	}
	// The read-back still refuses a file that is not what was written.
	if err := verifyDataFile(large.path, large.rows+1, large.groups); err == nil {
		t.Errorf("read back of %d rows expecting %d: no error", large.rows, large.rows+1)
	}
	if err := verifyDataFile(large.path, large.rows, large.groups-1); err == nil {
		t.Errorf("read back of %d row groups expecting %d: no error", large.groups, large.groups-1)
	}
}

package shard

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// parquetGoDataFiles writes episodes as parquet-go's own writer does, one
// writer per data file and a flush per episode, rotating by LeRobot's
// rule on its Size: the files DataWriter must reproduce byte for byte.
func parquetGoDataFiles(t *testing.T, dir string, features []Feature, limit int64, episodes []*EpisodeRows) []string {
	t.Helper()
	w, err := NewDataWriter(t.TempDir(), features, DataWriterOptions{FPS: 10, FileSizeBytes: limit, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	var (
		pw        *parquet.GenericWriter[any]
		f         *os.File
		files     []string
		fileRows  int64
		from      int64
		fileIndex int
	)
	closeFile := func() {
		if err := pw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for e, b := range episodes {
		if pw != nil {
			size := pw.Size()
			perFrame := float64(size) / float64(fileRows)
			if float64(size)+float64(perFrame*float64(b.Len)) >= float64(limit) {
				closeFile()
				pw, fileIndex = nil, fileIndex+1
			}
		}
		if pw == nil {
			path := filepath.Join(dir, fmt.Sprintf("file-%03d.parquet", fileIndex))
			if f, err = os.Create(path); err != nil {
				t.Fatal(err)
			}
			pw = parquet.NewGenericWriter[any](f, w.wopts...)
			files, fileRows = append(files, path), 0
		}
		n := b.Len
		cols := make([]*ColumnData, 0, len(b.Columns)+5)
		for i := range b.Columns {
			cols = append(cols, &b.Columns[i])
		}
		ts, frame, ep, index, task := make([]float32, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		for k := range n {
			ts[k], frame[k], ep[k], index[k] = float32(float64(k)/10), int64(k), int64(e), from+int64(k)
		}
		cols = append(cols, &ColumnData{v: ts}, &ColumnData{v: frame}, &ColumnData{v: ep}, &ColumnData{v: index}, &ColumnData{v: task})
		for i, cw := range pw.ColumnWriters() {
			if err := w.writeColumn(cw, w.columns[i], cols[i], n, &w.scratch[0]); err != nil {
				t.Fatal(err)
			}
		}
		if err := pw.Flush(); err != nil {
			t.Fatal(err)
		}
		fileRows += int64(n)
		from += int64(n)
	}
	closeFile()
	return files
}

// TestDataFilesAreParquetGoWriters: the data files, written a row group
// at a time with the metadata kept out of memory, are byte for byte those
// of parquet-go's writer, with one row group and with more than 14 (the
// footer's list header takes another form), in one file and rotated.
func TestDataFilesAreParquetGoWriters(t *testing.T) {
	t.Parallel()
	features := fixtureFeatures[:len(fixtureFeatures)-1]
	for _, tc := range []struct {
		name     string
		episodes int
		limit    int64
	}{
		{"one episode", 1, 1 << 30},
		{"three episodes", 3, 1 << 30},
		{"forty episodes", 40, 1 << 30},
		{"forty episodes rotated", 40, 12 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var episodes []*EpisodeRows
			for e := range tc.episodes {
				b := NewEpisodeRows(features, 0)
				fillFixtureBatch(b, e, 5+e%7)
				episodes = append(episodes, b)
			}
			want := parquetGoDataFiles(t, t.TempDir(), features, tc.limit, episodes)
			dir := t.TempDir()
			w, err := NewDataWriter(dir, features, DataWriterOptions{FPS: 10, FileSizeBytes: tc.limit, Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			for e, b := range episodes {
				if _, err := w.WriteEpisode(int64(e), 0, b); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got := w.Files()
			if len(got) != len(want) {
				t.Fatalf("%d data files, parquet-go's writer wrote %d", len(got), len(want))
			}
			for i := range got {
				a, b := readFile(t, filepath.Join(dir, got[i])), readFile(t, want[i])
				if !bytes.Equal([]byte(a), []byte(b)) {
					t.Errorf("%s: %d bytes differ from parquet-go's writer's %d (first difference at %d)", got[i], len(a), len(b), firstByteDiff(a, b))
				}
			}
			entries, err := os.ReadDir(filepath.Join(dir, filepath.Dir(layout.DataPath(0, 0))))
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != len(got) {
				t.Errorf("%d files beside the data files, want %d: the spill files must go", len(entries), len(got))
			}
		})
	}
}

func firstByteDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestEpisodesInPassesArePqarrowRecord: meta/episodes built in several
// passes over the spooled episodes, a share of the columns each, is byte
// for byte the file pqarrow writes of one record of every episode.
func TestEpisodesInPassesArePqarrowRecord(t *testing.T) {
	t.Parallel()
	b := buildFixtureUnfinished(t, t.TempDir(), fixtureOptions)
	defer b.episodes.close()
	cols := episodeColumns(b.videos, b.statsFts, b.opts.SourceColumns)
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = c.field
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer rb.Release()
	err := b.episodes.each(func(e *episodeRecord) error {
		for j, c := range cols {
			c.append(rb.Field(j), e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	dir := t.TempDir()
	want := filepath.Join(dir, "record.parquet")
	if err := writeArrowParquet(want, rec, "ceres-export", false); err != nil {
		t.Fatal(err)
	}
	for _, passes := range []int{1, 3, len(cols), 2 * len(cols)} {
		got := filepath.Join(dir, fmt.Sprintf("passes-%d.parquet", passes))
		if err := writeEpisodes(got, cols, b.episodes.each, passes, "ceres-export"); err != nil {
			t.Fatal(err)
		}
		if a, b := readFile(t, got), readFile(t, want); a != b {
			t.Errorf("%d passes: %d bytes differ from pqarrow's record's %d (first difference at %d)", passes, len(a), len(b), firstByteDiff(a, b))
		}
	}
}

// buildFixtureUnfinished writes the fixture's episodes, without Finish.
func buildFixtureUnfinished(t *testing.T, dir string, opts Options) *Builder {
	t.Helper()
	b, err := NewBuilder(dir, fixtureFeatures, opts)
	if err != nil {
		t.Fatal(err)
	}
	batch := b.NewRows(16)
	for e, meta := range fixtureEpisodes(opts.FPS) {
		fillFixtureBatch(batch, e, fixtureEpisodeLens[e])
		if err := b.WriteEpisode(meta, batch); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

package pqcolumns

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/ceres-robotics/ceres-export/internal/input"
)

// wholeFileLimit is the size up to which a file is read into memory with
// one read before its footer is parsed: each column chunk is then a copy
// instead of a read of its own (a meta/episodes file of a small shard has
// about 150). Larger files (data files up to LeRobot's 100 MB) are read a
// column chunk at a time, as they are decoded.
const wholeFileLimit = 8 << 20

// File is one Parquet file opened for reading whole columns: its footer
// and schema manifest parsed once, and each column decoded once for every
// reader that asks for it (a merge's reader of a source and verify's check
// of the same source, through Files).
type File struct {
	fr     *pqarrow.FileReader
	shared bool // owned by a Files, which closes it

	mu   sync.Mutex
	cols map[string]arrow.Array
	rows int64 // rows of the first read that kept a column; -1 before
}

// Open opens the Parquet file at path for the caller alone (see
// Files.Open); pages, when not nil, allocates the page readers' buffers.
func Open(path string, pages memory.Allocator) (*File, error) {
	return openFile(path, pages, wholeFileLimit)
}

// openFile is Open, reading the file whole when it is at most whole bytes.
func openFile(path string, pages memory.Allocator, whole int64) (*File, error) {
	// Opened through input: a FIFO in a dataset must not block the reader.
	f, err := input.Open(path)
	if err != nil {
		return nil, err
	}
	var src parquet.ReaderAtSeeker = f
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.Size() <= whole {
		b := make([]byte, st.Size())
		_, err := io.ReadFull(f, b)
		f.Close()
		if err != nil {
			return nil, err
		}
		src = bytes.NewReader(b)
	}
	var opts []file.ReadOption
	if pages != nil {
		opts = append(opts, file.WithReadProps(parquet.NewReaderProperties(pages)))
	}
	pf, err := file.NewParquetReader(src, opts...)
	if err != nil {
		if c, ok := src.(io.Closer); ok {
			c.Close()
		}
		return nil, err
	}
	// Each column's reader reserves BatchSize values up front: a batch no
	// larger than the file keeps a small table's read from allocating
	// megabytes per column (meta/episodes has a few rows and hundreds of
	// columns; a merge reads one per source).
	batch := min(max(pf.NumRows(), 1), 1<<16)
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batch}, memory.DefaultAllocator)
	if err != nil {
		pf.Close()
		return nil, err
	}
	return &File{fr: fr, cols: map[string]arrow.Array{}, rows: -1}, nil
}

// Reader is the file's pqarrow reader (its metadata and schema manifest).
func (f *File) Reader() *pqarrow.FileReader { return f.fr }

// Columns returns, from every row group, the columns whose top-level name
// keep accepts (nil: all), as Read does, decoding only those no earlier
// call decoded. The caller releases the arrays.
func (f *File) Columns(ctx context.Context, keep func(name string) bool) (map[string]arrow.Array, int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sc := f.fr.ParquetReader().MetaData().Schema
	wanted := map[string]bool{}
	missing := false
	for i := 0; i < sc.NumColumns(); i++ {
		name := sc.Column(i).ColumnPath()[0]
		if keep == nil || keep(name) {
			wanted[name] = true
			if _, ok := f.cols[name]; !ok {
				missing = true
			}
		}
	}
	if missing {
		cols, rows, err := Read(ctx, f.fr, func(name string) bool {
			_, done := f.cols[name]
			return wanted[name] && !done
		})
		if err != nil {
			return nil, 0, err
		}
		if f.rows >= 0 && rows != f.rows {
			for _, a := range cols {
				a.Release()
			}
			return nil, 0, fmt.Errorf("columns of %d rows, others of %d", rows, f.rows)
		}
		f.rows = rows
		for name, a := range cols {
			f.cols[name] = a
		}
	}
	out := make(map[string]arrow.Array, len(wanted))
	for name := range wanted {
		if a, ok := f.cols[name]; ok {
			a.Retain()
			out[name] = a
		}
	}
	if len(out) == 0 {
		return out, 0, nil
	}
	return out, f.rows, nil
}

// Close releases the decoded columns and the file, unless a Files holds
// it: then Files.Close does.
func (f *File) Close() {
	if !f.shared {
		f.close()
	}
}

func (f *File) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.cols {
		a.Release()
	}
	f.cols = nil
	f.fr.ParquetReader().Close()
}

// Files opens each Parquet file once for several readers of one dataset:
// a merge hands a source's Files to the shard reader and to verify's quick
// check, so that each file's footer (50 KB of Thrift in a small shard's
// meta/episodes) is parsed, and each column decoded, once, and verify
// checks exactly the columns the merge reads. A nil *Files shares nothing.
type Files struct {
	pages memory.Allocator

	mu     sync.Mutex
	byPath map[string]*File
	opened int
}

// NewFiles returns an empty set whose files allocate page buffers from
// pages (nil: Go's allocator).
func NewFiles(pages memory.Allocator) *Files {
	return &Files{pages: pages, byPath: map[string]*File{}}
}

// Open returns the file at path, opened on the first call. On a nil set it
// opens a file of the caller's own. Either way the caller calls Close.
func (s *Files) Open(path string) (*File, error) {
	if s == nil {
		return Open(path, nil)
	}
	key := filepath.Clean(path)
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.byPath[key]; ok {
		return f, nil
	}
	f, err := Open(path, s.pages)
	if err != nil {
		return nil, err
	}
	f.shared = true
	s.byPath[key] = f
	s.opened++
	return f, nil
}

// Opened is the number of times the set opened a file.
func (s *Files) Opened() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opened
}

// Close closes every file of the set; later Opens open them again.
func (s *Files) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, f := range s.byPath {
		f.close()
		delete(s.byPath, k)
	}
}

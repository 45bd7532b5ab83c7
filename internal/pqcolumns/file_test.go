package pqcolumns

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// parquetPath writes parquetBytes(n, rowGroup) under a temporary
// directory.
func parquetPath(t *testing.T, n, rowGroup int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.parquet")
	if err := os.WriteFile(p, parquetBytes(t, n, rowGroup), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// columnsJSON is the columns' values as JSON, by name.
func columnsJSON(t *testing.T, cols map[string]arrow.Array) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, a := range cols {
		b, err := a.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		out[name] = string(b)
		a.Release()
	}
	return out
}

// A file of a set is opened once, whoever asks, and decodes each column
// once; what it returns equals what a file of the caller's own returns,
// with or without pooled page buffers, over one or several row groups.
func TestFilesShareOneOpenAndDecode(t *testing.T) {
	ctx := context.Background()
	only := func(names ...string) func(string) bool {
		return func(n string) bool { return slices.Contains(names, n) }
	}
	for _, tc := range []struct {
		name        string
		rows, group int
		pages       memory.Allocator
	}{
		{"one row group", 7, 10, nil},
		{"three row groups", 7, 3, nil},
		{"three row groups, pooled pages", 7, 3, &PagePool{}},
		{"no rows", 0, 3, &PagePool{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := parquetPath(t, tc.rows, tc.group)
			own, err := (*Files)(nil).Open(path)
			if err != nil {
				t.Fatal(err)
			}
			allCols, allRows, err := own.Columns(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := columnsJSON(t, allCols)
			own.Close()

			set := NewFiles(tc.pages)
			defer set.Close()
			for i, keep := range []func(string) bool{only("index"), only("index", "values"), nil, only("name"), func(string) bool { return false }} {
				// The same file under another spelling of its path.
				p := path
				if i%2 == 1 {
					p = filepath.Join(filepath.Dir(path), ".", filepath.Base(path))
				}
				f, err := set.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				cols, rows, err := f.Columns(ctx, keep)
				if err != nil {
					t.Fatal(err)
				}
				f.Close() // the set's: still open
				got := columnsJSON(t, cols)
				wantRows := allRows
				if len(got) == 0 {
					wantRows = 0
				}
				if rows != wantRows {
					t.Errorf("read %d: %d rows, want %d", i, rows, wantRows)
				}
				for name, v := range got {
					if v != want[name] {
						t.Errorf("read %d: column %s = %s, want %s", i, name, v, want[name])
					}
				}
				for name := range want {
					if (keep == nil || keep(name)) && got[name] == "" {
						t.Errorf("read %d: column %s missing", i, name)
					}
				}
			}
			if n := set.Opened(); n != 1 {
				t.Errorf("opened %d times, want once", n)
			}
			set.Close()
			if _, err := set.Open(path); err != nil || set.Opened() != 2 {
				t.Errorf("after Close: %v, opened %d times, want a second open", err, set.Opened())
			}
			// Read a column chunk at a time, as a file larger than
			// wholeFileLimit is: the same values.
			streamed, err := openFile(path, tc.pages, 0)
			if err != nil {
				t.Fatal(err)
			}
			cols, _, err := streamed.Columns(ctx, nil)
			streamed.Close()
			if err != nil {
				t.Fatal(err)
			}
			for name, v := range columnsJSON(t, cols) {
				if v != want[name] {
					t.Errorf("read a chunk at a time: column %s = %s, want %s", name, v, want[name])
				}
			}
		})
	}
}

// A file that is not Parquet is an error of Open, and a set does not keep
// it.
func TestFilesOpenRefusesNonParquet(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.parquet")
	if err := os.WriteFile(p, []byte("not parquet at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	set := NewFiles(nil)
	defer set.Close()
	if _, err := set.Open(p); err == nil {
		t.Fatal("opened a file that is not Parquet")
	}
	if set.Opened() != 0 {
		t.Errorf("the set kept a file that failed to open")
	}
}

func TestPagePool(t *testing.T) {
	for _, tc := range []struct {
		size, wantCap int
	}{
		{1, 1 << minPageShift},
		{1 << minPageShift, 1 << minPageShift},
		{1<<minPageShift + 1, 1 << (minPageShift + 1)},
		{16 << 10, 16 << 10},
		{16<<10 + 64, 32 << 10},
		{1 << maxPageShift, 1 << maxPageShift},
		{1<<maxPageShift + 1, 1<<maxPageShift + 1}, // outside the pool
	} {
		p := &PagePool{}
		b := p.Allocate(tc.size)
		if len(b) != tc.size || cap(b) != tc.wantCap {
			t.Errorf("Allocate(%d): len %d cap %d, want cap %d", tc.size, len(b), cap(b), tc.wantCap)
		}
		for i := range b {
			b[i] = 0xff
		}
		p.Free(b)
		// A recycled buffer (sync.Pool may also hand out a new one) is
		// zeroed like a new one.
		again := p.Allocate(tc.size)
		for i, v := range again {
			if v != 0 {
				t.Fatalf("Allocate(%d) after Free: byte %d is %#x, want 0", tc.size, i, v)
			}
		}
		// Growing keeps the contents and zeroes the rest.
		again[0] = 7
		grown := p.Reallocate(2*tc.size+1, again)
		if len(grown) != 2*tc.size+1 || grown[0] != 7 {
			t.Fatalf("Reallocate(%d): len %d, first byte %d", 2*tc.size+1, len(grown), grown[0])
		}
		for i, v := range grown[1:] {
			if v != 0 {
				t.Fatalf("Reallocate(%d): byte %d is %#x, want 0", 2*tc.size+1, i+1, v)
			}
		}
		// Shrinking keeps the buffer.
		if s := p.Reallocate(1, grown); len(s) != 1 || s[0] != 7 {
			t.Fatalf("Reallocate(1): %v", s)
		}
	}
	// A slice of a size no class has is left to the collector.
	p := &PagePool{}
	p.Free(make([]byte, 3000))
	if b := p.Allocate(3000); cap(b) != 4096 {
		t.Errorf("a freed 3000-byte slice was handed out again (cap %d)", cap(b))
	}
}

package pqcolumns

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// stringsFile is a zstd Parquet file of one string column, task, holding
// values, and a list<string> column, tasks, holding each value once.
func stringsFile(t *testing.T, values ...string) *pqarrow.FileReader {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "task", Type: arrow.BinaryTypes.String},
		{Name: "tasks", Type: arrow.ListOf(arrow.BinaryTypes.String)},
	}, nil)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer rb.Release()
	lb := rb.Field(1).(*array.ListBuilder)
	for _, v := range values {
		rb.Field(0).(*array.StringBuilder).Append(v)
		lb.Append(true)
		lb.ValueBuilder().(*array.StringBuilder).Append(v)
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithStats(false))
	if err := pqarrow.WriteTable(tbl, &buf, int64(len(values)), props, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pf.Close() })
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	return fr
}

// A string of MaxStringBytes is read; one byte more is refused, in either
// column: a little over the bound after decoding, far over it by the
// column chunk's metadata, before its pages are decompressed.
func TestReadBoundsStrings(t *testing.T) {
	for _, tc := range []struct {
		name    string
		longest int
		keep    string
		refused bool
		// unread: refused by the metadata, before decoding.
		unread bool
	}{
		{"at the bound", MaxStringBytes, "", false, false},
		{"a byte over", MaxStringBytes + 1, "task", true, false},
		{"a byte over, in a list", MaxStringBytes + 1, "tasks", true, false},
		{"far over", 4 << 20, "task", true, true},
		{"far over, in a list", 4 << 20, "tasks", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr := stringsFile(t, "pick the cube", strings.Repeat("x", tc.longest))
			var keep func(string) bool
			if tc.keep != "" {
				keep = func(name string) bool { return name == tc.keep }
			}
			cols, _, err := Read(context.Background(), fr, keep)
			if !tc.refused {
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range cols {
					a.Release()
				}
				return
			}
			if !errors.Is(err, ErrStringTooLong) || !strings.Contains(err.Error(), tc.keep) {
				t.Fatalf("%v, want ErrStringTooLong naming column %s", err, tc.keep)
			}
			if unread := strings.Contains(err.Error(), "values take"); unread != tc.unread {
				t.Errorf("%v: refused by the metadata %v, want %v", err, unread, tc.unread)
			}
		})
	}
}

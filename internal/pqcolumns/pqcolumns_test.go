package pqcolumns

import (
	"bytes"
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// parquetBytes is a Parquet file (snappy) of index (int64), values
// (list<double>, two per row) and name (string) for n rows, rowGroup rows
// to a row group.
func parquetBytes(t *testing.T, n, rowGroup int) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "index", Type: arrow.PrimitiveTypes.Int64},
		{Name: "values", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
		{Name: "name", Type: arrow.BinaryTypes.String},
	}, nil)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer rb.Release()
	lb := rb.Field(1).(*array.ListBuilder)
	for i := range n {
		rb.Field(0).(*array.Int64Builder).Append(int64(i))
		lb.Append(true)
		lb.ValueBuilder().(*array.Float64Builder).AppendValues([]float64{float64(i), -float64(i)}, nil)
		rb.Field(2).(*array.StringBuilder).Append(string(rune('a' + i%26)))
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy))
	if err := pqarrow.WriteTable(tbl, &buf, int64(rowGroup), props, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// parquetFile opens parquetBytes(n, rowGroup).
func parquetFile(t *testing.T, n, rowGroup int) *pqarrow.FileReader {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(parquetBytes(t, n, rowGroup)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pf.Close() })
	if want := max((n+rowGroup-1)/rowGroup, 1); pf.NumRowGroups() != want {
		t.Fatalf("%d row groups, want %d", pf.NumRowGroups(), want)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	return fr
}

func TestRead(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		rows, group int // of the file
		keep        func(string) bool
		want        []string
		wantRows    int
	}{
		{"every column, one row group", 4, 10, nil, []string{"index", "name", "values"}, 4},
		{"every column, three row groups", 5, 2, nil, []string{"index", "name", "values"}, 5},
		{"a list column by its top-level name", 5, 2, func(n string) bool { return n == "values" }, []string{"values"}, 5},
		{"no column: no rows read", 5, 2, func(string) bool { return false }, nil, 0},
		{"no rows: empty arrays", 0, 2, nil, []string{"index", "name", "values"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr := parquetFile(t, tc.rows, tc.group)
			cols, rows, err := Read(ctx, fr, tc.keep)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for n := range cols {
				names = append(names, n)
			}
			slices.Sort(names)
			if rows != int64(tc.wantRows) || !reflect.DeepEqual(names, tc.want) {
				t.Fatalf("%d rows, columns %q; want %d, %q", rows, names, tc.wantRows, tc.want)
			}
			for name, a := range cols {
				if a.Len() != tc.rows {
					t.Errorf("%s: %d values, want %d", name, a.Len(), tc.rows)
				}
				defer a.Release()
			}
			if idx, ok := cols["index"].(*array.Int64); ok {
				for i := range tc.rows {
					if idx.Value(i) != int64(i) {
						t.Errorf("index[%d] = %d", i, idx.Value(i))
					}
				}
			}
			if vals, ok := cols["values"].(*array.List); ok {
				got := vals.ListValues().(*array.Float64).Float64Values()
				for i := range tc.rows {
					if lo, hi := vals.ValueOffsets(i); hi-lo != 2 || got[lo] != float64(i) || got[lo+1] != -float64(i) {
						t.Errorf("values[%d] = %v", i, got[lo:hi])
					}
				}
			}
		})
	}
}

package verify

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/pqcolumns"
)

// pqTable is one Parquet file read whole through pqarrow: the Arrow schema
// pyarrow would reconstruct (ARROW:schema honoured), each column as one
// array, and the row groups' sizes.
type pqTable struct {
	Schema    *arrow.Schema
	Rows      int64
	RowGroups []int64
	cols      map[string]arrow.Array
}

// readParquet reads path whole. Tables in a shard are small enough (LeRobot
// caps data files at 100 MB) to hold.
func readParquet(ctx context.Context, path string) (*pqTable, error) {
	return readParquetColumns(ctx, path, nil)
}

// readParquetColumns reads the columns of path that keep accepts (by
// top-level name; nil: all). The schema is always the file's whole one.
func readParquetColumns(ctx context.Context, path string, keep func(name string) bool) (*pqTable, error) {
	f, err := input.Open(path)
	if err != nil {
		return nil, err
	}
	pf, err := file.NewParquetReader(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	cols, rows, err := pqcolumns.Read(ctx, fr, keep)
	if err != nil {
		return nil, err
	}
	t := &pqTable{Schema: manifestSchema(fr.Manifest), Rows: rows, cols: cols}
	for i := 0; i < pf.NumRowGroups(); i++ {
		t.RowGroups = append(t.RowGroups, pf.MetaData().RowGroup(i).NumRows())
	}
	return t, nil
}

// manifestSchema is the file's Arrow schema with its metadata (the file's
// key-value metadata, "pandas" among it) as pyarrow's read_table shows it;
// the table's schema does not carry it. It is what pqarrow's
// FileReader.Schema returns, built from the manifest the reader already
// holds: Schema builds that manifest again, decoding ARROW:schema a second
// time (a tenth of a merge's quick verify of small shards).
func manifestSchema(m *pqarrow.SchemaManifest) *arrow.Schema {
	fields := make([]arrow.Field, len(m.Fields))
	for i, f := range m.Fields {
		fields[i] = *f.Field
	}
	if m.OriginSchema != nil {
		meta := m.OriginSchema.Metadata()
		return arrow.NewSchema(fields, &meta)
	}
	return arrow.NewSchema(fields, m.SchemaMeta)
}

// col returns the column name, or nil.
func (t *pqTable) col(name string) arrow.Array { return t.cols[name] }

// int64Col returns column name as int64 values when its type is int64;
// ok is false when it is missing or of another type.
func (t *pqTable) int64Col(name string) (*array.Int64, bool) {
	a, ok := t.cols[name].(*array.Int64)
	return a, ok
}

// typeString names an Arrow type as pyarrow prints it.
func typeString(t arrow.DataType) string {
	if t == nil {
		return "missing"
	}
	switch tt := t.(type) {
	case *arrow.FixedSizeListType:
		return fmt.Sprintf("fixed_size_list<item: %s>[%d]", typeString(tt.Elem()), tt.Len())
	case *arrow.ListType:
		return fmt.Sprintf("list<item: %s>", typeString(tt.Elem()))
	}
	return t.String()
}

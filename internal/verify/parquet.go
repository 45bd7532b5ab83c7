package verify

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
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
func (c *checker) readParquet(path string) (*pqTable, error) {
	return c.readParquetColumns(path, nil)
}

// readParquetColumns reads the columns of path that keep accepts (by
// top-level name; nil: all), through Options.Parquet when the caller shares
// its files. The schema is always the file's whole one.
func (c *checker) readParquetColumns(path string, keep func(name string) bool) (*pqTable, error) {
	f, err := c.opts.Parquet.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cols, rows, err := f.Columns(c.ctx, keep)
	if err != nil {
		return nil, err
	}
	fr := f.Reader()
	t := &pqTable{Schema: manifestSchema(fr.Manifest), Rows: rows, cols: cols}
	md := fr.ParquetReader().MetaData()
	for i := 0; i < md.NumRowGroups(); i++ {
		t.RowGroups = append(t.RowGroups, md.RowGroup(i).NumRows())
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

// Package pqcolumns reads whole columns of a Parquet file through arrow-go's
// pqarrow: the top-level columns a caller keeps, over every row group, each
// as one Arrow array. The shard reader and verify's independent reader
// both read this way; each decides what it opens, with which properties,
// and what it checks.
package pqcolumns

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Read reads, from every row group of fr's file, the columns whose
// top-level name keep accepts (nil: all) and returns them by name, each
// one array (a column of no chunks an empty one), and the number of rows
// read (0 when no column is). The caller releases the arrays.
func Read(ctx context.Context, fr *pqarrow.FileReader, keep func(name string) bool) (map[string]arrow.Array, int64, error) {
	pf := fr.ParquetReader()
	var leaves, groups []int
	sc := pf.MetaData().Schema
	for i := 0; i < sc.NumColumns(); i++ {
		if keep == nil || keep(sc.Column(i).ColumnPath()[0]) {
			leaves = append(leaves, i)
		}
	}
	for i := 0; i < pf.NumRowGroups(); i++ {
		groups = append(groups, i)
	}
	tbl, err := fr.ReadRowGroups(ctx, leaves, groups)
	if err != nil {
		return nil, 0, err
	}
	defer tbl.Release()
	cols := make(map[string]arrow.Array, tbl.NumCols())
	for i := 0; i < int(tbl.NumCols()); i++ {
		col := tbl.Column(i)
		chunks := col.Data().Chunks()
		var a arrow.Array
		switch len(chunks) {
		case 0:
			a = array.MakeArrayOfNull(memory.DefaultAllocator, col.DataType(), 0)
		case 1:
			a = chunks[0]
			a.Retain()
		default:
			if a, err = array.Concatenate(chunks, memory.DefaultAllocator); err != nil {
				for _, done := range cols {
					done.Release()
				}
				return nil, 0, fmt.Errorf("column %s: %w", col.Name(), err)
			}
		}
		cols[col.Name()] = a
	}
	return cols, tbl.NumRows(), nil
}

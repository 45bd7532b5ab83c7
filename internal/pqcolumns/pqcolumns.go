// Package pqcolumns reads whole columns of a Parquet file through arrow-go's
// pqarrow: the top-level columns a caller keeps, over every row group, each
// as one Arrow array. The shard reader and verify's independent reader
// both read this way; each decides what it opens, with which properties,
// and what it checks.
package pqcolumns

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// MaxStringBytes bounds every string value of a Parquet file read here: a
// task is a sentence, and the other strings of a dataset (session ids,
// names, hashes, instruction texts) are shorter still. Without a bound a
// file holds what memory does not: a 33 KB zstd file can hold a 1 GiB
// string, which decoding took about 25 times over.
const MaxStringBytes = 64 << 10

// ErrStringTooLong marks a file holding a string longer than
// MaxStringBytes.
var ErrStringTooLong = errors.New("a string longer than the bound")

// checkStringBounds refuses, before anything is decoded, a string column
// chunk that its own metadata says is larger than its values could be if
// each were at most MaxStringBytes long (plus a length prefix each and a
// margin for page headers): its pages are never decompressed.
func checkStringBounds(pf *file.Reader, leaves []int) error {
	md := pf.MetaData()
	for _, leaf := range leaves {
		col := md.Schema.Column(leaf)
		if !isString(col) {
			continue
		}
		for g := 0; g < pf.NumRowGroups(); g++ {
			cc, err := md.RowGroup(g).ColumnChunk(leaf)
			if err != nil {
				return fmt.Errorf("column %s row group %d: %w", col.Path(), g, err)
			}
			limit := cc.NumValues()*(MaxStringBytes+4) + 1<<20
			if size := cc.TotalUncompressedSize(); size > limit {
				return fmt.Errorf("column %s row group %d: %w: %d values take %d bytes; a string holds at most %d bytes", col.Path(), g, ErrStringTooLong, cc.NumValues(), size, MaxStringBytes)
			}
		}
	}
	return nil
}

func isString(col *schema.Column) bool {
	if col.PhysicalType() != parquet.Types.ByteArray {
		return false
	}
	_, ok := col.LogicalType().(schema.StringLogicalType)
	return ok || col.ConvertedType() == schema.ConvertedTypes.UTF8
}

// checkStrings refuses a decoded column (string, or list of strings)
// holding a string longer than MaxStringBytes: a file whose metadata
// understated it.
func checkStrings(name string, a arrow.Array) error {
	if l, ok := a.(array.ListLike); ok {
		return checkStrings(name, l.ListValues())
	}
	s, ok := a.(*array.String)
	if !ok {
		return nil
	}
	for i := 0; i < s.Len(); i++ {
		if n := s.ValueLen(i); n > MaxStringBytes {
			return fmt.Errorf("column %s row %d: %w: %d bytes, at most %d", name, i, ErrStringTooLong, n, MaxStringBytes)
		}
	}
	return nil
}

// Read reads, from every row group of fr's file, the columns whose
// top-level name keep accepts (nil: all) and returns them by name, each
// one array (a column of no chunks an empty one), and the number of rows
// read (0 when no column is). The caller releases the arrays. A string
// column that holds, or by its metadata may hold, a string longer than
// MaxStringBytes is an error matching ErrStringTooLong.
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
	if err := checkStringBounds(pf, leaves); err != nil {
		return nil, 0, err
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
		if err := checkStrings(col.Name(), a); err != nil {
			for _, done := range cols {
				done.Release()
			}
			return nil, 0, err
		}
	}
	return cols, tbl.NumRows(), nil
}

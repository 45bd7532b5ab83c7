package shard

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/pqcolumns"
)

// table is one Parquet file read through pqarrow, each column one array.
// Metadata files and LeRobot data files (100 MB at most) fit.
type table struct {
	path string
	rows int
	cols map[string]arrow.Array
}

// readTable reads every column of the Parquet file at path.
func readTable(ctx context.Context, files *pqcolumns.Files, path string) (*table, error) {
	return readColumns(ctx, files, path, nil)
}

// readColumns reads the columns of the Parquet file at path whose name
// keep accepts (nil: all), through files (nil: a file of its own). Each
// column read costs a page reader with buffers of its own (16 KiB at
// least), whatever the column holds: most of a small meta/episodes file's
// read goes to statistics columns that a reader of its episodes does not
// need.
func readColumns(ctx context.Context, files *pqcolumns.Files, path string, keep func(name string) bool) (*table, error) {
	f, err := files.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	cols, rows, err := f.Columns(ctx, keep)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &table{path: path, rows: int(rows), cols: cols}, nil
}

func (t *table) release() {
	for _, a := range t.cols {
		a.Release()
	}
}

// retain returns the table again, its columns retained for the caller's
// release.
func (t *table) retain() *table {
	cols := make(map[string]arrow.Array, len(t.cols))
	for name, a := range t.cols {
		a.Retain()
		cols[name] = a
	}
	return &table{path: t.path, rows: t.rows, cols: cols}
}

// bytes is the memory the table's columns hold: their buffers' capacity.
func (t *table) bytes() int64 {
	var n int64
	var add func(d arrow.ArrayData)
	add = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b != nil {
				n += int64(b.Cap())
			}
		}
		for _, c := range d.Children() {
			add(c)
		}
	}
	for _, a := range t.cols {
		add(a.Data())
	}
	return n
}

func (t *table) has(name string) bool { _, ok := t.cols[name]; return ok }

func (t *table) int64s(name string) (*array.Int64, error) {
	a, ok := t.cols[name].(*array.Int64)
	if !ok {
		return nil, fmt.Errorf("%s: column %s: want int64, found %s", t.path, name, typeName(t.cols[name]))
	}
	return a, nil
}

func (t *table) float64s(name string) (*array.Float64, error) {
	a, ok := t.cols[name].(*array.Float64)
	if !ok {
		return nil, fmt.Errorf("%s: column %s: want double, found %s", t.path, name, typeName(t.cols[name]))
	}
	return a, nil
}

func (t *table) strings(name string) (*array.String, error) {
	a, ok := t.cols[name].(*array.String)
	if !ok {
		return nil, fmt.Errorf("%s: column %s: want string, found %s", t.path, name, typeName(t.cols[name]))
	}
	return a, nil
}

func typeName(a arrow.Array) string {
	if a == nil {
		return "no such column"
	}
	return a.DataType().String()
}

// stringList returns row i of a list<string> column.
func stringList(a arrow.Array, i int) ([]string, error) {
	l, ok := a.(*array.List)
	if !ok {
		return nil, fmt.Errorf("want list<string>, found %s", typeName(a))
	}
	vals, ok := l.ListValues().(*array.String)
	if !ok {
		return nil, fmt.Errorf("want list<string>, found %s", typeName(a))
	}
	lo, hi := l.ValueOffsets(i)
	out := make([]string, 0, hi-lo)
	for j := lo; j < hi; j++ {
		out = append(out, vals.Value(int(j)))
	}
	return out, nil
}

// numbers flattens row i of a stats column (list<double>, list<int64>,
// list<bool> or the video form list<list<list<double>>>) to float64s.
func numbers(a arrow.Array, i int) ([]float64, error) {
	var out []float64
	var walk func(a arrow.Array, lo, hi int) error
	walk = func(a arrow.Array, lo, hi int) error {
		switch v := a.(type) {
		case *array.List:
			for j := lo; j < hi; j++ {
				s, e := v.ValueOffsets(j)
				if err := walk(v.ListValues(), int(s), int(e)); err != nil {
					return err
				}
			}
		case *array.Float64:
			out = append(out, v.Float64Values()[lo:hi]...)
		case *array.Int64:
			for _, x := range v.Int64Values()[lo:hi] {
				out = append(out, float64(x))
			}
		case *array.Boolean:
			for j := lo; j < hi; j++ {
				if v.Value(j) {
					out = append(out, 1)
				} else {
					out = append(out, 0)
				}
			}
		default:
			return fmt.Errorf("unexpected stats type %s", typeName(a))
		}
		return nil
	}
	if err := walk(a, i, i+1); err != nil {
		return nil, err
	}
	return out, nil
}

// fillColumn copies rows [lo, hi) of a data column into c for feature f,
// row-major as ColumnData expects.
func fillColumn(f Feature, a arrow.Array, lo, hi int, c *ColumnData) error {
	width := f.Shape[0]
	vals := a
	vlo, vhi := lo, hi
	switch l := a.(type) {
	case *array.FixedSizeList:
		if int(l.DataType().(*arrow.FixedSizeListType).Len()) != width {
			return fmt.Errorf("feature %s: list length %d, want %d", f.Name, l.DataType().(*arrow.FixedSizeListType).Len(), width)
		}
		vals = l.ListValues()
		off := l.Offset()
		vlo, vhi = (off+lo)*width, (off+hi)*width
	case *array.List:
		vals = l.ListValues()
		s, _ := l.ValueOffsets(lo)
		_, e := l.ValueOffsets(hi - 1)
		if int(e-s) != (hi-lo)*width {
			return fmt.Errorf("feature %s: %d values in rows %d..%d, want %d per row", f.Name, e-s, lo, hi, width)
		}
		vlo, vhi = int(s), int(e)
	default:
		if width != 1 {
			return fmt.Errorf("feature %s: want a list of %d, found %s", f.Name, width, typeName(a))
		}
	}
	values, ok := f.Dtype.Values(), false
	if values != nil {
		c.v, ok = values.ReadArrow(c.v, vals, vlo, vhi)
	}
	if !ok {
		return fmt.Errorf("feature %s: dtype %s, column holds %s", f.Name, f.Dtype, typeName(vals))
	}
	return nil
}

// arrayColumn reads one value of a ceres/* column: a string or int64, nil
// for a null.
type arrayColumn interface{ value(i int) any }

type stringColumn struct{ *array.String }

func (c stringColumn) value(i int) any {
	if c.IsNull(i) {
		return nil
	}
	return c.Value(i)
}

type int64Column struct{ *array.Int64 }

func (c int64Column) value(i int) any {
	if c.IsNull(i) {
		return nil
	}
	return c.Value(i)
}

// column returns column name read as dtype (lerobot.String or Int64).
func (t *table) column(name string, dtype lerobot.Dtype) (arrayColumn, error) {
	switch dtype {
	case lerobot.String:
		a, err := t.strings(name)
		return stringColumn{a}, err
	case lerobot.Int64:
		a, err := t.int64s(name)
		return int64Column{a}, err
	}
	return nil, fmt.Errorf("%s: column %s: no reader for dtype %s", t.path, name, dtype)
}

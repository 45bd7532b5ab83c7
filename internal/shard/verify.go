package shard

import (
	"bytes"
	"encoding/base64"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/parquet-go/parquet-go"

	"github.com/ceres-robotics/ceres-export/internal/input"
)

// DecodeArrowSchema decodes the value of an "ARROW:schema" key (base64 of an
// Arrow IPC stream holding the schema message).
func DecodeArrowSchema(value string) (*arrow.Schema, error) {
	raw, err := base64.StdEncoding.DecodeString(value)
	if err != nil {
		return nil, fmt.Errorf("ARROW:schema: %w", err)
	}
	r, err := ipc.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("ARROW:schema: %w", err)
	}
	defer r.Release()
	return r.Schema(), nil
}

// verifyDataFile reads a finished data file's footer back and checks what
// readers rely on: the row and row-group counts, and that ARROW:schema (which
// Arrow readers match to the Parquet columns by position) names the same
// columns in the same order with matching physical types.
func verifyDataFile(path string, rows int64, rowGroups int) error {
	f, err := input.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return fmt.Errorf("%s: read back: %w", path, err)
	}
	if pf.NumRows() != rows || len(pf.RowGroups()) != rowGroups {
		return fmt.Errorf("%s: read back %d rows in %d row groups, wrote %d in %d", path, pf.NumRows(), len(pf.RowGroups()), rows, rowGroups)
	}
	value, ok := pf.Lookup("ARROW:schema")
	if !ok {
		return fmt.Errorf("%s: no ARROW:schema metadata", path)
	}
	as, err := DecodeArrowSchema(value)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := arrowMatchesParquet(as, pf.Schema()); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// arrowMatchesParquet checks, position by position, that every top-level
// Arrow field has the Parquet field's name, list-ness and physical type.
func arrowMatchesParquet(as *arrow.Schema, ps *parquet.Schema) error {
	pfields := ps.Fields()
	if len(pfields) != as.NumFields() {
		return fmt.Errorf("ARROW:schema has %d fields, Parquet %d", as.NumFields(), len(pfields))
	}
	for i, pf := range pfields {
		af := as.Field(i)
		if af.Name != pf.Name() {
			return fmt.Errorf("column %d: ARROW:schema names %q, Parquet %q", i, af.Name, pf.Name())
		}
		at := af.Type
		leaf := parquet.Node(pf)
		if fsl, ok := at.(*arrow.FixedSizeListType); ok {
			if pf.Leaf() {
				return fmt.Errorf("column %d %q: ARROW:schema has a list, Parquet a primitive", i, af.Name)
			}
			at = fsl.Elem()
			leaf = pf.Fields()[0].Fields()[0] // LIST > repeated list > element
		} else if !pf.Leaf() {
			return fmt.Errorf("column %d %q: ARROW:schema has %s, Parquet a group", i, af.Name, at)
		}
		if !leaf.Leaf() {
			return fmt.Errorf("column %d %q: nested Parquet groups are not written", i, af.Name)
		}
		want, ok := physicalKindOf(at)
		if !ok || leaf.Type().Kind() != want {
			return fmt.Errorf("column %d %q: ARROW:schema type %s does not fit Parquet %s", i, af.Name, at, leaf.Type())
		}
	}
	return nil
}

func physicalKindOf(t arrow.DataType) (parquet.Kind, bool) {
	switch t.ID() {
	case arrow.FLOAT32:
		return parquet.Float, true
	case arrow.FLOAT64:
		return parquet.Double, true
	case arrow.INT32, arrow.UINT8:
		return parquet.Int32, true
	case arrow.INT64:
		return parquet.Int64, true
	case arrow.BOOL:
		return parquet.Boolean, true
	case arrow.STRING:
		return parquet.ByteArray, true
	}
	return 0, false
}

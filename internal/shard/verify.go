package shard

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

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
//
// Only the footer's schema, row count and key-value metadata are decoded;
// its row groups are counted and skipped. A data file holds one row group
// per episode, and decoding each one's column metadata (as opening the file
// with a Parquet reader does) cost about 11 times the footer's bytes: 45 MB
// for the 4,000 short episodes of a 1,000-shard merge, the largest part of
// its peak memory.
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
	footer, err := readFooter(f, st.Size())
	if err != nil {
		return fmt.Errorf("%s: read back: %w", path, err)
	}
	if footer.NumRows != rows || len(footer.RowGroups) != rowGroups {
		return fmt.Errorf("%s: read back %d rows in %d row groups, wrote %d in %d", path, footer.NumRows, len(footer.RowGroups), rows, rowGroups)
	}
	i := slices.IndexFunc(footer.KeyValueMetadata, func(kv format.KeyValue) bool { return kv.Key == "ARROW:schema" })
	if i < 0 {
		return fmt.Errorf("%s: no ARROW:schema metadata", path)
	}
	as, err := DecodeArrowSchema(footer.KeyValueMetadata[i].Value)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := arrowMatchesParquet(as, footer.Schema); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// footerSummary is the part of a Parquet FileMetaData verifyDataFile
// checks (the thrift field ids are the format's); the decoder skips the
// fields it does not name, and each row group decodes to nothing.
type footerSummary struct {
	Schema           []format.SchemaElement `thrift:"2,required"`
	NumRows          int64                  `thrift:"3,required"`
	RowGroups        []struct{}             `thrift:"4,required"`
	KeyValueMetadata []format.KeyValue      `thrift:"5,optional"`
}

// readFooter decodes the footer of the Parquet file f of size bytes.
func readFooter(f io.ReaderAt, size int64) (*footerSummary, error) {
	const magic = "PAR1"
	var tail [8]byte
	if size < int64(2*len(magic)+4) {
		return nil, fmt.Errorf("%d bytes: too short for a Parquet file", size)
	}
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return nil, fmt.Errorf("footer length at offset %d: %w", size-8, err)
	}
	if string(tail[4:]) != magic {
		return nil, fmt.Errorf("offset %d: magic %q, want %q", size-4, tail[4:], magic)
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-int64(2*len(magic)+4) {
		return nil, fmt.Errorf("offset %d: footer of %d bytes in a file of %d", size-8, n, size)
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, size-8-n); err != nil {
		return nil, fmt.Errorf("footer at offset %d: %w", size-8-n, err)
	}
	var fs footerSummary
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), b, &fs); err != nil {
		return nil, fmt.Errorf("footer at offset %d: %w", size-8-n, err)
	}
	return &fs, nil
}

// schemaNode is one element of a Parquet schema with its children, rebuilt
// from the depth-first list the footer holds.
type schemaNode struct {
	elem     *format.SchemaElement
	children []schemaNode
}

// schemaTree rebuilds the node at elems[0] and returns what follows it.
func schemaTree(elems []format.SchemaElement) (schemaNode, []format.SchemaElement, error) {
	if len(elems) == 0 {
		return schemaNode{}, nil, fmt.Errorf("schema: an element's children run past the end")
	}
	node, rest := schemaNode{elem: &elems[0]}, elems[1:]
	n, _ := elems[0].NumChildren.Get()
	if n < 0 || int(n) > len(rest) {
		return schemaNode{}, nil, fmt.Errorf("schema: %q has %d children, %d elements follow", elems[0].Name, n, len(rest))
	}
	for range n {
		var child schemaNode
		var err error
		if child, rest, err = schemaTree(rest); err != nil {
			return schemaNode{}, nil, err
		}
		node.children = append(node.children, child)
	}
	return node, rest, nil
}

func (n schemaNode) leaf() bool { return len(n.children) == 0 }

// arrowMatchesParquet checks, position by position, that every top-level
// Arrow field has the Parquet field's name, list-ness and physical type.
func arrowMatchesParquet(as *arrow.Schema, elems []format.SchemaElement) error {
	root, rest, err := schemaTree(elems)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("schema: %d elements after the root's", len(rest))
	}
	pfields := root.children
	if len(pfields) != as.NumFields() {
		return fmt.Errorf("ARROW:schema has %d fields, Parquet %d", as.NumFields(), len(pfields))
	}
	for i, pf := range pfields {
		af := as.Field(i)
		if af.Name != pf.elem.Name {
			return fmt.Errorf("column %d: ARROW:schema names %q, Parquet %q", i, af.Name, pf.elem.Name)
		}
		at := af.Type
		leaf := pf
		if fsl, ok := at.(*arrow.FixedSizeListType); ok {
			if pf.leaf() {
				return fmt.Errorf("column %d %q: ARROW:schema has a list, Parquet a primitive", i, af.Name)
			}
			// LIST > repeated list > element
			if len(pf.children) != 1 || len(pf.children[0].children) != 1 {
				return fmt.Errorf("column %d %q: Parquet list is not LIST > list > element", i, af.Name)
			}
			at = fsl.Elem()
			leaf = pf.children[0].children[0]
		} else if !pf.leaf() {
			return fmt.Errorf("column %d %q: ARROW:schema has %s, Parquet a group", i, af.Name, at)
		}
		if !leaf.leaf() {
			return fmt.Errorf("column %d %q: nested Parquet groups are not written", i, af.Name)
		}
		want, ok := physicalKindOf(at)
		got, typed := leaf.elem.Type.Get()
		if !ok || !typed || parquet.Kind(got) != want {
			return fmt.Errorf("column %d %q: ARROW:schema type %s does not fit Parquet %s", i, af.Name, at, parquet.Kind(got))
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

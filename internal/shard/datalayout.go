package shard

import (
	"bytes"
	"encoding/base64"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/parquet-go/parquet-go"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
)

// dataColumns lists the data file columns in LeRobot's order: the caller's
// non-video features, then the five defaults.
func dataColumns(features []Feature) []Feature {
	var cols []Feature
	for _, f := range features {
		if f.Dtype != lerobot.Video {
			cols = append(cols, f)
		}
	}
	return append(cols, defaultFeatures...)
}

// orderedGroup is a parquet group whose fields keep the given order
// (parquet.Group sorts fields by name; LeRobot's column order is the feature
// order, and ARROW:schema is matched to the Parquet columns by position).
type orderedGroup struct {
	parquet.Group
	names []string
}

// Fields returns the group's fields in construction order.
func (g orderedGroup) Fields() []parquet.Field {
	byName := g.Group.Fields()
	out := make([]parquet.Field, 0, len(byName))
	for _, n := range g.names {
		for _, f := range byName {
			if f.Name() == n {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// parquetLeaf is the Parquet leaf of a dtype as pyarrow writes it (the
// dtype table's).
func parquetLeaf(dtype lerobot.Dtype) parquet.Node {
	if n := dtype.ParquetLeaf(); n != nil {
		return n
	}
	panic("shard: no Parquet type for dtype " + string(dtype))
}

// dataFileLayout builds the Parquet schema (REQUIRED columns; a vector is a
// 3-level LIST of required elements, the layout pyarrow gives a non-nullable
// fixed_size_list) and the writer options: snappy, v1 data pages, a fixed
// created_by, and the "huggingface" and "ARROW:schema" key-value metadata.
//
// arrowColumns lists the columns for ARROW:schema and equals columns; only
// the drift test passes a different order.
func dataFileLayout(columns, arrowColumns []Feature, createdBy string) (*parquet.Schema, []parquet.WriterOption, error) {
	g := orderedGroup{Group: parquet.Group{}}
	fields := make([]arrow.Field, len(arrowColumns))
	for i, f := range arrowColumns {
		fields[i] = arrowField(f)
	}
	for _, f := range columns {
		var node parquet.Node = parquet.Required(parquetLeaf(f.Dtype))
		if f.isVector() {
			node = parquet.List(parquet.Required(parquetLeaf(f.Dtype)))
		}
		g.Group[f.Name] = node
		g.names = append(g.names, f.Name)
	}
	schema := parquet.NewSchema("schema", g)
	hf, err := huggingfaceMetadata(columns)
	if err != nil {
		return nil, nil, fmt.Errorf("shard: huggingface metadata: %w", err)
	}
	md := arrow.NewMetadata([]string{"huggingface"}, []string{hf})
	arrowSchema, err := serializeArrowSchema(arrow.NewSchema(fields, &md))
	if err != nil {
		return nil, nil, err
	}
	opts := []parquet.WriterOption{
		schema,
		parquet.Compression(&parquet.Snappy),
		parquet.DataPageVersion(1),
		createdByOption(createdBy),
		parquet.KeyValueMetadata("huggingface", hf),
		parquet.KeyValueMetadata("ARROW:schema", arrowSchema),
	}
	return schema, opts, nil
}

// serializeArrowSchema encodes s as Arrow's Parquet writers store it under
// "ARROW:schema": an IPC stream holding only the schema message
// (continuation marker, length, flatbuffer) and the end-of-stream marker,
// base64 standard encoding.
func serializeArrowSchema(s *arrow.Schema) (string, error) {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(s))
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("shard: serialise Arrow schema: %w", err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// createdByOption sets the footer's created_by verbatim (parquet.CreatedBy
// appends a build hash).
type createdByOption string

// ConfigureWriter implements parquet.WriterOption.
func (o createdByOption) ConfigureWriter(c *parquet.WriterConfig) { c.CreatedBy = string(o) }

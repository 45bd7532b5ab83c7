package shard

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

func TestScratch(t *testing.T) {
	dir := t.TempDir()
	feats := []Feature{{Name: "observation.state", Dtype: "float32", Shape: []int{3}}, {Name: "grip", Dtype: "bool", Shape: []int{1}}}
	w, err := NewDataWriter(dir, feats, DataWriterOptions{FPS: 10})
	if err != nil {
		t.Fatal(err)
	}
	b := &EpisodeBatch{Len: 2, Columns: []ColumnData{{Float32: []float32{1, 2, 3, 4, 5, 6}}, {Bool: []bool{true, false}}}}
	if _, err := w.WriteEpisode(0, 0, b); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteEpisode(1, 0, b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "data/chunk-000/file-000.parquet")
	data, _ := os.ReadFile(p)
	os.WriteFile("/tmp/dw/x.parquet", data, 0o644)
	rdr, err := file.OpenParquetFile(p, false)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Log(tbl.Schema())
	t.Log(rdr.NumRowGroups(), tbl.NumRows())
	for i := 0; i < int(tbl.NumCols()); i++ {
		t.Log(tbl.Column(i).Data().Chunk(0))
	}
	t.Log(rdr.MetaData().GetCreatedBy(), rdr.MetaData().Schema)
}

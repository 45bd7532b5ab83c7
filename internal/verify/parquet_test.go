//go:build cgo

package verify

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// The schema verify checks is pqarrow's FileReader.Schema, built from the
// reader's manifest instead of a second one: the same fields and the same
// metadata for every Parquet file of a shard.
func TestManifestSchemaIsFileReaderSchema(t *testing.T) {
	var paths []string
	err := filepath.WalkDir(goodShard(t).shard, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".parquet") {
			paths = append(paths, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 3 {
		t.Fatalf("found %d Parquet files in the fixture, want data, episodes and tasks", len(paths))
	}
	withMetadata := 0
	for _, path := range paths {
		rel, _ := filepath.Rel(goodShard(t).shard, path)
		t.Run(rel, func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			pf, err := file.NewParquetReader(f)
			if err != nil {
				t.Fatal(err)
			}
			defer pf.Close()
			fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
			if err != nil {
				t.Fatal(err)
			}
			want, err := fr.Schema()
			if err != nil {
				t.Fatal(err)
			}
			got := manifestSchema(fr.Manifest)
			if !got.Equal(want) || !got.Metadata().Equal(want.Metadata()) {
				t.Errorf("manifest schema\n%s\nwant FileReader.Schema\n%s", got, want)
			}
			if want.Metadata().Len() > 0 {
				withMetadata++
			}
		})
	}
	if withMetadata == 0 {
		t.Error("no file has schema metadata: the comparison checked none")
	}
}

package merge

import (
	"context"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/pqcolumns"
)

// A source is opened and quick-verified through one set of Parquet files:
// each of its Parquet files is opened (its footer parsed) once for both,
// whatever path spelling the shard reader and verify each build.
func TestSourceOpenAndVerifyShareParquetFiles(t *testing.T) {
	for _, name := range []string{"h264-a", "h264-crash"} {
		t.Run(name, func(t *testing.T) {
			dir := fixtureShard(t, name)
			var parquets int
			if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
					parquets++
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			files := pqcolumns.NewFiles(&pqcolumns.PagePool{})
			defer files.Close()
			// As Merge gives it: a path with a trailing separator.
			given := dir + string(filepath.Separator)
			s, err := openSource(context.Background(), given, files)
			if err != nil {
				t.Fatal(err)
			}
			opened := files.Opened()
			if err := verifySource(context.Background(), s, false, files, newFileSums(), slog.New(slog.DiscardHandler)); err != nil {
				t.Fatal(err)
			}
			if opened == 0 || files.Opened() != parquets {
				t.Errorf("opened %d Parquet files to read the source, %d after verifying it; the shard has %d, each to be opened once", opened, files.Opened(), parquets)
			}
		})
	}
}

package merge

import (
	"context"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// The writer's decoder stopped by a cancellation never leaves the writer
// waiting for a source it will not decode.
func TestDecodeAheadCancelledNeverBlocks(t *testing.T) {
	var sources []*source
	for _, name := range []string{"h264-a", "h264-crash", "h264-a", "h264-crash"} {
		s, err := openSource(context.Background(), fixtureShard(t, name), nil)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, s)
	}
	for round := range 40 {
		ctx, cancel := context.WithCancel(context.Background())
		m := &merger{sources: sources, pages: &pqcolumns.PagePool{}}
		d := m.decodeAhead(ctx)
		d.wait(0)
		d.done(0)
		if round%2 == 1 {
			time.Sleep(time.Millisecond) // let it decode the next one first
		}
		cancel()
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			for si := 1; si < len(sources); si++ {
				d.wait(si)
				d.done(si)
			}
			d.stop()
		}()
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the writer still waits for its decoder 10 s after a cancellation", round)
		}
	}
}

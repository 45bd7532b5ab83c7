//go:build cgo

package verify

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/pqcolumns"
	shardpkg "github.com/ceres-robotics/ceres-export/internal/shard"
)

// TestQuickLeavesEpisodeStatisticsUndecoded: a quick verify decodes every
// meta/episodes column it checks and none of the per-episode statistics
// (most of the file, and nothing a quick verify checks or a merge of a
// shard keeps); the full verify decodes them all. Each case overwrites one
// column chunk's bytes.
func TestQuickLeavesEpisodeStatisticsUndecoded(t *testing.T) {
	cases := []struct {
		column      string // first column whose path starts so
		quickCaught bool
	}{
		{layout.ColLength, true},
		{layout.ColDatasetFromIndex, true},
		{"videos/", true},
		{"ceres/", true},
		{layout.StatsColumnPrefix, false},
	}
	for _, tc := range cases {
		t.Run(tc.column, func(t *testing.T) {
			shard := copyShard(t)
			corruptColumnChunk(t, filepath.Join(shard, filepath.FromSlash(layout.EpisodesPath(0, 0))), tc.column)
			for _, quick := range []bool{true, false} {
				res, err := shardVideo(context.Background(), shard, Options{Quick: quick})
				if err != nil {
					t.Fatal(err)
				}
				caught := res.Count(SeverityError) > 0
				if want := tc.quickCaught || !quick; caught != want {
					t.Errorf("quick %v: sound %v, errors %d, want an error: %v\n%v", quick, res.Sound, res.Count(SeverityError), want, res.Findings)
				}
				// Through files a merge's reader opened first (its columns
				// decoded, some of them), verify finds the same.
				files := pqcolumns.NewFiles(&pqcolumns.PagePool{})
				if ds, err := shardpkg.Open(shard); err == nil {
					ds.Parquet = files
					_, _ = ds.Episodes(context.Background())
				}
				shared, err := shardVideo(context.Background(), shard, Options{Quick: quick, Parquet: files})
				files.Close()
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(shared, res) {
					t.Errorf("quick %v: through shared files\n%v\nwant\n%v", quick, shared.Findings, res.Findings)
				}
			}
		})
	}
}

// corruptColumnChunk overwrites the bytes of the first column chunk of
// path whose column path starts with prefix.
func corruptColumnChunk(t *testing.T, path, prefix string) {
	t.Helper()
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	var off, n int64 = -1, 0
	rg := r.MetaData().RowGroup(0)
	for i := 0; i < rg.NumColumns(); i++ {
		cc, err := rg.ColumnChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(cc.PathInSchema().String(), prefix) {
			off, n = cc.DataPageOffset(), cc.TotalCompressedSize()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 {
				off = cc.DictionaryPageOffset()
			}
			break
		}
	}
	r.Close()
	if off < 0 {
		t.Fatalf("%s: no column %s*", path, prefix)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := off; i < off+n; i++ {
		data[i] = 0xff
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

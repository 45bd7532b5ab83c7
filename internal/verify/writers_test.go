//go:build cgo

package verify

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// A finding about a file another program wrote names that program, so that
// a user knows it is not the exporter's to fix; our own files name none.
func TestFindingsNameAForeignWriter(t *testing.T) {
	const pyarrow = "parquet-cpp-arrow version 26.0.1"
	shard := copyShard(t)
	// A LeRobot edit rewrote meta/episodes with a task that is not the
	// specification's, and left the data file as we wrote it, with a gap.
	mutateParquet(t, filepath.Join(shard, filepath.FromSlash(layout.EpisodesPath(0, 0))), func(m *mtable) {
		m.mapString(layout.ColTaskLabel, func(i int, v string) string { return v + " (edited)" })
	}, parquet.WithCreatedBy(pyarrow))
	res, err := shardVideo(context.Background(), shard, Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	var foreign, ours int
	for _, f := range res.Findings {
		switch {
		case f.File == layout.EpisodesPath(0, 0) || f.File == layout.InfoPath || f.File == layout.StatsPath:
			if f.Writer != pyarrow || !strings.HasSuffix(f.String(), "[written by "+pyarrow+", not ceres-export]") {
				t.Errorf("%s: writer %q, want %q", f, f.Writer, pyarrow)
			}
			foreign++
		case f.Writer != "":
			t.Errorf("%s: writer %q on a file ceres-export wrote", f, f.Writer)
		default:
			ours++
		}
	}
	if foreign == 0 {
		t.Fatalf("no finding on the rewritten episodes file: %v", res.Codes())
	}
	if res.Foreign {
		t.Error("a shard with its export report is not foreign")
	}
}

// A dataset LeRobot's edit tool wrote from a shard (no ceres/ directory, no
// ceres/* columns) is checked as a LeRobot dataset: sound when its LeRobot
// parts are, CERES provenance not asked for.
func TestForeignDatasetIsCheckedAsLeRobot(t *testing.T) {
	shard := copyShard(t)
	if err := os.RemoveAll(filepath.Join(shard, layout.CeresDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(shard, layout.CardPath)); err != nil {
		t.Fatal(err)
	}
	mutateParquet(t, filepath.Join(shard, filepath.FromSlash(layout.EpisodesPath(0, 0))), func(m *mtable) {
		for _, f := range slices.Clone(m.fields) {
			if strings.HasPrefix(f.Name, layout.CeresPrefix) {
				m.remove(f.Name)
			}
		}
	}, parquet.WithCreatedBy("parquet-cpp-arrow version 26.0.1"))
	res, err := shardVideo(context.Background(), shard, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Foreign || !res.Sound || !slices.Contains(res.Codes(), "foreign.dataset") {
		t.Errorf("foreign %v sound %v codes %v; want a sound foreign dataset with its note\n%s", res.Foreign, res.Sound, res.Codes(), findingLines(res))
	}
	for _, c := range res.Codes() {
		if strings.HasPrefix(c, "ceres.") || strings.HasPrefix(c, "spec.") || strings.HasPrefix(c, "descriptors.") {
			t.Errorf("code %s: CERES provenance asked of a foreign dataset", c)
		}
	}
	if !slices.Contains(res.Checks, CheckVideo) || slices.Contains(res.Checks, CheckProvenance) {
		t.Errorf("checks %v: want video, not provenance", res.Checks)
	}
}

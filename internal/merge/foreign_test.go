//go:build cgo

package merge

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/internal/shard"
)

// pyarrow is the created_by LeRobot's writer and edit tool leave.
const pyarrow = "parquet-cpp-arrow version 26.0.1"

// foreignCopy makes of shard what lerobot-edit-dataset makes of it: the
// same LeRobot dataset without the ceres/ directory, the card or the
// ceres/* episode columns, meta/episodes rewritten by pyarrow.
func foreignCopy(t *testing.T, shard string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "edited-"+filepath.Base(shard))
	if err := os.CopyFS(dir, os.DirFS(shard)); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{layout.CeresDir, layout.CardPath} {
		if err := os.RemoveAll(filepath.Join(dir, rel)); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, filepath.FromSlash(layout.EpisodesPath(0, 0)))
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := pqarrow.ReadTable(context.Background(), f, parquet.NewReaderProperties(memory.DefaultAllocator), pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	var fields []arrow.Field
	var cols []arrow.Column
	for i, fld := range tbl.Schema().Fields() {
		if strings.HasPrefix(fld.Name, layout.CeresPrefix) {
			continue
		}
		col := *tbl.Column(i)
		if fld.Name == shiftedStat {
			col = shifted(t, fld, col)
		}
		fields = append(fields, fld)
		cols = append(cols, col)
	}
	out := array.NewTable(arrow.NewSchema(fields, nil), cols, tbl.NumRows())
	defer out.Release()
	var buf bytes.Buffer
	if err := pqarrow.WriteTable(out, &buf, tbl.NumRows(), parquet.NewWriterProperties(parquet.WithCreatedBy(pyarrow)), pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// shiftedStat is the statistic foreignCopy changes, so that a merge that
// recomputed it from the rows instead of taking the writer's would show.
var shiftedStat = layout.StatsColumn("observation.imu.accel", "q50")

const shift = 0x1p-30

// shifted is the list<double> column col with every value plus shift:
// small enough to keep the quantiles in order.
func shifted(t *testing.T, fld arrow.Field, col arrow.Column) arrow.Column {
	t.Helper()
	b := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Float64)
	defer b.Release()
	vb := b.ValueBuilder().(*array.Float64Builder)
	for _, chunk := range col.Data().Chunks() {
		l := chunk.(*array.List)
		vals := l.ListValues().(*array.Float64)
		for i := 0; i < l.Len(); i++ {
			b.Append(true)
			from, to := l.ValueOffsets(i)
			for j := from; j < to; j++ {
				vb.Append(vals.Value(int(j)) + shift)
			}
		}
	}
	a := b.NewArray()
	defer a.Release()
	chunked := arrow.NewChunked(fld.Type, []arrow.Array{a})
	defer chunked.Release()
	return *arrow.NewColumn(fld, chunked)
}

// A LeRobot dataset this tool did not write merges beside our shards: the
// merged dataset is sound, its report marks the source foreign with its
// writer, its episodes carry null CERES columns, and its rows, statistics
// and video are those of merging the shard it was edited from.
func TestMergeForeignSource(t *testing.T) {
	src := shards(t, "h264-a", "h264-crash")
	foreign := foreignCopy(t, src[1])
	dir := t.TempDir()
	withForeign, withOurs := filepath.Join(dir, "with-foreign"), filepath.Join(dir, "with-ours")
	res, err := mergeVideo(context.Background(), Options{Sources: []string{src[0], foreign}, Output: withForeign, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mergeVideo(context.Background(), Options{Sources: src, Output: withOurs, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, withForeign)
	r := res.Report
	if r.Sources[0].Foreign != nil || r.Sources[1].Foreign == nil || r.Sources[1].Foreign.Writer != pyarrow || r.Sources[1].SessionID != "" {
		t.Fatalf("sources %+v, want the second foreign, written by %s", r.Sources, pyarrow)
	}
	merged := readDataset(t, withForeign)
	for _, e := range merged.src.episodes {
		fromForeign := e.Index >= r.Sources[1].FirstEpisode
		if e.Ceres.Foreign != fromForeign || e.Ceres.Source == nil || (fromForeign && e.Ceres.SessionID != "") {
			t.Errorf("episode %d: foreign %v, ceres %+v; want foreign %v", e.Index, e.Ceres.Foreign, e.Ceres, fromForeign)
		}
	}
	for _, rel := range []string{layout.DataPath(0, 0), layout.TasksPath, layout.VideoPath("observation.images.front", 0, 0)} {
		a, _ := os.ReadFile(filepath.Join(withForeign, filepath.FromSlash(rel)))
		b, _ := os.ReadFile(filepath.Join(withOurs, filepath.FromSlash(rel)))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs from the merge of the shard it was edited from (%d and %d bytes)", rel, len(a), len(b))
		}
	}
	// Its statistics are its writer's (foreignCopy shifted one),
	// not recomputed from its rows: the merged episodes carry them.
	statsOf := func(dir string) [][]shard.Stats {
		d, err := shard.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		_, st, err := d.EpisodesWithStats(context.Background(), []shard.Feature{{Name: "observation.imu.accel", Dtype: "float32", Shape: []int{3}}})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	mine, theirs := statsOf(withOurs), statsOf(withForeign)
	for e := r.Sources[1].FirstEpisode; e < int64(len(mine)); e++ {
		if got, want := theirs[e][0].Quantiles[2][0], mine[e][0].Quantiles[2][0]+shift; got != want {
			t.Errorf("episode %d accel q50 %v, want the foreign writer's %v", e, got, want)
		}
	}
	card, _ := os.ReadFile(filepath.Join(withForeign, layout.CardPath))
	if !strings.Contains(string(card), "| "+filepath.Base(foreign)+" | foreign: "+pyarrow+" | ") || !strings.Contains(string(card), "from 2 shards of 1 sessions") {
		t.Errorf("the card does not show the foreign source as one:\n%s", card)
	}
	// A merge of the merged dataset keeps its foreign part foreign.
	again := filepath.Join(dir, "again")
	if _, err := mergeVideo(context.Background(), Options{Sources: []string{withForeign}, Output: again, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, again)
	for _, rel := range []string{layout.StatsPath, layout.DataPath(0, 0)} {
		a, _ := os.ReadFile(filepath.Join(withForeign, filepath.FromSlash(rel)))
		b, _ := os.ReadFile(filepath.Join(again, filepath.FromSlash(rel)))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s of a merge of the merged dataset differs from the merged dataset's: the foreign part's statistics must be carried", rel)
		}
	}
	// A dataset that may leave the lab takes no foreign source: it could
	// hold anything.
	if _, err := mergeVideo(context.Background(), Options{Sources: []string{src[0], foreign}, Output: filepath.Join(dir, "private"), Privacy: privacy.MetadataOnly}); !errors.Is(err, ErrMismatch) {
		t.Errorf("metadata-only merge with a foreign source: %v, want a mismatch", err)
	}
}

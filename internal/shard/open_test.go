package shard

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
)

// TestOpenReadsWhatTheBuilderWrote is the reader's round trip: info,
// tasks, every episode with its places, statistics and ceres/* columns,
// the rows, and the CERES files come back as the Builder was given them.
func TestOpenReadsWhatTheBuilderWrote(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := buildFixture(t, dir, fixtureOptions)
	ds, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Merged || ds.Info.FPS != fixtureOptions.FPS || ds.Info.RobotType != fixtureOptions.RobotType {
		t.Fatalf("info %+v merged %v", ds.Info, ds.Merged)
	}
	if len(ds.Info.Features) != len(fixtureFeatures) {
		t.Fatalf("%d features, want %d", len(ds.Info.Features), len(fixtureFeatures))
	}
	for i, f := range ds.Info.Features {
		if want := fixtureFeatures[i]; f.Name != want.Name || f.Dtype != want.Dtype || !reflect.DeepEqual(f.Shape, want.Shape) {
			t.Errorf("feature %d: %+v, want %+v", i, f, want)
		}
	}
	tasks, err := ds.Tasks(context.Background())
	if err != nil || !reflect.DeepEqual(tasks, b.Tasks()) {
		t.Fatalf("tasks %q %v, want %q", tasks, err, b.Tasks())
	}
	eps, err := ds.Episodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != b.episodes.n {
		t.Fatalf("%d episodes, want %d", len(eps), b.episodes.n)
	}
	// Episodes reads no data statistics columns; what it returns is what
	// the whole file gives.
	whole, _, err := ds.EpisodesWithStats(context.Background(), ds.Info.DataFeatures())
	if err != nil || !reflect.DeepEqual(whole, eps) {
		t.Fatalf("episodes read whole (err %v) differ from those read without statistics", err)
	}
	metaFile := ds.Path(layout.EpisodesDir + "/chunk-000/file-000.parquet")
	all, err := readTable(context.Background(), nil, metaFile)
	if err != nil {
		t.Fatal(err)
	}
	noStats, err := readColumns(context.Background(), nil, metaFile, func(name string) bool { return !strings.HasPrefix(name, layout.StatsColumnPrefix) })
	if err != nil {
		t.Fatal(err)
	}
	for name := range all.cols {
		if _, kept := noStats.cols[name]; kept == strings.HasPrefix(name, layout.StatsColumnPrefix) {
			t.Errorf("column %s: read %v without statistics", name, kept)
		}
	}
	if len(noStats.cols) == 0 || len(noStats.cols) == len(all.cols) || noStats.rows != all.rows {
		t.Errorf("%d of %d columns, %d of %d rows read without statistics", len(noStats.cols), len(all.cols), noStats.rows, all.rows)
	}
	// Every feature's statistics, as an append reads a merged dataset's: a
	// video feature's come from its segment, the same as its columns hold.
	statsOf := StatsFeatures(ds.Info.Features)
	_, epStats, err := ds.EpisodesWithStats(context.Background(), statsOf)
	if err != nil || len(epStats) != len(eps) {
		t.Fatalf("statistics of %d episodes (err %v), want %d", len(epStats), err, len(eps))
	}
	videos := 0
	for j, f := range statsOf {
		if f.Dtype != lerobot.Video {
			continue
		}
		videos++
		cols, err := lookupStats(all, f.Name)
		if err != nil {
			t.Fatal(err)
		}
		for i := range eps {
			want, err := cols.at(i)
			if err != nil {
				t.Fatal(err)
			}
			if got := epStats[i][j]; got.Count == 0 || !reflect.DeepEqual(got, want) {
				t.Errorf("episode %d %s statistics %+v, want its columns' %+v", i, f.Name, got, want)
			}
		}
	}
	if videos == 0 {
		t.Fatal("the fixture has no video feature")
	}
	all.release()
	noStats.release()
	rows := ds.NewRowReader(nil)
	defer rows.Close()
	metas := fixtureEpisodes(fixtureOptions.FPS)
	var from int64
	for i, e := range eps {
		w := metas[i]
		n := int64(fixtureEpisodeLens[i])
		data := DataLocation{FromIndex: from, ToIndex: from + n}
		from += n
		if e.Index != int64(i) || e.Length != n || e.Data != data || !reflect.DeepEqual(e.Tasks, []string{w.Task}) {
			t.Errorf("episode %d: %+v, want index %d length %d data %+v task %q", i, e, i, n, data, w.Task)
		}
		if !reflect.DeepEqual(e.Ceres, w.Ceres) {
			t.Errorf("episode %d ceres %+v, want %+v", i, e.Ceres, w.Ceres)
		}
		v := e.Videos["observation.images.front"]
		if want := fixtureVideoStats(i); !reflect.DeepEqual(v.Stats, want) || v.ToTimestamp <= v.FromTimestamp {
			t.Errorf("episode %d video %+v, want stats %+v", i, v, want)
		}
		batch := NewEpisodeRows(ds.Info.DataFeatures(), int(e.Length))
		if err := rows.Read(context.Background(), &e, batch); err != nil {
			t.Fatal(err)
		}
		want := NewEpisodeRows(fixtureFeatures, int(e.Length))
		fillFixtureBatch(want, i, int(e.Length))
		if !reflect.DeepEqual(batch, want) {
			t.Errorf("episode %d rows differ from what was written", i)
		}
	}
	specs, err := ds.Specs()
	if err != nil || len(specs) != 1 {
		t.Fatalf("specs %v %v", specs, err)
	}
	sum, report, err := ds.ReportSHA256()
	if err != nil || len(sum) != 64 || len(report) == 0 {
		t.Fatalf("report %q %v", sum, err)
	}
	if c, err := ds.Campaign(); c != nil || err != nil {
		t.Errorf("campaign of a shard without one: %v %v", c, err)
	}
	files, err := ds.CeresFiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, ok := layout.LookupCeresFile(f); !ok {
			t.Errorf("the builder wrote %s, which the layout does not name", f)
		}
	}
}

func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	foreign := filepath.Join(root, "foreign")
	if err := os.MkdirAll(filepath.Join(foreign, filepath.Dir(filepath.FromSlash(layout.InfoPath))), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, filepath.FromSlash(layout.InfoPath)), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{foreign, root} {
		if _, err := Open(dir); !errors.Is(err, ErrNotDataset) {
			t.Errorf("Open(%s): %v, want ErrNotDataset", dir, err)
		}
	}
}

// TestBuilderRefusesUnknownCeresFile: a file the layout does not name
// cannot be written, so every CERES file is one the readers know.
func TestBuilderRefusesUnknownCeresFile(t *testing.T) {
	t.Parallel()
	b, err := NewBuilder(t.TempDir(), fixtureFeatures, fixtureOptions)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{layout.CeresDir + "/notes.json", layout.SpecsDir, layout.ExportReportPath + "/../x.json", layout.EpisodesDir + "/extra.json"} {
		if err := b.WriteCeresFile(rel, []byte("{}")); err == nil {
			t.Errorf("WriteCeresFile(%q) succeeded", rel)
		}
	}
	if err := b.WriteCeresJSON(layout.ExtensionsPath, map[string]int{"a": 1}); err != nil {
		t.Errorf("WriteCeresJSON(%s): %v", layout.ExtensionsPath, err)
	}
}

// CeresFiles lists the files under layout.CeresDir, relative to the root,
// slash-separated, sorted.
func (d *Dataset) CeresFiles() ([]string, error) {
	var out []string
	root := d.Path(layout.CeresDir)
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.Type().IsRegular() {
			rel, _ := filepath.Rel(d.Dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	slices.Sort(out)
	return out, err
}

package shard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// fixtureFeatures cover every data dtype, a scalar and vectors, plus a video.
var fixtureFeatures = []Feature{
	{Name: "observation.state", Dtype: lerobot.Float32, Shape: []int{3}, Names: []string{"x", "y", "θ"}},
	{Name: "action", Dtype: lerobot.Float64, Shape: []int{2}, Names: []string{"v", "ω"}},
	{Name: "observation.gripper", Dtype: lerobot.Float32, Shape: []int{1}},
	{Name: "observation.counter", Dtype: lerobot.Int32, Shape: []int{1}},
	{Name: "observation.ticks", Dtype: lerobot.Int64, Shape: []int{2}, Names: []string{"l", "r"}},
	{Name: "observation.raw", Dtype: lerobot.Uint8, Shape: []int{2}, Names: []string{"a", "b"}},
	{Name: "observation.contact", Dtype: lerobot.Bool, Shape: []int{1}},
	{Name: "observation.mode", Dtype: lerobot.String, Shape: []int{1}},
	{Name: "observation.images.front", Dtype: lerobot.Video, Shape: []int{48, 64, 3}, Names: []string{"height", "width", "channels"},
		Info: JSONObject{{"video.height", 48}, {"video.width", 64}, {"video.codec", "h264"}, {"video.pix_fmt", "yuv420p"},
			{"video.is_depth_map", false}, {"video.fps", 10}, {"video.channels", 3}, {"has_audio", false}}},
}

// fixtureEpisodeLens gives the frames of each fixture episode (one has a
// single frame: LeRobot's N < 2 branch).
var fixtureEpisodeLens = []int{7, 1, 12}

// fillFixtureBatch fills a batch with seeded values for episode e.
func fillFixtureBatch(b *EpisodeRows, e, n int) {
	rng := rand.New(rand.NewSource(int64(100 + e)))
	for i := range b.Columns {
		b.Columns[i] = ColumnData{}
	}
	b.Len = n
	modes := []string{"auto", "manuel", "tëleop"}
	for k := 0; k < n; k++ {
		c := b.Columns
		appendValues(&c[0], float32(k)+0.25, float32(e)-1.5, float32(rng.NormFloat64()))
		appendValues(&c[1], rng.Float64(), -rng.ExpFloat64())
		appendValues(&c[2], float32(k%3)/2)
		appendValues(&c[3], int32(rng.Intn(1000)-500))
		appendValues(&c[4], int64(k)*1_000_000_007, -int64(e))
		appendValues(&c[5], uint8(rng.Intn(256)), uint8(k))
		appendValues(&c[6], (k+e)%3 == 0)
		appendValues(&c[7], modes[(k+e)%3])
	}
}

func fixtureVideoStats(e int) Stats {
	f := float64(e)
	s := Stats{
		Min: []float64{0, 0.01, 0.02}, Max: []float64{1, 0.99, 0.98},
		Mean: []float64{0.5 + f/100, 0.4, 0.3}, Std: []float64{0.2, 0.21, 0.22 + f/100}, Count: 100,
	}
	for j := range s.Quantiles {
		s.Quantiles[j] = []float64{0.1 * float64(j+1), 0.1*float64(j+1) + f/1000, 0.1 * float64(j)}
	}
	return s
}

// buildFixture writes the fixture shard into dir (not staged).
// fixtureEpisodes are the fixture's episodes as buildFixture writes
// them, fillFixtureBatch giving each one's rows.
func fixtureEpisodes(fps int) []EpisodeMeta {
	var out []EpisodeMeta
	pass := "pass"
	var from float64
	for e, n := range fixtureEpisodeLens {
		var outcome *string
		if e == 2 {
			outcome = &pass
		}
		to := from + float64(n)/float64(fps)
		out = append(out, EpisodeMeta{
			Task:   []string{"Pick the red cube", "Öffne die Schublade"}[e%2],
			Videos: map[string]VideoSegment{"observation.images.front": {FromTimestamp: from, ToTimestamp: to, Stats: fixtureVideoStats(e)}},
			Ceres: layout.CeresEpisode{
				SessionID: "session-1", TaskID: fmt.Sprintf("task-%d", e%2), TaskLabel: "label", TaskType: "timed",
				Cycle: int64(e), Repetition: 0, Attempt: 1, Outcome: outcome,
				StartNS: int64(e) * 1e9, EndNS: int64(e)*1e9 + int64(n)*1e8, SpecVersion: 1,
				SpecHash: strings.Repeat("ab", 32), RecordedSpecHash: strings.Repeat("cd", 32),
			},
		})
		from = to
	}
	return out
}

func buildFixture(t *testing.T, dir string, opts Options) *Builder {
	t.Helper()
	b := buildFixtureUnfinished(t, dir, opts)
	if err := b.WriteSpec("44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	report := struct {
		Episodes int            `json:"episodes"`
		Notes    map[string]any `json:"notes"`
	}{3, map[string]any{"z": 1, "a": "<ok>"}}
	if err := b.Finish(report); err != nil {
		t.Fatal(err)
	}
	return b
}

var fixtureOptions = Options{FPS: 10, RobotType: "so100"}

func readArrowTable(t *testing.T, path string) (arrow.Table, *file.Reader) {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdr.Close() })
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tbl.Release)
	return tbl, rdr
}

// TestDataReadBack reads the data file with arrow-go (a reader independent
// of parquet-go) and checks types, values, row groups and the
// huggingface metadata.
func TestDataReadBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	buildFixture(t, dir, fixtureOptions)
	tbl, rdr := readArrowTable(t, filepath.Join(dir, filepath.FromSlash(layout.DataPath(0, 0))))

	wantTypes := []struct{ name, typ string }{
		{"observation.state", "fixed_size_list<item: float32>[3]"},
		{"action", "fixed_size_list<item: float64>[2]"},
		{"observation.gripper", "float32"},
		{"observation.counter", "int32"},
		{"observation.ticks", "fixed_size_list<item: int64>[2]"},
		{"observation.raw", "fixed_size_list<item: uint8>[2]"},
		{"observation.contact", "bool"},
		{"observation.mode", "utf8"},
		{"timestamp", "float32"},
		{"frame_index", "int64"},
		{"episode_index", "int64"},
		{"index", "int64"},
		{"task_index", "int64"},
	}
	s := tbl.Schema()
	if s.NumFields() != len(wantTypes) {
		t.Fatalf("%d columns, want %d: %s", s.NumFields(), len(wantTypes), s)
	}
	for i, w := range wantTypes {
		f := s.Field(i)
		// arrow-go names list children after the Parquet element; compare the rest.
		got := strings.Replace(f.Type.String(), "element:", "item:", 1)
		if f.Name != w.name || got != w.typ {
			t.Errorf("column %d: %s %s, want %s %s", i, f.Name, got, w.name, w.typ)
		}
	}
	if got := rdr.NumRowGroups(); got != len(fixtureEpisodeLens) {
		t.Errorf("%d row groups, want one per episode (%d)", got, len(fixtureEpisodeLens))
	}
	for i, n := range fixtureEpisodeLens {
		if got := rdr.MetaData().RowGroup(i).NumRows(); got != int64(n) {
			t.Errorf("row group %d: %d rows, want %d", i, got, n)
		}
	}

	// Values: rebuild the expected rows and compare column by column.
	var total int
	for _, n := range fixtureEpisodeLens {
		total += n
	}
	if tbl.NumRows() != int64(total) {
		t.Fatalf("%d rows, want %d", tbl.NumRows(), total)
	}
	want := NewEpisodeRows(fixtureFeatures, 16)
	row := 0
	for e, n := range fixtureEpisodeLens {
		fillFixtureBatch(want, e, n)
		for k := 0; k < n; k++ {
			r := row + k
			checkRow := func(col int, got, exp any) {
				t.Helper()
				if fmt.Sprint(got) != fmt.Sprint(exp) {
					t.Errorf("row %d column %s: %v, want %v", r, s.Field(col).Name, got, exp)
				}
			}
			c := want.Columns
			checkRow(0, listValues(tbl, 0, r), Values[float32](&c[0])[k*3:k*3+3])
			checkRow(1, listValues(tbl, 1, r), Values[float64](&c[1])[k*2:k*2+2])
			checkRow(2, scalarValue(tbl, 2, r), Values[float32](&c[2])[k])
			checkRow(3, scalarValue(tbl, 3, r), Values[int32](&c[3])[k])
			checkRow(4, listValues(tbl, 4, r), Values[int64](&c[4])[k*2:k*2+2])
			checkRow(5, listValues(tbl, 5, r), Values[uint8](&c[5])[k*2:k*2+2])
			checkRow(6, scalarValue(tbl, 6, r), Values[bool](&c[6])[k])
			checkRow(7, scalarValue(tbl, 7, r), Values[string](&c[7])[k])
			checkRow(8, scalarValue(tbl, 8, r), float32(float64(k)/10))
			checkRow(9, scalarValue(tbl, 9, r), int64(k))
			checkRow(10, scalarValue(tbl, 10, r), int64(e))
			checkRow(11, scalarValue(tbl, 11, r), int64(r))
			checkRow(12, scalarValue(tbl, 12, r), int64(e%2))
		}
		row += n
	}

	hf, ok := rdr.MetaData().KeyValueMetadata().FindValue("huggingface"), true
	if hf == nil || !ok {
		t.Fatal("no huggingface metadata")
	}
	var parsed struct {
		Info struct {
			Features map[string]map[string]any `json:"features"`
		} `json:"info"`
	}
	if err := json.Unmarshal([]byte(*hf), &parsed); err != nil {
		t.Fatalf("huggingface metadata: %v", err)
	}
	if got := parsed.Info.Features["observation.state"]["_type"]; got != "List" {
		t.Errorf("observation.state _type %v, want List", got)
	}
	if got := parsed.Info.Features["observation.state"]["length"]; got != 3.0 {
		t.Errorf("observation.state length %v, want 3", got)
	}
	if _, ok := parsed.Info.Features["observation.images.front"]; ok {
		t.Error("video feature listed in data file features")
	}
}

// scalarValue returns row r of a primitive column.
func scalarValue(tbl arrow.Table, col, r int) any {
	arr, i := locate(tbl, col, r)
	switch a := arr.(type) {
	case *array.Float32:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.Int32:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	}
	return fmt.Sprintf("unexpected %T", arr)
}

// listValues returns row r of a fixed-size-list column as a slice.
func listValues(tbl arrow.Table, col, r int) any {
	arr, i := locate(tbl, col, r)
	fsl, ok := arr.(*array.FixedSizeList)
	if !ok {
		return fmt.Sprintf("unexpected %T", arr)
	}
	n := int(fsl.DataType().(*arrow.FixedSizeListType).Len())
	vals := fsl.ListValues()
	start := (fsl.Offset() + i) * n
	switch v := vals.(type) {
	case *array.Float32:
		return v.Float32Values()[start : start+n]
	case *array.Float64:
		return v.Float64Values()[start : start+n]
	case *array.Int64:
		return v.Int64Values()[start : start+n]
	case *array.Uint8:
		return v.Uint8Values()[start : start+n]
	}
	return fmt.Sprintf("unexpected %T", vals)
}

func locate(tbl arrow.Table, col, r int) (arrow.Array, int) {
	for _, chunk := range tbl.Column(col).Data().Chunks() {
		if r < chunk.Len() {
			return chunk, r
		}
		r -= chunk.Len()
	}
	panic("row out of range")
}

// TestArrowSchemaDrift proves the read-back check catches an ARROW:schema
// whose column order differs from the Parquet columns (readers match the two
// by position), and that the written files pass it.
func TestArrowSchemaDrift(t *testing.T) {
	t.Parallel()
	feats := fixtureFeatures[:3]
	for _, tc := range []struct {
		name    string
		reorder bool
	}{{"same order", false}, {"reordered", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := NewDataWriter(dir, feats, DataWriterOptions{FPS: 10})
			if err != nil {
				t.Fatal(err)
			}
			if tc.reorder {
				arrowCols := append([]Feature(nil), w.columns...)
				arrowCols[0], arrowCols[1] = arrowCols[1], arrowCols[0]
				_, w.wopts, err = dataFileLayout(w.columns, arrowCols, defaultCreatedBy)
				if err != nil {
					t.Fatal(err)
				}
			}
			b := NewEpisodeRows(feats, 4)
			b.Len = 2
			SetValues(&b.Columns[0], []float32{1, 2, 3, 4, 5, 6})
			SetValues(&b.Columns[1], []float64{1, 2, 3, 4})
			SetValues(&b.Columns[2], []float32{7, 8})
			if _, err := w.WriteEpisode(0, 0, b); err != nil {
				t.Fatal(err)
			}
			err = w.Close()
			if tc.reorder {
				if err == nil || !strings.Contains(err.Error(), "ARROW:schema") {
					t.Fatalf("drift not detected: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Independent check: arrow-go's schema equals the features' Arrow fields.
			tbl, _ := readArrowTable(t, filepath.Join(dir, filepath.FromSlash(layout.DataPath(0, 0))))
			for i, f := range dataColumns(feats) {
				want := arrowField(f)
				got := tbl.Schema().Field(i)
				if got.Name != want.Name || !sameTypeIgnoringChildNames(got.Type, want.Type) {
					t.Errorf("field %d: %s %s, want %s %s", i, got.Name, got.Type, want.Name, want.Type)
				}
			}
		})
	}
}

func sameTypeIgnoringChildNames(a, b arrow.DataType) bool {
	fa, oka := a.(*arrow.FixedSizeListType)
	fb, okb := b.(*arrow.FixedSizeListType)
	if oka || okb {
		return oka && okb && fa.Len() == fb.Len() && arrow.TypeEqual(fa.Elem(), fb.Elem())
	}
	return arrow.TypeEqual(a, b)
}

// TestTasksParquet checks meta/tasks.parquet: rows in task_index order and
// the pandas metadata that makes "task" the index.
func TestTasksParquet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	buildFixture(t, dir, fixtureOptions)
	tbl, rdr := readArrowTable(t, filepath.Join(dir, filepath.FromSlash(layout.TasksPath)))
	if tbl.NumRows() != 2 {
		t.Fatalf("%d tasks, want 2", tbl.NumRows())
	}
	wantTasks := []string{"Pick the red cube", "Öffne die Schublade"}
	for i, w := range wantTasks {
		if got := scalarValue(tbl, 0, i); got != int64(i) {
			t.Errorf("row %d task_index %v", i, got)
		}
		if got := scalarValue(tbl, 1, i); got != w {
			t.Errorf("row %d task %v, want %q", i, got, w)
		}
	}
	md := rdr.MetaData().KeyValueMetadata().FindValue("pandas")
	if md == nil {
		t.Fatal("no pandas metadata")
	}
	var pandas struct {
		IndexColumns []string `json:"index_columns"`
		Columns      []struct {
			Name       string `json:"name"`
			FieldName  string `json:"field_name"`
			PandasType string `json:"pandas_type"`
		} `json:"columns"`
	}
	if err := json.Unmarshal([]byte(*md), &pandas); err != nil {
		t.Fatalf("pandas metadata: %v", err)
	}
	if fmt.Sprint(pandas.IndexColumns) != "[task]" || len(pandas.Columns) != 2 ||
		pandas.Columns[0].FieldName != "task_index" || pandas.Columns[1].FieldName != "task" {
		t.Errorf("pandas metadata %+v", pandas)
	}
}

// TestEpisodesParquet checks row content of meta/episodes, including the
// nullable ceres/outcome and the video columns.
func TestEpisodesParquet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	buildFixture(t, dir, fixtureOptions)
	tbl, _ := readArrowTable(t, filepath.Join(dir, filepath.FromSlash(layout.EpisodesPath(0, 0))))
	col := func(name string) int {
		idx := tbl.Schema().FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("column %q missing", name)
		}
		return idx[0]
	}
	var from int64
	for e, n := range fixtureEpisodeLens {
		for _, c := range []struct {
			name string
			want any
		}{
			{"episode_index", int64(e)}, {"length", int64(n)},
			{"dataset_from_index", from}, {"dataset_to_index", from + int64(n)},
			{layout.ColDataChunkIndex, int64(0)}, {layout.ColDataFileIndex, int64(0)},
			{layout.ColCycle, int64(e)}, {layout.ColSessionID, "session-1"},
			{layout.ColSpecVersion, int64(1)},
		} {
			if got := scalarValue(tbl, col(c.name), e); got != c.want {
				t.Errorf("episode %d %s: %v, want %v", e, c.name, got, c.want)
			}
		}
		from += int64(n)
		arr, i := locate(tbl, col(layout.ColOutcome), e)
		if wantNull := e != 2; arr.IsNull(i) != wantNull {
			t.Errorf("episode %d ceres/outcome null=%v, want %v", e, arr.IsNull(i), wantNull)
		}
	}
	f, _ := tbl.Schema().FieldsByName(layout.ColOutcome)
	if !f[0].Nullable {
		t.Errorf("%s is not nullable", layout.ColOutcome)
	}
	arr, _ := locate(tbl, col(layout.VideoColumn("observation.images.front", layout.VideoToTimestamp)), 2)
	if got := arr.(*array.Float64).Value(2); got != 2.0 {
		t.Errorf("to_timestamp of episode 2: %v, want 2.0", got)
	}
}

// TestGolden compares info.json, stats.json and a text dump of every Parquet
// file's schema and key-value metadata with testdata/golden (-update rewrites).
func TestGolden(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	buildFixture(t, dir, fixtureOptions)
	for _, g := range []struct{ golden, content string }{
		{path.Base(layout.InfoPath), readFile(t, filepath.Join(dir, filepath.FromSlash(layout.InfoPath)))},
		{path.Base(layout.StatsPath), readFile(t, filepath.Join(dir, filepath.FromSlash(layout.StatsPath)))},
		{path.Base(layout.ExportReportPath), readFile(t, filepath.Join(dir, filepath.FromSlash(layout.ExportReportPath)))},
		{"data-schema.txt", dumpParquet(t, filepath.Join(dir, filepath.FromSlash(layout.DataPath(0, 0))))},
		{"tasks-schema.txt", dumpParquet(t, filepath.Join(dir, filepath.FromSlash(layout.TasksPath)))},
		{"episodes-schema.txt", dumpParquet(t, filepath.Join(dir, filepath.FromSlash(layout.EpisodesPath(0, 0))))},
	} {
		path := filepath.Join("testdata", "golden", g.golden)
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(g.content), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if string(want) != g.content {
			t.Errorf("%s differs from golden:\n%s", g.golden, firstDiff(string(want), g.content))
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dumpParquet renders a Parquet file's schema, Arrow schema, created_by,
// row groups and key-value metadata (ARROW:schema decoded) as text.
func dumpParquet(t *testing.T, path string) string {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	var b strings.Builder
	md := rdr.MetaData()
	fmt.Fprintf(&b, "created_by: %s\nrows: %d\nrow_groups: %d\n", md.GetCreatedBy(), md.NumRows, md.NumRowGroups())
	for i := 0; i < md.Schema.NumColumns(); i++ {
		c := md.Schema.Column(i)
		cc, err := md.RowGroup(0).ColumnChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "column %d: %s %s rep=%d def=%d logical=%s codec=%s\n", i, c.Path(), c.PhysicalType(),
			c.MaxRepetitionLevel(), c.MaxDefinitionLevel(), c.LogicalType(), cc.Compression())
	}
	kv := md.KeyValueMetadata()
	keys := append([]string(nil), kv.Keys()...)
	sort.Strings(keys)
	for _, k := range keys {
		v := *kv.FindValue(k)
		if k == "ARROW:schema" {
			s, err := DecodeArrowSchema(v)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "kv %s (decoded):\n%s\n", k, s)
			continue
		}
		fmt.Fprintf(&b, "kv %s: %s\n", k, v)
	}
	return b.String()
}

func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) || i < len(lb); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n want %q\n got  %q", i+1, x, y)
		}
	}
	return "(no line differs)"
}

// TestDeterminism builds the fixture twice and compares every file's bytes.
func TestDeterminism(t *testing.T) {
	t.Parallel()
	a, b := t.TempDir(), t.TempDir()
	buildFixture(t, a, fixtureOptions)
	buildFixture(t, b, fixtureOptions)
	fa, fb := listFiles(t, a), listFiles(t, b)
	if fmt.Sprint(fa) != fmt.Sprint(fb) {
		t.Fatalf("file lists differ:\n%v\n%v", fa, fb)
	}
	if len(fa) < 7 {
		t.Fatalf("only %d files written: %v", len(fa), fa)
	}
	for _, rel := range fa {
		if !bytes.Equal([]byte(readFile(t, filepath.Join(a, rel))), []byte(readFile(t, filepath.Join(b, rel)))) {
			t.Errorf("%s differs between two identical builds", rel)
		}
	}
}

func listFiles(t *testing.T, root string) []string {
	t.Helper()
	p, err := OpenPrevious(root)
	if err != nil {
		t.Fatal(err)
	}
	return p.Files
}

// TestRotation sets a tiny size limit so that LeRobot's rule starts a file
// for every episode after the first few bytes, with chunks of two files.
func TestRotation(t *testing.T) {
	t.Parallel()
	feats := fixtureFeatures[:1]
	dir := t.TempDir()
	w, err := NewDataWriter(dir, feats, DataWriterOptions{FPS: 10, FileSizeBytes: 1, ChunksSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	lens := []int{3, 5, 2, 4, 6}
	wantLoc := [][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}}
	var from int64
	for e, n := range lens {
		b := &EpisodeRows{Len: n, Columns: []ColumnData{ColumnOf(make([]float32, 3*n))}}
		loc, err := w.WriteEpisode(int64(e), 0, b)
		if err != nil {
			t.Fatal(err)
		}
		want := DataLocation{ChunkIndex: wantLoc[e][0], FileIndex: wantLoc[e][1], FromIndex: from, ToIndex: from + int64(n)}
		if loc != want {
			t.Errorf("episode %d at %+v, want %+v", e, loc, want)
		}
		from += int64(n)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: %v, want ErrClosed", err)
	}
	for e, l := range wantLoc {
		tbl, _ := readArrowTable(t, filepath.Join(dir, layout.DataPath(l[0], l[1])))
		if tbl.NumRows() != int64(lens[e]) {
			t.Errorf("file %v: %d rows, want %d", l, tbl.NumRows(), lens[e])
		}
		if got := scalarValue(tbl, 3, 0); got != int64(e) {
			t.Errorf("file %v: episode_index %v, want %d", l, got, e)
		}
	}
	if got := w.Files(); len(got) != len(lens) {
		t.Errorf("Files() = %v", got)
	}

	// A generous limit keeps every episode in one file.
	dir2 := t.TempDir()
	w2, err := NewDataWriter(dir2, feats, DataWriterOptions{FPS: 10})
	if err != nil {
		t.Fatal(err)
	}
	for e, n := range lens {
		loc, err := w2.WriteEpisode(int64(e), 0, &EpisodeRows{Len: n, Columns: []ColumnData{ColumnOf(make([]float32, 3*n))}})
		if err != nil {
			t.Fatal(err)
		}
		if loc.ChunkIndex != 0 || loc.FileIndex != 0 {
			t.Errorf("episode %d rotated to %+v under a 100 MB limit", e, loc)
		}
	}
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWriterErrors covers validation errors (the writer stays usable) and
// the broken state after a failure.
func TestWriterErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := NewBuilder(dir, fixtureFeatures, fixtureOptions)
	if err != nil {
		t.Fatal(err)
	}
	if b.ColumnIndex("observation.mode") != 7 || b.ColumnIndex("observation.images.front") != -1 || b.ColumnIndex("nope") != -1 {
		t.Error("ColumnIndex")
	}
	batch := b.NewRows(4)
	fillFixtureBatch(batch, 0, 3)
	good := EpisodeMeta{Task: "t", Videos: map[string]VideoSegment{"observation.images.front": {Stats: fixtureVideoStats(0)}}}

	short := *batch
	short.Columns = append([]ColumnData(nil), batch.Columns...)
	SetValues(&short.Columns[0], Values[float32](&short.Columns[0])[:5])
	nan := fixtureVideoStats(0)
	nan.Mean = []float64{math.NaN(), 0, 0}
	for _, tc := range []struct {
		name  string
		meta  EpisodeMeta
		batch *EpisodeRows
		want  string
	}{
		{"short column", good, &short, "values, want"},
		{"no video", EpisodeMeta{Task: "t"}, batch, "no video segment"},
		{"nan video stats", EpisodeMeta{Task: "t", Videos: map[string]VideoSegment{"observation.images.front": {Stats: nan}}}, batch, "NaN"},
		{"empty task", EpisodeMeta{Videos: good.Videos}, batch, "empty task"},
		{"no frames", good, &EpisodeRows{Columns: batch.Columns}, "no frames"},
	} {
		if err := b.WriteEpisode(tc.meta, tc.batch); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want error containing %q", tc.name, err, tc.want)
		}
	}
	if err := b.WriteEpisode(good, batch); err != nil {
		t.Fatalf("valid episode after rejected ones: %v", err)
	}
	if err := b.WriteSpec(strings.Repeat("0", 64), []byte("{}")); err == nil {
		t.Error("WriteSpec accepted a wrong hash")
	}
	if err := b.Finish(nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("second Finish: %v", err)
	}

	for _, tc := range []struct {
		name  string
		feats []Feature
		want  string
	}{
		{"slash", []Feature{{Name: "a/b", Dtype: lerobot.Float32, Shape: []int{1}}}, "'/'"},
		{"reserved", []Feature{{Name: "index", Dtype: lerobot.Int64, Shape: []int{1}}}, "reserved"},
		{"dtype", []Feature{{Name: "a", Dtype: "complex64", Shape: []int{1}}}, "unsupported dtype"},
		{"names", []Feature{{Name: "a", Dtype: lerobot.Float32, Shape: []int{2}, Names: []string{"x"}}}, "names"},
		{"duplicate", []Feature{{Name: "a", Dtype: lerobot.Float32, Shape: []int{1}}, {Name: "a", Dtype: lerobot.Float32, Shape: []int{1}}}, "duplicate"},
		{"2d", []Feature{{Name: "a", Dtype: lerobot.Float32, Shape: []int{2, 2}}}, "shape"},
	} {
		if _, err := NewBuilder(t.TempDir(), tc.feats, fixtureOptions); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want error containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := NewBuilder(t.TempDir(), nil, Options{}); err == nil {
		t.Error("fps 0 accepted")
	}
	empty, err := NewBuilder(t.TempDir(), nil, fixtureOptions)
	if err != nil {
		t.Fatal(err)
	}
	if err := empty.Finish(nil); !errors.Is(err, ErrNoEpisodes) {
		t.Errorf("Finish without episodes: %v", err)
	}
}

// TestWorkersDoNotChangeOutput writes the same episodes with one and with
// several encoding goroutines and compares the data file bytes.
func TestWorkersDoNotChangeOutput(t *testing.T) {
	t.Parallel()
	width := 0
	for _, f := range dataColumns(benchFeatures) {
		width += f.width()
	}
	if episodeWorkers(3, 9, benchFrames*width) != 3 {
		t.Fatalf("an episode of %d rows of %d values is written by one goroutine: this test would compare nothing", benchFrames, width)
	}
	d := makeBenchData()
	var files []string
	for _, workers := range []int{1, 3} {
		dir := t.TempDir()
		w, err := NewDataWriter(dir, benchFeatures, DataWriterOptions{FPS: benchFPS, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		for e, b := range d.batches[:2] {
			if _, err := w.WriteEpisode(int64(e), 0, b); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		files = append(files, readFile(t, filepath.Join(dir, filepath.FromSlash(layout.DataPath(0, 0)))))
	}
	if files[0] != files[1] {
		t.Error("data file differs between 1 and 3 workers")
	}
}

// An episode is spread over goroutines only when it holds enough values
// for the hand-off to pay, and never over more goroutines than tasks.
func TestEpisodeWorkers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ workers, tasks, values, want int }{
		{2, 20, 15 * 35, 1}, // a merge's small episode
		{2, 20, parallelMinValues - 1, 1},
		{2, 20, parallelMinValues, 2},
		{8, 3, 1 << 20, 3},
		{1, 20, 1 << 20, 1},
		{0, 20, 1 << 20, 1},
	} {
		if got := episodeWorkers(c.workers, c.tasks, c.values); got != c.want {
			t.Errorf("episodeWorkers(%d, %d, %d) = %d, want %d", c.workers, c.tasks, c.values, got, c.want)
		}
	}
}

package shard

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/testenv"
)

// referenceDir holds LeRobot 0.4.4's own output for a small dataset, dumped
// as text by tests/conformance/make_reference.py (see its README).
const referenceDir = "../../tests/conformance/reference/no-video"

// buildLeRobotReferenceTwin writes, with the Builder, the dataset that
// make_reference.py writes with LeRobot (same features, values, tasks).
func buildLeRobotReferenceTwin(t *testing.T, dir string) {
	t.Helper()
	feats := []Feature{
		{Name: "observation.state", Dtype: lerobot.Float32, Shape: []int{3}, Names: []string{"x", "y", "z"}},
		{Name: "observation.gripper", Dtype: lerobot.Float32, Shape: []int{1}, Names: []string{"width"}},
		{Name: "observation.counter", Dtype: lerobot.Int64, Shape: []int{1}},
		{Name: "observation.contact", Dtype: lerobot.Bool, Shape: []int{1}},
		{Name: "action", Dtype: lerobot.Float32, Shape: []int{3}, Names: []string{"dx", "dy", "dz"}},
	}
	b, err := NewBuilder(dir, feats, Options{FPS: 30, RobotType: "ceres-test-rig"})
	if err != nil {
		t.Fatal(err)
	}
	episodes := []struct {
		n    int
		task string
	}{{7, "pick up the red cube"}, {5, "place the cube in the bin"}, {6, "pick up the red cube"}}
	batch := b.NewBatch(8)
	var counter int64
	for ep, e := range episodes {
		for i := range batch.Columns {
			batch.Columns[i] = ColumnData{}
		}
		batch.Len = e.n
		c := batch.Columns
		for k := 0; k < e.n; k++ {
			tk := float64(k) / 30
			appendValues(&c[0], float32(float64(ep)+tk), float32(-tk), float32(0.5*float64(k)))
			appendValues(&c[1], float32(0.01*float64(k)))
			appendValues(&c[2], counter)
			appendValues(&c[3], k%3 == 0)
			appendValues(&c[4], float32(0.1), float32(-0.1*float64(ep)), float32(0.01*float64(k)))
			counter++
		}
		if err := b.WriteEpisode(EpisodeMeta{Task: e.task}, batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Finish(nil); err != nil {
		t.Fatal(err)
	}
}

// TestMatchesLeRobotReference compares the Builder's output with LeRobot's
// own: info.json byte for byte; stats.json and the per-episode stats
// columns (min, max, count exactly, JSON types included; mean and std to
// LeRobot's float32 rounding; quantiles within one histogram bin); every data
// row; and the episodes columns LeRobot writes, in its order.
func TestMatchesLeRobotReference(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(filepath.Join(referenceDir, "info.json")); err != nil {
		testenv.Missing(t, "no LeRobot reference output (tests/conformance/reference is part of the repository): %v", err)
	}
	dir := t.TempDir()
	buildLeRobotReferenceTwin(t, dir)

	if got, want := readFile(t, filepath.Join(dir, "meta/info.json")), readFile(t, filepath.Join(referenceDir, "info.json")); got != want {
		t.Errorf("info.json differs from LeRobot's:\n%s", firstDiff(want, got))
	}

	var gotStats, wantStats map[string]map[string]any
	mustJSON(t, readFile(t, filepath.Join(dir, "meta/stats.json")), &gotStats)
	mustJSON(t, readFile(t, filepath.Join(referenceDir, "stats.json")), &wantStats)
	if len(gotStats) != len(wantStats) {
		t.Errorf("stats.json has %d features, LeRobot %d", len(gotStats), len(wantStats))
	}
	for feat, ws := range wantStats {
		for stat, wv := range ws {
			compareStat(t, "stats.json "+feat+"/"+stat, stat, gotStats[feat][stat], wv, ws)
		}
	}

	// Data rows.
	tbl, _ := readArrowTable(t, filepath.Join(dir, "data/chunk-000/file-000.parquet"))
	wantRows := referenceRows(t, "data__chunk-000__file-000.parquet.txt")
	if int(tbl.NumRows()) != len(wantRows) {
		t.Fatalf("%d data rows, LeRobot %d", tbl.NumRows(), len(wantRows))
	}
	for r, want := range wantRows {
		for col := 0; col < int(tbl.NumCols()); col++ {
			name := tbl.Schema().Field(col).Name
			got := jsonRoundTrip(t, arrowRowValue(tbl, col, r))
			if !reflect.DeepEqual(got, want[name]) {
				t.Errorf("data row %d %s: %v, LeRobot %v", r, name, got, want[name])
			}
		}
	}

	// Episodes metadata: LeRobot's columns in LeRobot's order, then ours.
	etbl, _ := readArrowTable(t, filepath.Join(dir, "meta/episodes/chunk-000/file-000.parquet"))
	wantEps := referenceRows(t, "meta__episodes__chunk-000__file-000.parquet.txt")
	wantCols := referenceColumnOrder(t, "meta__episodes__chunk-000__file-000.parquet.txt")
	for i, name := range wantCols {
		if got := etbl.Schema().Field(i).Name; got != name {
			t.Fatalf("episodes column %d: %s, LeRobot %s", i, got, name)
		}
	}
	for i := len(wantCols); i < int(etbl.NumCols()); i++ {
		if name := etbl.Schema().Field(i).Name; !strings.HasPrefix(name, "ceres/") {
			t.Errorf("extra episodes column %s", name)
		}
	}
	for r, want := range wantEps {
		for i, name := range wantCols {
			got := jsonRoundTrip(t, arrowRowValue(etbl, i, r))
			if strings.HasPrefix(name, "stats/") {
				parts := strings.Split(name, "/")
				feat, stat := parts[1], parts[2]
				sib := map[string]any{"min": want["stats/"+feat+"/min"], "max": want["stats/"+feat+"/max"]}
				compareStat(t, fmt.Sprintf("episode %d %s", r, name), stat, got, want[name], sib)
				continue
			}
			if !reflect.DeepEqual(got, want[name]) {
				t.Errorf("episode %d %s: %v, LeRobot %v", r, name, got, want[name])
			}
		}
	}
}

func mustJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatal(err)
	}
}

// compareStat compares one stat value (a JSON list) with LeRobot's. sib
// holds LeRobot's min and max of the same feature, for the bin width.
func compareStat(t *testing.T, where, stat string, got, want any, sib map[string]any) {
	t.Helper()
	g, w := flattenJSON(got), flattenJSON(want)
	if len(g) != len(w) {
		t.Errorf("%s: %v, LeRobot %v", where, got, want)
		return
	}
	switch stat {
	case "min", "max", "count":
		// Exact, and numbers: the reference is LeRobot 0.4.4's, which wrote
		// a bool feature's min and max as booleans; LeRobot 0.6 writes
		// numbers for every dtype, and so does the shard.
		if !reflect.DeepEqual(got, want) && !reflect.DeepEqual(g, w) {
			t.Errorf("%s: %v, LeRobot %v", where, got, want)
		}
		if _, ok := firstLeaf(got).(float64); !ok {
			t.Errorf("%s: JSON type %T, want a number as LeRobot 0.6 writes", where, firstLeaf(got))
		}
		return
	}
	// LeRobot 0.4.4 accumulates float32 features in float32 and takes
	// std = sqrt(E[x^2] - E[x]^2); the shard works in float64. Allow float32
	// rounding of the mean and of the variance (relative to the magnitude M).
	const eps32 = 1.0 / (1 << 23)
	lo, hi := flattenJSON(sib["min"]), flattenJSON(sib["max"])
	for i := range g {
		m := math.Max(math.Abs(lo[i]), math.Abs(hi[i]))
		var diff, tol float64
		switch {
		case stat == "std":
			diff, tol = math.Abs(g[i]*g[i]-w[i]*w[i]), 4*eps32*m*m+1e-15
		case stat == "mean":
			diff, tol = math.Abs(g[i]-w[i]), 4*eps32*m+1e-15
		default: // quantiles: within one histogram bin
			diff, tol = math.Abs(g[i]-w[i]), (hi[i]-lo[i])/defaultQuantileBinCount*1.01+4*eps32*m+1e-9
		}
		if diff > tol {
			t.Errorf("%s[%d]: %v, LeRobot %v (difference %g > tolerance %g)", where, i, g[i], w[i], diff, tol)
		}
	}
}

func firstLeaf(v any) any {
	for {
		l, ok := v.([]any)
		if !ok || len(l) == 0 {
			return v
		}
		v = l[0]
	}
}

func flattenJSON(v any) []float64 {
	switch x := v.(type) {
	case []any:
		var out []float64
		for _, e := range x {
			out = append(out, flattenJSON(e)...)
		}
		return out
	case float64:
		return []float64{x}
	case bool:
		if x {
			return []float64{1}
		}
		return []float64{0}
	}
	return nil
}

// referenceRows parses the "## Content" JSON lines of a reference dump.
func referenceRows(t *testing.T, name string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(referenceDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	inContent := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			inContent = strings.HasPrefix(line, "## Content")
			continue
		}
		if inContent && strings.HasPrefix(line, "{") {
			var row map[string]any
			mustJSON(t, line, &row)
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no content rows", name)
	}
	return rows
}

// referenceColumnOrder parses the top-level names of the "## Arrow schema" section.
func referenceColumnOrder(t *testing.T, name string) []string {
	t.Helper()
	var cols []string
	in := false
	for _, line := range strings.Split(readFile(t, filepath.Join(referenceDir, name)), "\n") {
		if strings.HasPrefix(line, "## ") {
			in = strings.HasPrefix(line, "## Arrow schema")
			continue
		}
		if in && line != "" && !strings.HasPrefix(line, " ") {
			cols = append(cols, strings.SplitN(line, ": ", 2)[0])
		}
	}
	return cols
}

// arrowRowValue converts row r of column col to plain Go values (lists as
// []any) so that it can be compared through JSON with pyarrow's to_pylist.
func arrowRowValue(tbl arrow.Table, col, r int) any {
	arr, i := locate(tbl, col, r)
	return arrowValue(arr, i)
}

func arrowValue(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.Int32:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Uint8:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case array.ListLike:
		start, end := a.ValueOffsets(i)
		out := []any{}
		for j := start; j < end; j++ {
			out = append(out, arrowValue(a.ListValues(), int(j)))
		}
		return out
	}
	return fmt.Sprintf("unsupported %T", arr)
}

func jsonRoundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	mustJSON(t, string(b), &out)
	return out
}

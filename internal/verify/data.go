package verify

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
)

// dataEpisode is what the data files hold of one episode_index.
type dataEpisode struct {
	File       string // data file holding its first row
	Chunk      int64  // of that file
	FileIndex  int64
	FirstRow   int64 // position of its first row in the shard
	FirstIndex int64 // index column of its first row
	Rows       int64
	Tasks      map[int64]bool // task_index values
	Split      bool           // rows in more than one file
}

// dataSet is the data files read whole: the default columns per row, in
// shard order, and each numeric feature's values row-major as float64.
type dataSet struct {
	Files    []string
	Rows     int64
	RowFile  []int32 // index into Files per row
	Episode  []int64 // episode_index per row (-1 when unreadable)
	Frame    []int64
	Index    []int64
	Task     []int64
	Values   map[string][]float64 // feature → rows×width values; absent when the column is unusable
	Episodes map[int64]*dataEpisode
	EpOrder  []int64 // episode indices in order of first appearance
}

// arrowType is the Arrow type LeRobot's loader reconstructs for a feature.
func arrowType(f *feature) arrow.DataType {
	var t arrow.DataType
	switch f.Dtype {
	case "float32":
		t = arrow.PrimitiveTypes.Float32
	case "float64":
		t = arrow.PrimitiveTypes.Float64
	case "float16":
		t = arrow.FixedWidthTypes.Float16
	case "int8":
		t = arrow.PrimitiveTypes.Int8
	case "int16":
		t = arrow.PrimitiveTypes.Int16
	case "int32":
		t = arrow.PrimitiveTypes.Int32
	case "int64":
		t = arrow.PrimitiveTypes.Int64
	case "uint8":
		t = arrow.PrimitiveTypes.Uint8
	case "uint16":
		t = arrow.PrimitiveTypes.Uint16
	case "uint32":
		t = arrow.PrimitiveTypes.Uint32
	case "uint64":
		t = arrow.PrimitiveTypes.Uint64
	case "bool":
		t = arrow.FixedWidthTypes.Boolean
	case "string":
		t = arrow.BinaryTypes.String
	default:
		return nil
	}
	if f.Shape[0] == 1 {
		return t
	}
	return arrow.FixedSizeListOf(int32(f.Shape[0]), t)
}

// sameType compares Arrow types ignoring list item names and nullability.
func sameType(got, want arrow.DataType) bool {
	if gl, ok := got.(*arrow.FixedSizeListType); ok {
		wl, ok := want.(*arrow.FixedSizeListType)
		return ok && gl.Len() == wl.Len() && arrow.TypeEqual(gl.Elem(), wl.Elem())
	}
	return arrow.TypeEqual(got, want)
}

// checkData reads every data file and checks schema and rows.
func (c *checker) checkData() error {
	if c.info == nil {
		c.notef("data.skipped", "", loc{}, "data checks skipped: meta/info.json is unusable")
		return nil
	}
	ds := &dataSet{Values: map[string][]float64{}, Episodes: map[int64]*dataEpisode{}}
	for _, f := range c.files {
		if dataFileRe.MatchString(f) || dataGlobRe.MatchString(f) {
			ds.Files = append(ds.Files, f)
		}
	}
	feats := c.info.dataFeatures()
	usable := map[string]bool{}
	for _, f := range feats {
		usable[f.Name] = true
	}
	var expectIndex int64
	prevEpisode := int64(-1)
	var frameInEp int64
	for fi, rel := range ds.Files {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		t, err := c.readParquet(filepath.Join(c.dir, rel))
		if err != nil {
			c.errorf("data.unreadable", rel, loc{}, "cannot read as Parquet: %v", err)
			continue
		}
		c.checkDataSchema(rel, t, feats, usable)
		m := dataFileRe.FindStringSubmatch(rel)
		var chunk, fileIdx int64 = -1, -1
		if m != nil {
			chunk, _ = strconv.ParseInt(m[1], 10, 64)
			fileIdx, _ = strconv.ParseInt(m[2], 10, 64)
		}
		cols := map[string]*array.Int64{}
		for _, name := range []string{"index", "frame_index", "episode_index", "task_index"} {
			// A column of the wrong type is reported by checkDataSchema.
			if a, ok := t.int64Col(name); ok && a.NullN() == 0 {
				cols[name] = a
			} else if ok {
				c.errorf("data.null", rel, loc{}, "column %s has %d nulls", name, a.NullN())
			}
		}
		ts, _ := t.col("timestamp").(*array.Float32)
		get := func(name string, i int) int64 {
			if a := cols[name]; a != nil {
				return a.Value(i)
			}
			return -1
		}
		firstRow := ds.Rows
		// Row groups must hold whole episodes: one row group per episode.
		c.checkRowGroups(rel, t, cols["episode_index"], firstRow)
		for i := 0; i < int(t.Rows); i++ {
			r := ds.Rows
			epi := get("episode_index", i)
			idx := get("index", i)
			frame := get("frame_index", i)
			task := get("task_index", i)
			ds.RowFile = append(ds.RowFile, int32(fi))
			ds.Episode = append(ds.Episode, epi)
			ds.Index = append(ds.Index, idx)
			ds.Frame = append(ds.Frame, frame)
			ds.Task = append(ds.Task, task)
			ds.Rows++
			if cols["index"] != nil {
				if idx != expectIndex {
					c.errorf("data.index-gap", rel, epRow(epi, r), "index is %d, want %d: the index column must run from 0 without gaps or repeats", idx, expectIndex)
				}
				expectIndex = idx + 1
			}
			if cols["episode_index"] == nil {
				continue
			}
			if epi != prevEpisode {
				if e := ds.Episodes[epi]; e != nil {
					c.errorf("data.episode-order", rel, epRow(epi, r), "rows of episode %d resume after episode %d: an episode's rows must be consecutive", epi, prevEpisode)
					e.Rows++
					if e.File != rel {
						e.Split = true
					}
					prevEpisode = epi
					frameInEp++
					c.checkFrame(rel, ts, i, r, epi, frame, frameInEp)
					continue
				}
				if epi != prevEpisode+1 {
					c.errorf("data.episode-order", rel, epRow(epi, r), "episode %d follows episode %d: episodes must appear in increasing episode_index order without gaps", epi, prevEpisode)
				}
				ds.Episodes[epi] = &dataEpisode{File: rel, Chunk: chunk, FileIndex: fileIdx, FirstRow: r, FirstIndex: idx, Tasks: map[int64]bool{}}
				ds.EpOrder = append(ds.EpOrder, epi)
				prevEpisode = epi
				frameInEp = 0
			} else {
				frameInEp++
			}
			e := ds.Episodes[epi]
			e.Rows++
			if e.File != rel {
				e.Split = true
			}
			e.Tasks[task] = true
			c.checkFrame(rel, ts, i, r, epi, frame, frameInEp)
			if cols["task_index"] != nil && (task < 0 || task >= c.info.TotalTasks) {
				c.errorf("data.task-index", rel, epRow(epi, r), "task_index %d is not a row of meta/tasks.parquet (total_tasks %d)", task, c.info.TotalTasks)
			}
		}
		for _, f := range feats {
			if !usable[f.Name] || f.Dtype == lerobot.String {
				continue
			}
			vals, err := floatValues(t.col(f.Name), f.width())
			if err != nil {
				usable[f.Name] = false
				delete(ds.Values, f.Name)
				c.errorf("data.null", rel, loc{}, "column %s: %v", f.Name, err)
				continue
			}
			ds.Values[f.Name] = append(ds.Values[f.Name], vals...)
		}
	}
	for _, epi := range ds.EpOrder {
		if e := ds.Episodes[epi]; e.Split {
			c.errorf("data.episode-split", e.File, ep(epi), "episode %d has rows in more than one data file; LeRobot never splits an episode", epi)
		}
	}
	if c.info.TotalFrames != ds.Rows {
		c.errorf("info.total-frames", infoPath, loc{}, "total_frames is %d, but the data files hold %d rows", c.info.TotalFrames, ds.Rows)
	}
	c.data = ds
	return nil
}

// checkFrame checks frame_index and timestamp of one row: frame_index runs
// 0..length-1 and timestamp = frame_index / fps as float32. Only the first
// wrong row of an episode is listed for each, since one dropped row shifts
// all that follow.
func (c *checker) checkFrame(file string, ts *array.Float32, i int, r, epi, frame, want int64) {
	if frame != want && frame != -1 {
		if !c.reported("data.frame-index", epi) {
			c.errorf("data.frame-index", file, epRow(epi, r), "frame_index is %d, want %d: frame_index must run 0, 1, 2, ... within an episode", frame, want)
		}
	}
	if ts == nil || ts.IsNull(i) {
		return
	}
	wantTS := float32(float64(want) / float64(c.info.FPS))
	if got := ts.Value(i); got != wantTS {
		if !c.reported("data.timestamp", epi) {
			c.errorf("data.timestamp", file, epRow(epi, r), "timestamp is %v, want %v (frame %d / fps %d as float32); LeRobot finds the video frame by it", got, wantTS, want, c.info.FPS)
		}
	}
}

// reported reports whether code was already reported for episode epi, and
// marks it reported.
func (c *checker) reported(code string, epi int64) bool {
	key := fmt.Sprintf("once\x00%s\x00%d", code, epi)
	if c.counts[key] > 0 {
		return true
	}
	c.counts[key]++
	return false
}

// checkDataSchema compares the file's Arrow schema with the features.
func (c *checker) checkDataSchema(rel string, t *pqTable, feats []*feature, usable map[string]bool) {
	want := map[string]*feature{}
	for _, f := range feats {
		want[f.Name] = f
	}
	for _, fld := range t.Schema.Fields() {
		if want[fld.Name] == nil {
			ft := c.info.byName[fld.Name]
			if ft != nil && ft.Dtype == lerobot.Image {
				continue // image structs are stored in the data; not checked further
			}
			if ft != nil {
				c.errorf("data.extra-column", rel, loc{}, "column %q belongs to %s feature %q, which has no data column", fld.Name, ft.Dtype, fld.Name)
			} else {
				c.errorf("data.extra-column", rel, loc{}, "column %q (%s) is not a feature of info.json; LeRobot's cast fails on it", fld.Name, typeString(fld.Type))
			}
		}
	}
	for _, f := range feats {
		idx := t.Schema.FieldIndices(f.Name)
		if len(idx) == 0 {
			c.errorf("data.missing-column", rel, loc{}, "feature %q (%s %v) has no column; LeRobot would fill it with nulls", f.Name, f.Dtype, f.Shape)
			usable[f.Name] = false
			continue
		}
		got := t.Schema.Field(idx[0]).Type
		w := arrowType(f)
		if w == nil {
			continue
		}
		if !sameType(got, w) {
			c.errorf("data.column-type", rel, loc{}, "column %q is %s, want %s for dtype %s shape %v", f.Name, typeString(got), typeString(w), f.Dtype, f.Shape)
			usable[f.Name] = false
		}
	}
}

// checkRowGroups warns when row groups and episodes do not coincide.
func (c *checker) checkRowGroups(rel string, t *pqTable, epCol *array.Int64, firstRow int64) {
	if epCol == nil {
		return
	}
	var start int64
	for g, n := range t.RowGroups {
		if n == 0 {
			continue
		}
		first, last := epCol.Value(int(start)), epCol.Value(int(start+n-1))
		endsEpisode := start+n == t.Rows || epCol.Value(int(start+n)) != last
		if first != last || !endsEpisode {
			c.warnf("data.row-groups", rel, epRow(first, firstRow+start), "row group %d holds rows %d..%d, not exactly one episode; LeRobot writes one row group per episode", g, firstRow+start, firstRow+start+n-1)
		}
		start += n
	}
}

// floatValues flattens a numeric column (scalar or fixed-size list) to float64.
func floatValues(a arrow.Array, width int) ([]float64, error) {
	if a == nil {
		return nil, fmt.Errorf("missing")
	}
	if a.NullN() > 0 {
		return nil, fmt.Errorf("%d null values", a.NullN())
	}
	if fl, ok := a.(*array.FixedSizeList); ok {
		vals := fl.ListValues()
		if vals.NullN() > 0 {
			return nil, fmt.Errorf("null elements")
		}
		off := fl.Offset() * width
		n := fl.Len() * width
		out := make([]float64, n)
		for i := 0; i < n; i++ {
			v, err := numberAt(vals, off+i)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	out := make([]float64, a.Len())
	for i := range out {
		v, err := numberAt(a, i)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// numberAt returns element i of a primitive array as float64.
func numberAt(a arrow.Array, i int) (float64, error) {
	switch x := a.(type) {
	case *array.Float32:
		return float64(x.Value(i)), nil
	case *array.Float64:
		return x.Value(i), nil
	case *array.Int8:
		return float64(x.Value(i)), nil
	case *array.Int16:
		return float64(x.Value(i)), nil
	case *array.Int32:
		return float64(x.Value(i)), nil
	case *array.Int64:
		return float64(x.Value(i)), nil
	case *array.Uint8:
		return float64(x.Value(i)), nil
	case *array.Uint16:
		return float64(x.Value(i)), nil
	case *array.Uint32:
		return float64(x.Value(i)), nil
	case *array.Uint64:
		return float64(x.Value(i)), nil
	case *array.Boolean:
		if x.Value(i) {
			return 1, nil
		}
		return 0, nil
	case *array.Float16:
		return float64(x.Value(i).Float32()), nil
	}
	return math.NaN(), fmt.Errorf("type %s is not numeric", a.DataType())
}

package verify

import (
	"encoding/json"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
)

// episodeRow is one row of meta/episodes, with the file it came from.
type episodeRow struct {
	File         string
	Pos          int64 // row position across the episodes files
	EpisodeIndex int64
	Tasks        []string
	Length       int64
	DataChunk    int64
	DataFile     int64
	FromIndex    int64
	ToIndex      int64
	MetaChunk    int64
	MetaFile     int64
	Videos       map[string]*videoRef
	Ceres        map[string]any // ceres/* values: string, int64 or nil
	table        *pqTable
	tableRow     int
}

// videoRef is an episode's place in one video feature's files.
type videoRef struct {
	Chunk, File int64
	From, To    float64
}

// episodeSet is meta/episodes read whole.
type episodeSet struct {
	Rows []*episodeRow
}

// checkMetadata reads meta/episodes and meta/tasks.parquet and checks them
// against the data.
func (c *checker) checkMetadata() error {
	c.readTasks()
	if c.info == nil {
		return nil
	}
	if c.tasks != nil && int64(len(c.tasks)) != c.info.TotalTasks {
		c.errorf("info.total-tasks", infoPath, loc{}, "total_tasks is %d, but meta/tasks.parquet has %d rows", c.info.TotalTasks, len(c.tasks))
	}
	es := &episodeSet{}
	var pos int64
	for _, rel := range c.files {
		if !episodesFileRe.MatchString(rel) && !episodesGlobRe.MatchString(rel) {
			continue
		}
		t, err := c.readParquetColumns(filepath.Join(c.dir, rel), c.episodeColumnsRead())
		if err != nil {
			c.errorf("episodes.unreadable", rel, loc{}, "cannot read as Parquet: %v", err)
			continue
		}
		m := episodesFileRe.FindStringSubmatch(rel)
		var chunk, file int64 = -1, -1
		if m != nil {
			chunk, _ = strconv.ParseInt(m[1], 10, 64)
			file, _ = strconv.ParseInt(m[2], 10, 64)
		}
		if !c.checkEpisodeSchema(rel, t) {
			continue
		}
		for i := 0; i < int(t.Rows); i++ {
			er := c.episodeRowAt(rel, t, i)
			er.Pos = pos
			pos++
			es.Rows = append(es.Rows, er)
			if er.MetaChunk != chunk || er.MetaFile != file {
				c.errorf("episodes.meta-location", rel, ep(er.EpisodeIndex), "meta/episodes/chunk_index, file_index are %d, %d, but the row is in chunk %d file %d", er.MetaChunk, er.MetaFile, chunk, file)
			}
		}
	}
	c.episodes = es
	if int64(len(es.Rows)) != c.info.TotalEpisodes {
		c.errorf("info.total-episodes", infoPath, loc{}, "total_episodes is %d, but meta/episodes has %d rows", c.info.TotalEpisodes, len(es.Rows))
	}
	c.checkEpisodesAgainstData()
	return nil
}

// requiredEpisodeColumns are LeRobot's meta/episodes columns and the types
// pa.Table.from_pydict gives them.
func (c *checker) requiredEpisodeColumns() map[string]arrow.DataType {
	cols := map[string]arrow.DataType{
		layout.ColEpisodeIndex:     arrow.PrimitiveTypes.Int64,
		layout.ColTasks:            arrow.ListOf(arrow.BinaryTypes.String),
		layout.ColLength:           arrow.PrimitiveTypes.Int64,
		layout.ColDataChunkIndex:   arrow.PrimitiveTypes.Int64,
		layout.ColDataFileIndex:    arrow.PrimitiveTypes.Int64,
		layout.ColDatasetFromIndex: arrow.PrimitiveTypes.Int64,
		layout.ColDatasetToIndex:   arrow.PrimitiveTypes.Int64,
		layout.ColMetaChunkIndex:   arrow.PrimitiveTypes.Int64,
		layout.ColMetaFileIndex:    arrow.PrimitiveTypes.Int64,
	}
	for _, v := range c.info.videoFeatures() {
		cols[layout.VideoColumn(v.Name, layout.VideoChunkIndex)] = arrow.PrimitiveTypes.Int64
		cols[layout.VideoColumn(v.Name, layout.VideoFileIndex)] = arrow.PrimitiveTypes.Int64
		cols[layout.VideoColumn(v.Name, layout.VideoFromTimestamp)] = arrow.PrimitiveTypes.Float64
		cols[layout.VideoColumn(v.Name, layout.VideoToTimestamp)] = arrow.PrimitiveTypes.Float64
	}
	for k, v := range c.ceresColumns {
		cols[k] = v
	}
	return cols
}

// ceresColumnTypes maps the layout's ceres/* columns (the
// docs/export-semantics.md "Provenance" ones) (merged: only those of
// a merged dataset, else only the others) to their Arrow types, and says
// which may be null.
func ceresColumnTypes(merged bool) (map[string]arrow.DataType, map[string]bool) {
	types, null := map[string]arrow.DataType{}, map[string]bool{}
	for _, c := range layout.EpisodeColumns {
		if c.Merged != merged {
			continue
		}
		switch c.Dtype {
		case lerobot.String:
			types[c.Name] = arrow.BinaryTypes.String
		case lerobot.Int64:
			types[c.Name] = arrow.PrimitiveTypes.Int64
		default:
			panic("verify: no Arrow type for ceres column " + c.Name)
		}
		null[c.Name] = c.Null
	}
	return types, null
}

// checkEpisodeSchema checks the episodes columns; false when LeRobot's own
// columns are unusable.
func (c *checker) checkEpisodeSchema(rel string, t *pqTable) bool {
	ok := true
	req := c.requiredEpisodeColumns()
	for _, name := range slices.Sorted(maps.Keys(req)) {
		want := req[name]
		a := t.col(name)
		_, isCeres := c.ceresColumns[name]
		code, typeCode := "episodes.missing-column", "episodes.column-type"
		if isCeres {
			code, typeCode = "ceres.missing-column", "ceres.column-type"
		}
		switch {
		case a == nil:
			c.errorf(code, rel, loc{}, "column %q is missing", name)
			if !isCeres {
				ok = false
			}
		case !typeMatches(a.DataType(), want):
			c.errorf(typeCode, rel, loc{}, "column %q is %s, want %s", name, typeString(a.DataType()), typeString(want))
			if !isCeres {
				ok = false
			}
		case a.NullN() > 0 && !c.nullCeres[name] && !c.foreignNullColumn(name):
			c.errorf(code, rel, loc{}, "column %q has %d nulls", name, a.NullN())
			if !isCeres {
				ok = false
			}
		}
	}
	return ok
}

// typeMatches compares types; list item names and string/large_string
// differences are not tolerated, only the item field's name.
func typeMatches(got, want arrow.DataType) bool {
	if gl, ok := got.(*arrow.ListType); ok {
		wl, ok := want.(*arrow.ListType)
		return ok && arrow.TypeEqual(gl.Elem(), wl.Elem())
	}
	return arrow.TypeEqual(got, want)
}

// episodeRowAt extracts row i of an episodes table whose schema passed.
func (c *checker) episodeRowAt(rel string, t *pqTable, i int) *episodeRow {
	i64 := func(name string) int64 {
		a, ok := t.int64Col(name)
		if !ok || a.IsNull(i) {
			return -1
		}
		return a.Value(i)
	}
	f64 := func(name string) float64 {
		a, ok := t.col(name).(*array.Float64)
		if !ok || a.IsNull(i) {
			return math.NaN()
		}
		return a.Value(i)
	}
	er := &episodeRow{
		File: rel, EpisodeIndex: i64("episode_index"), Length: i64("length"),
		DataChunk: i64(layout.ColDataChunkIndex), DataFile: i64(layout.ColDataFileIndex),
		FromIndex: i64(layout.ColDatasetFromIndex), ToIndex: i64(layout.ColDatasetToIndex),
		MetaChunk: i64(layout.ColMetaChunkIndex), MetaFile: i64(layout.ColMetaFileIndex),
		Videos: map[string]*videoRef{}, Ceres: map[string]any{}, table: t, tableRow: i,
	}
	if l, ok := t.col("tasks").(*array.List); ok && !l.IsNull(i) {
		if vals, ok := l.ListValues().(*array.String); ok {
			s, e := l.ValueOffsets(i)
			for j := s; j < e; j++ {
				er.Tasks = append(er.Tasks, vals.Value(int(j)))
			}
		}
	}
	for _, v := range c.info.videoFeatures() {
		p := "videos/" + v.Name + "/"
		er.Videos[v.Name] = &videoRef{Chunk: i64(p + "chunk_index"), File: i64(p + "file_index"), From: f64(p + "from_timestamp"), To: f64(p + "to_timestamp")}
	}
	for name, typ := range c.ceresColumns {
		a := t.col(name)
		if a == nil || !arrow.TypeEqual(a.DataType(), typ) || a.IsNull(i) {
			er.Ceres[name] = nil
			continue
		}
		switch x := a.(type) {
		case *array.String:
			er.Ceres[name] = x.Value(i)
		case *array.Int64:
			er.Ceres[name] = x.Value(i)
		}
	}
	return er
}

// checkEpisodesAgainstData compares every episode row with the data rows.
func (c *checker) checkEpisodesAgainstData() {
	es, ds := c.episodes, c.data
	inMeta := map[int64]bool{}
	for i, er := range es.Rows {
		epi := er.EpisodeIndex
		inMeta[epi] = true
		if epi != int64(i) {
			c.errorf("episodes.order", er.File, ep(epi), "row %d holds episode_index %d; LeRobot looks episodes up by position, so row i must be episode i", i, epi)
		}
		if er.Length <= 0 {
			c.errorf("episodes.length", er.File, ep(epi), "length is %d, want a positive frame count", er.Length)
		}
		if er.ToIndex-er.FromIndex != er.Length {
			c.errorf("episodes.length", er.File, ep(epi), "dataset_to_index - dataset_from_index is %d, but length is %d", er.ToIndex-er.FromIndex, er.Length)
		}
		if len(er.Tasks) == 0 {
			c.errorf("episodes.tasks", er.File, ep(epi), "tasks is empty; it must list the episode's task strings")
		}
		if ds == nil {
			continue
		}
		de := ds.Episodes[epi]
		if de == nil {
			c.errorf("episodes.no-rows", er.File, ep(epi), "episode %d has no rows in the data files; LeRobot then falls back to the Hub", epi)
			continue
		}
		if er.Length != de.Rows {
			c.errorf("episodes.length", er.File, ep(epi), "length is %d, but the data files hold %d rows of episode %d", er.Length, de.Rows, epi)
		}
		if er.FromIndex != de.FirstIndex {
			c.errorf("episodes.from-index", er.File, ep(epi), "dataset_from_index is %d, but the episode's first row has index %d", er.FromIndex, de.FirstIndex)
		}
		if want := de.FirstIndex + de.Rows; er.ToIndex != want {
			c.errorf("episodes.to-index", er.File, ep(epi), "dataset_to_index is %d, want %d (index of the episode's last row + 1)", er.ToIndex, want)
		}
		if er.DataChunk != de.Chunk || er.DataFile != de.FileIndex {
			c.errorf("episodes.data-location", er.File, ep(epi), "data/chunk_index, data/file_index are %d, %d, but the rows are in %s", er.DataChunk, er.DataFile, de.File)
		}
		if c.tasks != nil {
			for _, ti := range slices.Sorted(maps.Keys(de.Tasks)) {
				if ti < 0 || ti >= int64(len(c.tasks)) {
					continue
				}
				if !containsString(er.Tasks, c.tasks[ti]) {
					c.errorf("episodes.tasks", er.File, ep(epi), "tasks %q lacks %q, the task of its rows (task_index %d)", er.Tasks, c.tasks[ti], ti)
				}
			}
			for _, s := range er.Tasks {
				if !containsString(c.tasks, s) {
					c.errorf("episodes.tasks", er.File, ep(epi), "task %q is not in meta/tasks.parquet", s)
				}
			}
		}
	}
	if ds != nil {
		for _, epi := range ds.EpOrder {
			if !inMeta[epi] {
				de := ds.Episodes[epi]
				c.errorf("episodes.missing", de.File, ep(epi), "the data files hold rows of episode %d, which meta/episodes lacks", epi)
			}
		}
	}
	c.checkVideoOffsets()
}

// checkVideoOffsets checks every episode's place in each video feature's
// files: episodes fill a file back to back in episode order, from_timestamp
// is the frames before the episode in its file / fps, to_timestamp adds the
// episode's length / fps.
func (c *checker) checkVideoOffsets() {
	fps := float64(c.info.FPS)
	for _, v := range c.info.videoFeatures() {
		type fileKey struct{ chunk, file int64 }
		frames := map[fileKey]int64{}
		var last fileKey
		for i, er := range c.episodes.Rows {
			ref := er.Videos[v.Name]
			key := fileKey{ref.Chunk, ref.File}
			path := videoPath(v.Name, ref.Chunk, ref.File)
			if i > 0 && (key.chunk < last.chunk || key.chunk == last.chunk && key.file < last.file) {
				c.errorf("episodes.video-location", er.File, ep(er.EpisodeIndex), "videos/%s is chunk %d file %d, before the previous episode's file: episodes fill video files in order", v.Name, ref.Chunk, ref.File)
			}
			last = key
			if ref.Chunk < 0 || ref.File < 0 || !c.hasFile(path) {
				c.errorf("episodes.video-location", er.File, ep(er.EpisodeIndex), "videos/%s/chunk_index, file_index name %s, which does not exist", v.Name, path)
			}
			before := frames[key]
			frames[key] += er.Length
			wantFrom := float64(before) / fps
			wantTo := wantFrom + float64(er.Length)/fps
			// LeRobot's decode tolerance is 1e-4 s; an exporter that
			// computes the offsets from frame counts is exact to well under
			// a microsecond.
			if math.IsNaN(ref.From) || math.Abs(ref.From-wantFrom) > 1e-6 {
				c.errorf("episodes.from-timestamp", er.File, ep(er.EpisodeIndex), "videos/%s/from_timestamp is %v, want %v (%d frames before the episode in %s at %d fps)", v.Name, ref.From, wantFrom, before, path, c.info.FPS)
			}
			if math.IsNaN(ref.To) || math.Abs(ref.To-wantTo) > 1e-6 {
				c.errorf("episodes.to-timestamp", er.File, ep(er.EpisodeIndex), "videos/%s/to_timestamp is %v, want %v (from_timestamp + length %d / fps)", v.Name, ref.To, wantTo, er.Length)
			}
		}
	}
}

// videoPath formats LeRobot's default video path.
func videoPath(key string, chunk, file int64) string {
	return layout.VideoPath(key, int(chunk), int(file))
}

func (c *checker) hasFile(rel string) bool {
	i := sort.SearchStrings(c.files, rel)
	return i < len(c.files) && c.files[i] == rel
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// readTasks reads meta/tasks.parquet: task_index int64 and task string, row
// i with task_index i, unique strings, and the pandas metadata that makes
// "task" the index (without it pandas loses the task strings).
func (c *checker) readTasks() {
	if !c.hasFile(tasksPath) {
		return
	}
	t, err := c.readParquet(filepath.Join(c.dir, tasksPath))
	if err != nil {
		c.errorf("tasks.unreadable", tasksPath, loc{}, "cannot read as Parquet: %v", err)
		return
	}
	md := t.Schema.Metadata()
	pandas, has := md.GetValue("pandas")
	if !has {
		c.errorf("tasks.pandas-metadata", tasksPath, loc{}, "no \"pandas\" schema metadata: pandas.read_parquet returns a RangeIndex and LeRobot loses the task strings")
	} else {
		var pm struct {
			IndexColumns []any `json:"index_columns"`
		}
		if err := json.Unmarshal([]byte(pandas), &pm); err != nil {
			c.errorf("tasks.pandas-metadata", tasksPath, loc{}, "\"pandas\" metadata is not JSON: %v", err)
		} else if len(pm.IndexColumns) != 1 || pm.IndexColumns[0] != "task" {
			c.errorf("tasks.pandas-metadata", tasksPath, loc{}, "pandas index_columns is %s, want [\"task\"]", jsonText(pm.IndexColumns))
		}
	}
	idx, ok := t.int64Col("task_index")
	if !ok {
		c.errorf("tasks.column", tasksPath, loc{}, "column task_index is %s, want int64", typeString(dataTypeOf(t.col("task_index"))))
		return
	}
	strs, ok := t.col("task").(*array.String)
	if !ok {
		c.errorf("tasks.column", tasksPath, loc{}, "column task is %s, want string", typeString(dataTypeOf(t.col("task"))))
		return
	}
	seen := map[string]int{}
	tasks := make([]string, t.Rows)
	for i := 0; i < int(t.Rows); i++ {
		if idx.IsNull(i) || strs.IsNull(i) {
			c.errorf("tasks.column", tasksPath, row(int64(i)), "row %d has a null", i)
			continue
		}
		if idx.Value(i) != int64(i) {
			c.errorf("tasks.index", tasksPath, row(int64(i)), "row %d has task_index %d; LeRobot looks tasks up by position (tasks.iloc[task_index])", i, idx.Value(i))
		}
		s := strs.Value(i)
		if j, dup := seen[s]; dup {
			c.errorf("tasks.duplicate", tasksPath, row(int64(i)), "task %q repeats row %d", s, j)
		}
		seen[s] = i
		tasks[i] = s
	}
	c.tasks = tasks
}

func dataTypeOf(a arrow.Array) arrow.DataType {
	if a == nil {
		return nil
	}
	return a.DataType()
}

// episodeColumnsRead says which meta/episodes columns are decoded: all of
// them, except in a quick verify, which checks no per-episode statistics and
// leaves their columns (most of the file) to the full one.
func (c *checker) episodeColumnsRead() func(name string) bool {
	if !c.opts.Quick {
		return nil
	}
	return func(name string) bool { return !strings.HasPrefix(name, layout.StatsColumnPrefix) }
}

package shard

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/output"
)

// pandasTasksMetadata is the "pandas" schema metadata pyarrow writes for
// pd.DataFrame({"task_index": [...]}, index=pd.Index(tasks, name="task")):
// without it pd.read_parquet returns a RangeIndex and the task strings are
// lost. The shape is pyarrow 26.0.1 / pandas 2.3.3's (the loader's versions).
// LeRobot 0.4.4 itself writes the index unnamed (__index_level_0__); newer
// LeRobot names it "task"; both load, as the lookups are positional or by
// index value.
const pandasTasksMetadata = `{"index_columns": ["task"], "column_indexes": [{"name": null, "field_name": null, "pandas_type": "unicode", "numpy_type": "object", "metadata": {"encoding": "UTF-8"}}], "columns": [{"name": "task_index", "field_name": "task_index", "pandas_type": "int64", "numpy_type": "int64", "metadata": null}, {"name": "task", "field_name": "task", "pandas_type": "unicode", "numpy_type": "object", "metadata": null}], "attributes": {}, "creator": {"library": "pyarrow", "version": "26.0.1"}, "pandas_version": "2.3.3"}`

// writeStaged writes data to path in the staging directory (creating
// parents). It leaves the fsync to the staging's commit, which syncs the
// whole tree with its writes in flight together: a merge writes a file per
// source (its export report), and syncing each as it was written kept the
// merge's one writer waiting on the device (0.1 s of a 256-shard merge).
// The file must be new: a staging directory holds hard links of
// the files of the dataset being appended to (Continue, merge's video),
// and writing through one would change that dataset.
func writeStaged(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writePyJSON writes v as LeRobot's write_json does (indent 4, ensure_ascii=False, no trailing newline).
func writePyJSON(path string, v any) error {
	b, err := marshalPyJSON(v, 4, false)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return writeStaged(path, b)
}

// arrowParquetProps are the writer properties of the metadata Parquet files
// (written with arrow-go, like pyarrow: snappy, v1 pages, the ARROW:schema
// stored), with dictionary encoding or without: meta/episodes goes without,
// since its hundreds of statistics columns hold distinct floats, for which
// a dictionary saves nothing and its hash tables made most of a one-hour
// export's final memory peak (docs/benchmarks.md).
func arrowParquetProps(createdBy string, dictionary bool) (*parquet.WriterProperties, pqarrow.ArrowWriterProperties) {
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithDictionaryDefault(dictionary),
		parquet.WithDataPageVersion(parquet.DataPageV1),
		parquet.WithCreatedBy(createdBy),
	)
	return props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
}

// writeArrowParquet writes one record as a single-row-group Parquet file.
func writeArrowParquet(path string, rec arrow.RecordBatch, createdBy string, dictionary bool) error {
	return writeArrowParquetWith(path, rec.Schema(), createdBy, dictionary, func(w *pqarrow.FileWriter) error { return w.Write(rec) })
}

// writeArrowParquetWith writes a Parquet file of schema with what write
// gives the writer, then syncs it.
func writeArrowParquetWith(path string, schema *arrow.Schema, createdBy string, dictionary bool, write func(*pqarrow.FileWriter) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	props, aprops := arrowParquetProps(createdBy, dictionary)
	w, err := pqarrow.NewFileWriter(schema, f, props, aprops)
	if err == nil {
		err = write(w)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	} else {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	// pqarrow's FileWriter.Close closes the underlying file when it is an io.Closer.
	if err == nil {
		err = output.SyncFile(path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeTasks writes meta/tasks.parquet: row i is task i (task_index int64,
// task string) with the pandas metadata naming "task" as the index.
func writeTasks(path string, tasks []string, createdBy string) error {
	md := arrow.NewMetadata([]string{"pandas"}, []string{pandasTasksMetadata})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: layout.TasksColIndex, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: layout.TasksColTask, Type: arrow.BinaryTypes.String, Nullable: true},
	}, &md)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i, t := range tasks {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(t)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return writeArrowParquet(path, rec, createdBy, true)
}

// episodeColumn is one column of meta/episodes: its Arrow field and how to
// append an episode's value.
type episodeColumn struct {
	field  arrow.Field
	append func(b array.Builder, e *episodeRecord)
}

// episodeRecord is one row of meta/episodes.
type episodeRecord struct {
	index  int64
	tasks  []string
	length int64
	data   DataLocation
	videos []VideoSegment // in video feature order
	stats  []Stats        // in stats feature order
	ceres  layout.CeresEpisode
	// metaChunk, metaFile: the meta/episodes file the row is in.
	metaChunk, metaFile int64
}

func listOf(t arrow.DataType) arrow.DataType {
	return arrow.ListOfField(arrow.Field{Name: "item", Type: t, Nullable: true})
}

func int64Col(name string, get func(e *episodeRecord) int64) episodeColumn {
	return episodeColumn{
		field:  arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		append: func(b array.Builder, e *episodeRecord) { b.(*array.Int64Builder).Append(get(e)) },
	}
}

func float64Col(name string, get func(e *episodeRecord) float64) episodeColumn {
	return episodeColumn{
		field:  arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		append: func(b array.Builder, e *episodeRecord) { b.(*array.Float64Builder).Append(get(e)) },
	}
}

// statColumn is stats/<feature>/<stat> with the type pa.Table.from_pydict
// gives LeRobot 0.6's values: list<double> (min and max too, whatever the
// feature's dtype), list<int64> for count, list<list<list<double>>> for
// videos. LeRobot 0.4.4 kept integer and bool min/max as list<int64> and
// list<bool>; it reads doubles just as well, and LeRobot 0.6's merge cannot
// join a bool or integer min/max column with its own doubles.
func statColumn(f Feature, si int, stat string, get func(s *Stats) []float64) episodeColumn {
	name := layout.StatsColumn(f.Name, stat)
	kind := "double"
	switch {
	case stat == "count":
		kind = "int64"
	case f.Dtype == lerobot.Video:
		kind = "video"
	}
	var t arrow.DataType
	switch kind {
	case "int64":
		t = listOf(arrow.PrimitiveTypes.Int64)
	case "video":
		t = listOf(listOf(listOf(arrow.PrimitiveTypes.Float64)))
	default:
		t = listOf(arrow.PrimitiveTypes.Float64)
	}
	return episodeColumn{
		field: arrow.Field{Name: name, Type: t, Nullable: true},
		append: func(b array.Builder, e *episodeRecord) {
			s := &e.stats[si]
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			if stat == "count" {
				lb.ValueBuilder().(*array.Int64Builder).Append(s.Count)
				return
			}
			vals := get(s)
			switch kind {
			case "video":
				mid := lb.ValueBuilder().(*array.ListBuilder)
				for _, x := range vals {
					mid.Append(true)
					inner := mid.ValueBuilder().(*array.ListBuilder)
					inner.Append(true)
					inner.ValueBuilder().(*array.Float64Builder).Append(x)
				}
			default:
				vb := lb.ValueBuilder().(*array.Float64Builder)
				for _, x := range vals {
					vb.Append(x)
				}
			}
		},
	}
}

// episodeColumns lists meta/episodes columns in LeRobot's order
// (save_episode / _save_episode_metadata), followed by the ceres/* columns.
func episodeColumns(videoFeatures, statsFeatures []Feature, sourceColumns bool) []episodeColumn {
	cols := []episodeColumn{
		int64Col(layout.ColEpisodeIndex, func(e *episodeRecord) int64 { return e.index }),
		{
			field: arrow.Field{Name: layout.ColTasks, Type: listOf(arrow.BinaryTypes.String), Nullable: true},
			append: func(b array.Builder, e *episodeRecord) {
				lb := b.(*array.ListBuilder)
				lb.Append(true)
				for _, t := range e.tasks {
					lb.ValueBuilder().(*array.StringBuilder).Append(t)
				}
			},
		},
		int64Col(layout.ColLength, func(e *episodeRecord) int64 { return e.length }),
		int64Col(layout.ColDataChunkIndex, func(e *episodeRecord) int64 { return int64(e.data.ChunkIndex) }),
		int64Col(layout.ColDataFileIndex, func(e *episodeRecord) int64 { return int64(e.data.FileIndex) }),
		int64Col(layout.ColDatasetFromIndex, func(e *episodeRecord) int64 { return e.data.FromIndex }),
		int64Col(layout.ColDatasetToIndex, func(e *episodeRecord) int64 { return e.data.ToIndex }),
	}
	for vi, f := range videoFeatures {
		col := func(field string) string { return layout.VideoColumn(f.Name, field) }
		cols = append(cols,
			int64Col(col(layout.VideoChunkIndex), func(e *episodeRecord) int64 { return int64(e.videos[vi].ChunkIndex) }),
			int64Col(col(layout.VideoFileIndex), func(e *episodeRecord) int64 { return int64(e.videos[vi].FileIndex) }),
			float64Col(col(layout.VideoFromTimestamp), func(e *episodeRecord) float64 { return e.videos[vi].FromTimestamp }),
			float64Col(col(layout.VideoToTimestamp), func(e *episodeRecord) float64 { return e.videos[vi].ToTimestamp }),
		)
	}
	for si, f := range statsFeatures {
		cols = append(cols,
			statColumn(f, si, "min", func(s *Stats) []float64 { return s.Min }),
			statColumn(f, si, "max", func(s *Stats) []float64 { return s.Max }),
			statColumn(f, si, "mean", func(s *Stats) []float64 { return s.Mean }),
			statColumn(f, si, "std", func(s *Stats) []float64 { return s.Std }),
			statColumn(f, si, "count", nil),
		)
		for j, q := range QuantileNames {
			cols = append(cols, statColumn(f, si, q, func(s *Stats) []float64 { return s.Quantiles[j] }))
		}
	}
	// All episodes go to one metadata file: LeRobot rotates it at
	// data_files_size_in_mb, which one row per episode does not reach.
	cols = append(cols,
		int64Col(layout.ColMetaChunkIndex, func(e *episodeRecord) int64 { return e.metaChunk }),
		int64Col(layout.ColMetaFileIndex, func(e *episodeRecord) int64 { return e.metaFile }),
	)
	for _, c := range layout.CeresColumns(sourceColumns) {
		cols = append(cols, ceresColumn(c))
	}
	return cols
}

// ceresColumn is the meta/episodes column of a ceres/* column of the
// layout: its value from the episode's layout.CeresEpisode, null when the
// layout says so.
func ceresColumn(c layout.EpisodeColumn) episodeColumn {
	return episodeColumn{
		field: arrow.Field{Name: c.Name, Type: arrowPrimitive(c.Dtype), Nullable: true},
		append: func(b array.Builder, e *episodeRecord) {
			switch v := c.Get(&e.ceres).(type) {
			case nil:
				b.AppendNull()
			case string:
				b.(*array.StringBuilder).Append(v)
			case int64:
				b.(*array.Int64Builder).Append(v)
			}
		},
	}
}

// eachEpisode calls fn with every episode record in order.
type eachEpisode func(fn func(*episodeRecord) error) error

// writeEpisodes writes meta/episodes/chunk-000/file-000.parquet, one row
// group, as pqarrow writes a record of every episode: column after
// column. The columns are built in passes over the episodes, each
// building a share of them, so that no more than a pass's columns are in
// memory: passes grows with the episodes (Builder.Finish), one column of
// 4,000 episodes' statistics is small, all 150 of them were 22 MB.
func writeEpisodes(path string, cols []episodeColumn, eps eachEpisode, passes int, createdBy string) error {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = c.field
	}
	per := max(1, (len(cols)+passes-1)/max(passes, 1))
	return writeArrowParquetWith(path, arrow.NewSchema(fields, nil), createdBy, false, func(w *pqarrow.FileWriter) error {
		// What Write does with a record of one row group.
		if err := w.NewRowGroupChecked(); err != nil {
			return err
		}
		for lo := 0; lo < len(cols); lo += per {
			part := cols[lo:min(lo+per, len(cols))]
			builders := make([]array.Builder, len(part))
			for j, c := range part {
				builders[j] = array.NewBuilder(memory.DefaultAllocator, c.field.Type)
			}
			err := eps(func(e *episodeRecord) error {
				for j, c := range part {
					c.append(builders[j], e)
				}
				return nil
			})
			for j, b := range builders {
				if err == nil {
					arr := b.NewArray()
					err = w.WriteColumnData(arr)
					arr.Release()
				}
				builders[j].Release()
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

package shard

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
)

// Writer settings that are not LeRobot rules (those live in internal/lerobot).
const (
	defaultCreatedBy        = "ceres-export"
	writeChunkValues        = 8192 // parquet.Values converted per column write (whole rows)
	defaultQuantileBinCount = 5000
)

// ErrWriterBroken is returned by every call on a DataWriter or Builder after
// an earlier call failed; the output is incomplete and must be discarded.
var ErrWriterBroken = errors.New("shard: writer is broken by an earlier error")

// ErrClosed is returned by calls on a closed DataWriter or finished Builder.
var ErrClosed = errors.New("shard: writer is closed")

// DataWriterOptions configures a DataWriter. The zero value is valid except
// for FPS, which must be positive.
type DataWriterOptions struct {
	// FPS is the dataset frame rate; timestamp = frame_index / FPS.
	FPS int
	// FileSizeMB is LeRobot's data_files_size_in_mb; 0 means 100.
	FileSizeMB int
	// FileSizeBytes, when positive, replaces FileSizeMB*2^20 as the rotation
	// threshold (small shards, tests); info.json still reports FileSizeMB.
	FileSizeBytes int64
	// ChunksSize is LeRobot's chunks_size (files per chunk); 0 means 1000.
	ChunksSize int
	// Workers is the number of goroutines encoding the columns of an
	// episode; 0 means GOMAXPROCS. The output does not depend on it.
	Workers int
	// CreatedBy is the Parquet footer's created_by; "" means "ceres-export".
	// Keep it free of timestamps and build ids: output must be deterministic.
	CreatedBy string
}

// DataLocation says where WriteEpisode put an episode: LeRobot's
// data/chunk_index, data/file_index, dataset_from_index, dataset_to_index.
type DataLocation struct {
	ChunkIndex int
	FileIndex  int
	FromIndex  int64
	ToIndex    int64
}

// DataWriter streams episodes into LeRobot data files
// (data/chunk-CCC/file-FFF.parquet), one row group per episode, starting a
// new file by LeRobot's size rule (DatasetWriter._save_episode_data): before
// an episode, if size + size/frames_in_file * episode_frames >= limit. An
// episode is never split. It holds at most one episode in memory.
type DataWriter struct {
	dir     string
	opts    DataWriterOptions
	limit   int64
	columns []Feature // data columns in file order: caller features, then defaults
	wopts   []parquet.WriterOption

	file       *dataFile
	chunk      int
	fileIdx    int
	fileFrames int64
	fileEps    int

	episodes int64
	frames   int64
	err      error
	closed   bool

	workers int
	scratch [][]parquet.Value // per worker, reused across columns and episodes
	ts      []float32         // generated timestamp column
	defInts [4][]int64        // generated frame_index, episode_index, index, task_index
	defCols [5]ColumnData
	colData []*ColumnData
	written []string // relative paths of finished files
}

// NewDataWriter returns a writer of data files under dir (a shard root) for
// features (video features are skipped: they have no column).
func NewDataWriter(dir string, features []Feature, opts DataWriterOptions) (*DataWriter, error) {
	if err := validateFeatures(features); err != nil {
		return nil, fmt.Errorf("shard: %w", err)
	}
	if opts.FPS <= 0 {
		return nil, fmt.Errorf("shard: fps must be positive, got %d", opts.FPS)
	}
	if opts.FileSizeMB == 0 {
		opts.FileSizeMB = lerobot.DefaultDataFileSizeMB
	}
	if opts.ChunksSize == 0 {
		opts.ChunksSize = lerobot.DefaultChunksSize
	}
	if opts.FileSizeMB < 0 || opts.ChunksSize < 0 {
		return nil, fmt.Errorf("shard: file size and chunks size must be positive")
	}
	if opts.CreatedBy == "" {
		opts.CreatedBy = defaultCreatedBy
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	w := &DataWriter{dir: dir, opts: opts, limit: int64(opts.FileSizeMB) * lerobot.BytesPerMB, workers: opts.Workers}
	w.scratch = make([][]parquet.Value, opts.Workers)
	if opts.FileSizeBytes > 0 {
		w.limit = opts.FileSizeBytes
	}
	w.columns = dataColumns(features)
	var err error
	_, w.wopts, err = dataFileLayout(w.columns, w.columns, opts.CreatedBy)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// Files returns the paths (relative to the shard root) of the data files
// finished so far, in order.
func (w *DataWriter) Files() []string { return append([]string(nil), w.written...) }

// Frames returns the number of rows written.
func (w *DataWriter) Frames() int64 { return w.frames }

// WriteEpisode appends one episode as one row group. episodeIndex must be the
// number of episodes written before; taskIndex fills the task_index column.
func (w *DataWriter) WriteEpisode(episodeIndex, taskIndex int64, b *EpisodeRows) (DataLocation, error) {
	if w.closed {
		return DataLocation{}, ErrClosed
	}
	if w.err != nil {
		return DataLocation{}, ErrWriterBroken
	}
	if err := w.checkBatch(episodeIndex, b); err != nil {
		return DataLocation{}, err // the writer is still usable
	}
	loc, err := w.writeEpisode(episodeIndex, taskIndex, b)
	if err != nil {
		w.err = err
		return DataLocation{}, fmt.Errorf("shard: episode %d: %w", episodeIndex, err)
	}
	return loc, nil
}

func (w *DataWriter) checkBatch(episodeIndex int64, b *EpisodeRows) error {
	if episodeIndex != w.episodes {
		return fmt.Errorf("shard: episode index %d, want %d (episodes are written in order)", episodeIndex, w.episodes)
	}
	if b == nil || b.Len <= 0 {
		return fmt.Errorf("shard: episode %d has no frames", episodeIndex)
	}
	nData := len(w.columns) - len(defaultFeatures)
	if len(b.Columns) != nData {
		return fmt.Errorf("shard: episode %d: %d columns, want %d", episodeIndex, len(b.Columns), nData)
	}
	for i := 0; i < nData; i++ {
		f := w.columns[i]
		if got, want := b.Columns[i].Len(f.Dtype), b.Len*f.width(); got != want {
			return fmt.Errorf("shard: episode %d feature %q: %d %s values, want %d", episodeIndex, f.Name, got, f.Dtype, want)
		}
	}
	return nil
}

func (w *DataWriter) writeEpisode(episodeIndex, taskIndex int64, b *EpisodeRows) (DataLocation, error) {
	if err := w.rotateIfNeeded(int64(b.Len)); err != nil {
		return DataLocation{}, err
	}
	n := b.Len
	// Default columns: timestamp, frame_index, episode_index, index, task_index.
	if cap(w.ts) < n {
		w.ts = make([]float32, n)
		for j := range w.defInts {
			w.defInts[j] = make([]int64, n)
		}
	}
	ts := w.ts[:n]
	from := w.frames
	frameIdx, epIdx, index, taskIdx := w.defInts[0][:n], w.defInts[1][:n], w.defInts[2][:n], w.defInts[3][:n]
	for k := 0; k < n; k++ {
		// LeRobot: timestamp = frame_index / fps (Python float), stored as float32.
		ts[k] = float32(float64(k) / float64(w.opts.FPS))
		frameIdx[k] = int64(k)
		epIdx[k] = episodeIndex
		index[k] = from + int64(k)
		taskIdx[k] = taskIndex
	}
	data := w.colData[:0]
	for i := range b.Columns {
		data = append(data, &b.Columns[i])
	}
	w.defCols = [5]ColumnData{{v: ts}, {v: frameIdx}, {v: epIdx}, {v: index}, {v: taskIdx}}
	for i := range w.defCols {
		data = append(data, &w.defCols[i])
	}
	w.colData = data
	if err := w.writeColumns(data, n); err != nil {
		return DataLocation{}, err
	}
	if err := w.file.FlushRowGroup(); err != nil {
		return DataLocation{}, err
	}
	w.fileFrames += int64(n)
	w.fileEps++
	w.frames += int64(n)
	w.episodes++
	return DataLocation{ChunkIndex: w.chunk, FileIndex: w.fileIdx, FromIndex: from, ToIndex: w.frames}, nil
}

// rotateIfNeeded opens the first file, or finishes the current one and opens
// the next when LeRobot's rule says the episode would reach the size limit.
func (w *DataWriter) rotateIfNeeded(frames int64) error {
	if w.file != nil {
		size := w.file.Size()
		perFrame := float64(size) / float64(w.fileFrames)
		// float64(...) keeps the product rounded on every architecture
		// (see aggregateStats), so arm64 rotates where amd64 does.
		if float64(size)+float64(perFrame*float64(frames)) < float64(w.limit) {
			return nil
		}
		if err := w.finishFile(); err != nil {
			return err
		}
		w.chunk, w.fileIdx = lerobot.NextChunkFile(w.chunk, w.fileIdx, w.opts.ChunksSize)
	}
	rel := layout.DataPath(w.chunk, w.fileIdx)
	path := filepath.Join(w.dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := newDataFile(path, w.wopts)
	if err != nil {
		return err
	}
	w.file = f
	w.fileFrames, w.fileEps = 0, 0
	return nil
}

// writeColumns hands every column of one episode to its column writer,
// spreading the columns over up to opts.Workers goroutines when the episode
// is large enough (episodeWorkers). Column writers of one row group share
// no state (pages are buffered per column), so the file is the same
// whatever the number of workers.
func (w *DataWriter) writeColumns(data []*ColumnData, rows int) error {
	cws := w.file.ColumnWriters()
	width := 0
	for _, f := range w.columns {
		width += f.width()
	}
	workers := episodeWorkers(w.workers, len(data), rows*width)
	if workers <= 1 {
		for i, c := range data {
			if err := w.writeColumn(cws[i], w.columns[i], c, rows, &w.scratch[0]); err != nil {
				return fmt.Errorf("column %q: %w", w.columns[i].Name, err)
			}
		}
		return nil
	}
	errs := make([]error, len(data))
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func(scratch *[]parquet.Value) {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(data) {
					return
				}
				errs[i] = w.writeColumn(cws[i], w.columns[i], data[i], rows, scratch)
			}
		}(&w.scratch[g])
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("column %q: %w", w.columns[i].Name, err)
		}
	}
	return nil
}

// parallelMinValues is the fewest values (rows × elements) of one
// episode worth spreading over goroutines, to write its columns or compute
// their statistics. Below it the hand-off costs more than it saves: a
// merge of 256 small shards (episodes of about 15 rows) spent 150 ms of
// its writer's 200 ms waiting for its two workers, while the other core
// decoded the next source. An export's episode (hundreds of rows of tens
// of elements) is above it.
const parallelMinValues = 1 << 14

// episodeWorkers is how many goroutines share tasks jobs over an episode
// of values values: one below parallelMinValues, else up to workers.
func episodeWorkers(workers, tasks, values int) int {
	if values < parallelMinValues {
		return 1
	}
	return max(1, min(workers, tasks))
}

func (w *DataWriter) finishFile() error {
	if w.file == nil {
		return nil
	}
	err := w.file.Close()
	var verr error
	if err == nil {
		// Read the footer back while the file is synced: the bytes read are
		// the ones written either way, and the sync is mostly waiting.
		verified := make(chan struct{})
		go func() {
			defer close(verified)
			verr = verifyDataFile(w.file.Name(), w.fileFrames, w.fileEps)
		}()
		err = w.file.f.Sync()
		<-verified
	}
	if cerr := w.file.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", w.file.Name(), err)
	}
	if verr != nil {
		return verr
	}
	w.written = append(w.written, layout.DataPath(w.chunk, w.fileIdx))
	w.file = nil
	return nil
}

// Close finishes the current file (footer, fsync). Calling it twice is an error.
func (w *DataWriter) Close() error {
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	if w.err != nil {
		if w.file != nil {
			w.file.removeSpill()
			_ = w.file.f.Close()
		}
		return ErrWriterBroken
	}
	if err := w.finishFile(); err != nil {
		w.err = err
		return fmt.Errorf("shard: %w", err)
	}
	return nil
}

// writeColumn converts rows of one column to parquet.Values, about
// writeChunkValues at a time (whole rows, reusing w.values so that nothing is
// allocated per row), and hands them to the column writer. Scalars keep
// levels (0, 0); a vector row is n values with repetition level 0 then 1 and
// definition level 1 (REQUIRED list, repeated group, REQUIRED element).
func (w *DataWriter) writeColumn(cw *parquet.ColumnWriter, f Feature, c *ColumnData, rows int, scratch *[]parquet.Value) error {
	width := f.width()
	chunkRows := max(1, writeChunkValues/width)
	if need := chunkRows * width; cap(*scratch) < need {
		*scratch = make([]parquet.Value, need)
	}
	for start := 0; start < rows; start += chunkRows {
		end := min(start+chunkRows, rows)
		vals := (*scratch)[:(end-start)*width]
		lo, hi := start*width, end*width
		f.Dtype.Values().ParquetValues(vals, c.v, lo, hi)
		if f.isVector() {
			for r := 0; r < len(vals); r += width {
				row := vals[r : r+width]
				row[0].SetDefinitionLevel(1)
				for j := 1; j < len(row); j++ {
					row[j].SetRepetitionLevel(1)
					row[j].SetDefinitionLevel(1)
				}
			}
		}
		if _, err := cw.WriteRowValues(vals); err != nil {
			return err
		}
	}
	// Encode and compress the column's last page here, in this worker,
	// rather than serially in the row group flush; that flush then finds the
	// buffer empty. The page holds the same rows either way.
	return cw.Flush()
}

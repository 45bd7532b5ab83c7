package shard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/ceres-robotics/ceres-export/internal/descriptor"
	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/pqcolumns"
)

// ErrNotDataset is returned by Open for a directory that is not a dataset
// this tool wrote.
var ErrNotDataset = errors.New("not a ceres-export shard or merged dataset")

// Dataset is a dataset this tool wrote, a shard or a merged dataset, read
// back through one door: LeRobot's metadata as LeRobot reads it (info.json,
// the tasks, every episode with its rows' and videos' places and its
// statistics) and what CERES adds (the ceres/* columns of every episode,
// the files under ceres/). merge, report and batch read datasets through
// it. verify keeps a reader of its own (arrow-go, written apart from this
// one) on purpose: it checks the writers against the format, not against
// themselves.
//
// Open reads info.json only; Tasks, Episodes and the CERES files are read
// when asked for, so that a caller that needs one file pays for one file.
type Dataset struct {
	// Dir is the dataset's root as given to Open.
	Dir string
	// Merged says the dataset is a merged one (it holds the merge report);
	// otherwise it is a shard (it holds the export report).
	Merged bool
	// Foreign says it is a LeRobot v3.0 dataset this tool did not write
	// (neither report: recorded with lerobot-record, or a shard that
	// lerobot-edit-dataset rewrote without its ceres/ directory); only
	// OpenSource opens one. Its episodes have no CERES columns.
	Foreign bool
	Info    Info
	// Parquet, when set, opens the dataset's Parquet files: a merge shares
	// one set between its reader of a source and verify's check of it, so
	// that each file is parsed and decoded once. Nil: each read opens its
	// own.
	Parquet *pqcolumns.Files

	// held are the data files' columns HoldDataFiles keeps.
	held map[DataLocation]*table
}

// Info is what meta/info.json says of the dataset.
type Info struct {
	FPS int
	// RobotType is a string, or nil for JSON null.
	RobotType any
	// Features are the dataset's own features in info.json order; LeRobot's
	// default columns (lerobot.DefaultFeatures) are left out.
	Features []Feature
	// ChunksSize, DataFileSizeMB and VideoFileSizeMB are 0 when absent.
	ChunksSize, DataFileSizeMB, VideoFileSizeMB int
	TotalEpisodes, TotalFrames, TotalTasks      int64
}

// VideoFeatures returns the video features in info.json order.
func (i *Info) VideoFeatures() []Feature {
	var out []Feature
	for _, f := range i.Features {
		if f.Dtype == lerobot.Video {
			out = append(out, f)
		}
	}
	return out
}

// DataFeatures returns the features that have a data column, in order:
// the columns an EpisodeRows holds.
func (i *Info) DataFeatures() []Feature {
	var out []Feature
	for _, f := range i.Features {
		if !f.Dtype.Visual() {
			out = append(out, f)
		}
	}
	return out
}

// Episode is one row of meta/episodes.
type Episode struct {
	Index  int64
	Tasks  []string
	Length int64
	// Data is where its rows are.
	Data DataLocation
	// Videos places it in each video feature's files, with its statistics.
	Videos map[string]VideoSegment
	// Ceres holds its ceres/* columns (Source set in a merged dataset).
	Ceres layout.CeresEpisode
}

// CampaignOrigin is the content of layout.CampaignPath: the campaign task
// attempt that made a shard. Merge copies the task id and attempt number
// into every episode of the shard (layout.ColSourceCampaignTaskID and
// ColSourceCampaignAttempt).
type CampaignOrigin struct {
	CampaignID string `json:"campaign_id"`
	TaskID     string `json:"task_id"`
	AttemptNo  int64  `json:"attempt_no"`
}

// Open opens the dataset at dir: it tells a shard from a merged dataset by
// its report and reads meta/info.json. An error that is ErrNotDataset says
// dir is not something this tool wrote.
func Open(dir string) (*Dataset, error) { return open(dir, false) }

// OpenSource opens a dataset as Open does, and also a LeRobot v3.0
// dataset this tool did not write (Dataset.Foreign): what a merge takes.
func OpenSource(dir string) (*Dataset, error) { return open(dir, true) }

func open(dir string, foreign bool) (*Dataset, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, notDataset(dir, "not a directory")
	}
	d := &Dataset{Dir: dir}
	switch {
	case d.Has(layout.MergeReportPath):
		d.Merged = true
	case d.Has(layout.ExportReportPath):
	case d.Has(layout.InfoPath) && foreign:
		d.Foreign = true
	case d.Has(layout.InfoPath):
		return nil, notDataset(dir, fmt.Sprintf("it has %s but neither %s nor %s (a LeRobot dataset this tool did not make)", layout.InfoPath, layout.ExportReportPath, layout.MergeReportPath))
	default:
		return nil, notDataset(dir, "no "+layout.InfoPath)
	}
	if err := d.readInfo(); err != nil {
		return nil, err
	}
	return d, nil
}

func notDataset(dir, why string) error { return fmt.Errorf("%s is %w: %s", dir, ErrNotDataset, why) }

// Path is the path of file rel (a layout path) of the dataset.
func (d *Dataset) Path(rel string) string { return filepath.Join(d.Dir, filepath.FromSlash(rel)) }

// Has reports whether the dataset holds file rel.
func (d *Dataset) Has(rel string) bool {
	_, err := os.Stat(d.Path(rel))
	return err == nil
}

// ReadFile reads file rel (a layout path) of the dataset; only a regular
// file is opened. A missing file's error is fs.ErrNotExist.
func (d *Dataset) ReadFile(rel string) ([]byte, error) { return input.ReadFile(d.Path(rel)) }

// ReadJSON decodes JSON file rel into v; errors name the file.
func (d *Dataset) ReadJSON(rel string, v any) error {
	b, err := d.ReadFile(rel)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", d.Path(rel), err)
	}
	return nil
}

// Private reports whether the dataset is metadata-only (it holds
// layout.PrivacyMarkerPath).
func (d *Dataset) Private() bool { return d.Has(layout.PrivacyMarkerPath) }

// ReportSHA256 returns the SHA-256 (hex) of the dataset's export report
// (a shard) or merge report (a merged dataset) and its bytes: what names
// the dataset's content.
func (d *Dataset) ReportSHA256() (string, []byte, error) {
	rel := layout.ExportReportPath
	if d.Merged {
		rel = layout.MergeReportPath
	}
	b, err := d.ReadFile(rel)
	if err != nil {
		return "", nil, err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), b, nil
}

// Campaign returns the campaign task attempt that made the shard, nil when
// it was not made by one.
func (d *Dataset) Campaign() (*CampaignOrigin, error) {
	var c CampaignOrigin
	err := d.ReadJSON(layout.CampaignPath, &c)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if c.TaskID == "" || c.AttemptNo < 1 {
		return nil, fmt.Errorf("%s: task_id must be set and attempt_no at least 1", d.Path(layout.CampaignPath))
	}
	return &c, nil
}

// Descriptors returns the dataset's task descriptors.
func (d *Dataset) Descriptors() ([]descriptor.Descriptor, error) {
	var f descriptor.File
	if err := d.ReadJSON(layout.DescriptorsPath, &f); err != nil {
		return nil, err
	}
	if f.SchemaVersion != descriptor.SchemaVersion {
		return nil, fmt.Errorf("%s: schema_version %d, want %d", d.Path(layout.DescriptorsPath), f.SchemaVersion, descriptor.SchemaVersion)
	}
	return f.Tasks, nil
}

// SpecsDir is where the dataset stores its task specifications: their
// redacted copies in a metadata-only dataset.
func (d *Dataset) SpecsDir() string {
	if d.Private() {
		return layout.RedactedSpecsDir
	}
	return layout.SpecsDir
}

// Specs returns every stored task specification by hash. A canonical one
// must hash to its name; a redacted copy carries the original's name.
func (d *Dataset) Specs() (map[string][]byte, error) {
	dir, private := d.SpecsDir(), d.Private()
	entries, err := os.ReadDir(d.Path(dir))
	if err != nil {
		return nil, err
	}
	specs := map[string][]byte{}
	for _, e := range entries {
		hash, ok := strings.CutSuffix(e.Name(), layout.SpecFileExt)
		if !ok || e.IsDir() {
			continue
		}
		rel := dir + "/" + e.Name()
		// A pipe or a link under the name of a specification is an error
		// naming it, not a file silently left out.
		if err := input.CheckEntry(d.Path(rel)); err != nil {
			return nil, err
		}
		b, err := d.ReadFile(rel)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != hash && !private {
			return nil, fmt.Errorf("%s: the SHA-256 of its bytes is not its name", d.Path(rel))
		}
		specs[hash] = b
	}
	return specs, nil
}

// readInfo parses meta/info.json keeping key order.
func (d *Dataset) readInfo() error {
	p := d.Path(layout.InfoPath)
	b, err := d.ReadFile(layout.InfoPath)
	if err != nil {
		return err
	}
	v, err := DecodeJSON(b)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	doc, ok := v.(JSONObject)
	if !ok {
		return fmt.Errorf("%s: not a JSON object", p)
	}
	if cv, _ := doc.Get("codebase_version"); cv != lerobot.CodebaseVersion {
		return fmt.Errorf("%s: codebase_version is %v, want %q", p, cv, lerobot.CodebaseVersion)
	}
	fps, _ := doc.Get("fps")
	if n, isInt := fps.(int64); !isInt || n <= 0 {
		return fmt.Errorf("%s: fps: want a positive integer, found %v", p, fps)
	}
	d.Info.FPS = int(fps.(int64))
	d.Info.RobotType, _ = doc.Get("robot_type")
	if _, isStr := d.Info.RobotType.(string); d.Info.RobotType != nil && !isStr {
		return fmt.Errorf("%s: robot_type: want a string or null, found %v", p, d.Info.RobotType)
	}
	for _, n := range []struct {
		key string
		int *int
		i64 *int64
	}{
		{"chunks_size", &d.Info.ChunksSize, nil}, {"data_files_size_in_mb", &d.Info.DataFileSizeMB, nil},
		{"video_files_size_in_mb", &d.Info.VideoFileSizeMB, nil}, {"total_episodes", nil, &d.Info.TotalEpisodes},
		{"total_frames", nil, &d.Info.TotalFrames}, {"total_tasks", nil, &d.Info.TotalTasks},
	} {
		v, ok := doc.Get(n.key)
		if !ok {
			continue
		}
		x, isInt := v.(int64)
		if !isInt || x < 0 {
			return fmt.Errorf("%s: %s: want a non-negative integer, found %v", p, n.key, v)
		}
		if n.int != nil {
			*n.int = int(x)
		} else {
			*n.i64 = x
		}
	}
	fv, _ := doc.Get("features")
	feats, ok := fv.(JSONObject)
	if !ok {
		return fmt.Errorf("%s: features: want an object", p)
	}
	for _, fe := range feats {
		if lerobot.IsDefaultFeature(fe.Key) {
			continue
		}
		f, err := parseInfoFeature(fe.Key, fe.Value)
		if err != nil {
			return fmt.Errorf("%s: features.%s: %w", p, fe.Key, err)
		}
		d.Info.Features = append(d.Info.Features, f)
	}
	return nil
}

// parseInfoFeature reads one entry of info.json "features", the reading
// side of infoFeatureJSON.
func parseInfoFeature(name string, v any) (Feature, error) {
	f := Feature{Name: name}
	o, ok := v.(JSONObject)
	if !ok {
		return f, errors.New("want an object")
	}
	dt, _ := o.Get("dtype")
	dts, ok := dt.(string)
	if !ok {
		return f, errors.New("dtype: want a string")
	}
	f.Dtype = lerobot.Dtype(dts)
	sh, _ := o.Get("shape")
	list, ok := sh.([]any)
	if !ok {
		return f, errors.New("shape: want a list")
	}
	for _, x := range list {
		n, ok := x.(int64)
		if !ok {
			return f, errors.New("shape: want integers")
		}
		f.Shape = append(f.Shape, int(n))
	}
	nv, _ := o.Get("names")
	if nv != nil {
		nl, ok := nv.([]any)
		if !ok {
			return f, errors.New("names: want a list of strings or null")
		}
		f.Names = []string{}
		for _, x := range nl {
			str, ok := x.(string)
			if !ok {
				return f, errors.New("names: want strings")
			}
			f.Names = append(f.Names, str)
		}
	}
	if f.Dtype == lerobot.Video {
		info, _ := o.Get("info")
		if f.Info, ok = info.(JSONObject); !ok {
			return f, errors.New("info: want an object")
		}
	}
	return f, nil
}

// Tasks reads meta/tasks.parquet: task i is row i.
func (d *Dataset) Tasks(ctx context.Context) ([]string, error) {
	t, err := readTable(ctx, d.Parquet, d.Path(layout.TasksPath))
	if err != nil {
		return nil, err
	}
	defer t.release()
	idx, err := t.int64s(layout.TasksColIndex)
	if err != nil {
		return nil, err
	}
	name := layout.TasksColTask
	if !t.has(name) {
		name = layout.TasksColTaskUnnamed
	}
	str, err := t.strings(name)
	if err != nil {
		return nil, err
	}
	tasks := make([]string, 0, t.rows)
	for i := 0; i < t.rows; i++ {
		if idx.Value(i) != int64(i) {
			return nil, fmt.Errorf("%s row %d: %s %d, want %d", t.path, i, layout.TasksColIndex, idx.Value(i), i)
		}
		tasks = append(tasks, str.Value(i))
	}
	return tasks, nil
}

// Episodes reads every meta/episodes file in path order. Episodes must be
// numbered from 0 and their rows follow one another.
func (d *Dataset) Episodes(ctx context.Context) ([]Episode, error) {
	eps, _, err := d.readEpisodes(ctx, nil, true)
	return eps, err
}

// EpisodePlaces is Episodes without any statistics, its video segments'
// neither: where each episode's rows and frames are. An append reads the
// dataset appended to so (shard.Builder.Continue), whose statistics
// columns are most of meta/episodes.
func (d *Dataset) EpisodePlaces(ctx context.Context) ([]Episode, error) {
	eps, _, err := d.readEpisodes(ctx, nil, false)
	return eps, err
}

// EpisodesWithStats is Episodes with, per episode, the statistics it
// records for each of features, in that order: a foreign merge source's
// own, which the merge aggregates.
func (d *Dataset) EpisodesWithStats(ctx context.Context, features []Feature) ([]Episode, [][]Stats, error) {
	return d.readEpisodes(ctx, features, true)
}

// readEpisodes reads meta/episodes and, for each episode, the statistics
// of the features in stats, in that order, and those of its video
// segments if videoStats.
func (d *Dataset) readEpisodes(ctx context.Context, stats []Feature, videoStats bool) ([]Episode, [][]Stats, error) {
	files, err := d.episodesFiles()
	if err != nil {
		return nil, nil, err
	}
	var eps []Episode
	var epStats [][]Stats
	var frames int64
	// Without data statistics asked for, their columns (most of the file)
	// are not read; a video segment carries its feature's.
	var keep func(string) bool
	if len(stats) == 0 {
		keep = func(name string) bool {
			if !strings.HasPrefix(name, layout.StatsColumnPrefix) {
				return true
			}
			if !videoStats {
				return false
			}
			for _, f := range d.Info.VideoFeatures() {
				if strings.HasPrefix(name, layout.StatsColumn(f.Name, "")) {
					return true
				}
			}
			return false
		}
	}
	for _, p := range files {
		t, err := readColumns(ctx, d.Parquet, p, keep)
		if err != nil {
			return nil, nil, err
		}
		first := len(eps)
		eps, frames, err = d.episodeRows(t, eps, frames, videoStats)
		cols := make([]*statsColumns, len(stats))
		for j, f := range stats {
			// A string feature has none; a video feature's episodeRows has
			// read into the episode's segment.
			if err == nil && f.hasStats() && f.Dtype != lerobot.Video {
				if cols[j], err = lookupStats(t, f.Name); err != nil {
					err = fmt.Errorf("%s: %w", p, err)
				}
			}
		}
		for i := 0; err == nil && len(stats) > 0 && i < len(eps)-first; i++ {
			row := make([]Stats, len(stats))
			for j, c := range cols {
				if stats[j].Dtype == lerobot.Video {
					seg, ok := eps[first+i].Videos[stats[j].Name]
					if !ok {
						err = fmt.Errorf("%s: %s is not a video feature of %s", p, stats[j].Name, d.Dir)
						break
					}
					row[j] = seg.Stats
					continue
				}
				if c == nil {
					continue
				}
				if row[j], err = c.at(i); err != nil {
					err = fmt.Errorf("%s row %d: %w", p, i, err)
					break
				}
			}
			epStats = append(epStats, row)
		}
		t.release()
		if err != nil {
			return nil, nil, err
		}
	}
	return eps, epStats, nil
}

// episodesFiles are the dataset's meta/episodes files in path order (at
// least one).
func (d *Dataset) episodesFiles() ([]string, error) {
	root := d.Path(layout.EpisodesDir)
	var files []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(d.Dir, p)
		if _, _, ok := layout.ChunkFile(filepath.ToSlash(rel), layout.EpisodesDir, layout.ParquetExt); ok && !e.IsDir() {
			if err := input.CheckEntry(p); err != nil {
				return err
			}
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no %s files", d.Dir, layout.EpisodesDir)
	}
	return files, nil
}

// episodeRows appends the rows of one episodes file to eps.
func (d *Dataset) episodeRows(t *table, eps []Episode, frames int64, withVideoStats bool) ([]Episode, int64, error) {
	intCols := []string{layout.ColEpisodeIndex, layout.ColLength, layout.ColDataChunkIndex, layout.ColDataFileIndex, layout.ColDatasetFromIndex, layout.ColDatasetToIndex}
	videos := d.Info.VideoFeatures()
	for _, f := range videos {
		intCols = append(intCols, layout.VideoColumn(f.Name, layout.VideoChunkIndex), layout.VideoColumn(f.Name, layout.VideoFileIndex))
	}
	ints := map[string]*array.Int64{}
	for _, c := range intCols {
		a, err := t.int64s(c)
		if err != nil {
			return nil, 0, err
		}
		ints[c] = a
	}
	var ceres []layout.EpisodeColumn
	if !d.Foreign {
		ceres = layout.CeresColumns(d.Merged)
	}
	ceresCols := make([]arrayColumn, len(ceres))
	for i, c := range ceres {
		a, err := t.column(c.Name, c.Dtype)
		if err != nil {
			return nil, 0, err
		}
		ceresCols[i] = a
	}
	tasks := t.cols[layout.ColTasks]
	videoStats := make([]*statsColumns, len(videos))
	for j, f := range videos {
		if !withVideoStats {
			break
		}
		var err error
		if videoStats[j], err = lookupStats(t, f.Name); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", t.path, err)
		}
	}
	eps = slices.Grow(eps, t.rows)
	for i := 0; i < t.rows; i++ {
		v := func(c string) int64 { return ints[c].Value(i) }
		e := Episode{
			Index: v(layout.ColEpisodeIndex), Length: v(layout.ColLength),
			Data: DataLocation{
				ChunkIndex: int(v(layout.ColDataChunkIndex)), FileIndex: int(v(layout.ColDataFileIndex)),
				FromIndex: v(layout.ColDatasetFromIndex), ToIndex: v(layout.ColDatasetToIndex),
			},
			Videos: map[string]VideoSegment{},
		}
		where := rowAt{t.path, i}
		if e.Index != int64(len(eps)) {
			return nil, 0, fmt.Errorf("%s: %s %d, want %d", where, layout.ColEpisodeIndex, e.Index, len(eps))
		}
		if e.Length <= 0 || e.Data.ToIndex-e.Data.FromIndex != e.Length || e.Data.FromIndex != frames {
			return nil, 0, fmt.Errorf("%s: rows [%d, %d) and length %d do not follow the previous episodes' %d rows", where, e.Data.FromIndex, e.Data.ToIndex, e.Length, frames)
		}
		var err error
		if e.Tasks, err = stringList(tasks, i); err != nil {
			return nil, 0, fmt.Errorf("%s: %s: %w", where, layout.ColTasks, err)
		}
		for j, f := range videos {
			col := func(field string) string { return layout.VideoColumn(f.Name, field) }
			from, err1 := t.float64s(col(layout.VideoFromTimestamp))
			to, err2 := t.float64s(col(layout.VideoToTimestamp))
			if err := errors.Join(err1, err2); err != nil {
				return nil, 0, err
			}
			seg := VideoSegment{
				ChunkIndex: int(v(col(layout.VideoChunkIndex))), FileIndex: int(v(col(layout.VideoFileIndex))),
				FromTimestamp: from.Value(i), ToTimestamp: to.Value(i),
			}
			if videoStats[j] != nil {
				if seg.Stats, err = videoStats[j].at(i); err != nil {
					return nil, 0, fmt.Errorf("%s: %w", where, err)
				}
			}
			e.Videos[f.Name] = seg
		}
		// In a merged dataset, an episode from a foreign source has its
		// ForeignNull columns all null, and no other episode any.
		foreignNulls, foreignCols := 0, 0
		for j, c := range ceres {
			v := ceresCols[j].value(i)
			if d.Merged && c.ForeignNull() && !c.Null {
				foreignCols++
				if v == nil {
					foreignNulls++
					continue
				}
			}
			if !c.Set(&e.Ceres, v) {
				return nil, 0, fmt.Errorf("%s: %s is null", where, c.Name)
			}
		}
		switch foreignNulls {
		case 0:
		case foreignCols:
			e.Ceres.Foreign = true
		default:
			return nil, 0, fmt.Errorf("%s: %d of the %d ceres/* columns a foreign episode leaves null are null: an episode is CERES's or foreign, not part of each", where, foreignNulls, foreignCols)
		}
		frames += e.Length
		eps = append(eps, e)
	}
	return eps, frames, nil
}

// rowAt names a row of a file in an error, formatted only then: an append
// reads every row of a 1,000-shard dataset's meta/episodes.
type rowAt struct {
	path string
	row  int
}

func (r rowAt) String() string { return fmt.Sprintf("%s row %d", r.path, r.row) }

// statsColumns are one feature's per-episode statistics columns of an
// episodes file, looked up once for all its rows.
type statsColumns struct {
	name                       string
	min, max, mean, std, count arrow.Array
	quantiles                  [len(QuantileNames)]arrow.Array
}

// lookupStats finds feature name's statistics columns in t.
func lookupStats(t *table, name string) (*statsColumns, error) {
	c := &statsColumns{name: name}
	var errs []error
	get := func(stat string) arrow.Array {
		col := layout.StatsColumn(name, stat)
		a, ok := t.cols[col]
		if !ok {
			errs = append(errs, fmt.Errorf("no column %s", col))
		}
		return a
	}
	c.min, c.max, c.mean, c.std = get("min"), get("max"), get("mean"), get("std")
	for j, q := range QuantileNames {
		c.quantiles[j] = get(q)
	}
	c.count = get("count")
	return c, errors.Join(errs...)
}

// at reads the statistics of row i.
func (c *statsColumns) at(i int) (Stats, error) {
	var st Stats
	var errs []error
	get := func(stat string, a arrow.Array) []float64 {
		v, err := numbers(a, i)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", layout.StatsColumn(c.name, stat), err))
		}
		return v
	}
	st.Min, st.Max, st.Mean, st.Std = get("min", c.min), get("max", c.max), get("mean", c.mean), get("std", c.std)
	for j, q := range QuantileNames {
		st.Quantiles[j] = get(q, c.quantiles[j])
	}
	count := get("count", c.count)
	if err := errors.Join(errs...); err != nil {
		return st, err
	}
	if len(count) != 1 {
		return st, fmt.Errorf("%s: want one value, found %d", layout.StatsColumn(c.name, "count"), len(count))
	}
	st.Count = int64(count[0])
	return st, nil
}

// EpisodesWriter returns the created_by of the dataset's first
// meta/episodes file: the program that wrote its metadata last.
func (d *Dataset) EpisodesWriter() (string, error) {
	p := d.Path(layout.EpisodesPath(0, 0))
	f, err := input.Open(p)
	if err != nil {
		return "", err
	}
	r, err := file.NewParquetReader(f)
	if err != nil {
		f.Close()
		return "", fmt.Errorf("%s: %w", p, err)
	}
	defer r.Close()
	return r.MetaData().GetCreatedBy(), nil
}

package merge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/descriptor"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/internal/shard"
)

// Paths inside a shard or merged dataset that merge reads.
const (
	exportReportPath = shard.ExportReportPath
	mergeReportName  = "merge-report.json"
	mergeReportPath  = "ceres/" + mergeReportName
	specDir          = "ceres/task-specifications"

	kindShard       = "shard"
	kindMerged      = "merged"
	sourceKeyPrefix = "ceres/source/"
)

var episodesFileRe = regexp.MustCompile(`^chunk-\d{3,}/file-\d{3,}\.parquet$`)

// LeRobot's default columns; they are regenerated, never copied.
var defaultColumns = map[string]bool{"timestamp": true, "frame_index": true, "episode_index": true, "index": true, "task_index": true}

// source is one input of a merge (a shard, or with Into the merged dataset
// appended to), read into memory except for its rows and video.
type source struct {
	dir  string // as given
	name string // directory name
	kind string // kindShard or kindMerged

	fps       int
	robotType any // string or nil
	features  []shard.Feature
	tasks     []string
	episodes  []sourceEpisode
	frames    int64
	specs     map[string][]byte
	// private: a metadata-only dataset (ceres/privacy.json).
	private bool
	// descriptors are its ceres/tasks.json.
	descriptors []descriptor.Descriptor

	// reportSHA is the SHA-256 of ceres/export-report.json (shards).
	reportSHA string
	sessionID string
	campaign  *campaignRef
	// userCampaign: a metadata-only shard's campaign identity holds values
	// a user wrote, so the merge leaves it out (withoutUserStrings).
	userCampaign bool
	// merged is the dataset's own merge report (kindMerged).
	merged *Report
}

// videoPointer is an episode's place in one video feature's files.
type videoPointer struct {
	chunk, file int
	from, to    float64
	stats       shard.Stats
}

// sourceEpisode is one row of a source's meta/episodes.
type sourceEpisode struct {
	index      int64
	tasks      []string
	length     int64
	dataChunk  int
	dataFile   int
	from, to   int64
	videos     map[string]videoPointer
	ceres      shard.CeresEpisode
	firstFrame map[string]int // per video feature: frame of the episode in its file
}

// notShardError says a directory is not something merge reads.
func notShardError(dir, why string) error {
	return fmt.Errorf("%s is not a ceres-export shard or merged dataset: %s", dir, why)
}

// openSource reads a source's metadata.
func openSource(ctx context.Context, dir string) (*source, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("source %w", err)
	}
	if !st.IsDir() {
		return nil, notShardError(dir, "not a directory")
	}
	s := &source{dir: dir, name: filepath.Base(filepath.Clean(dir)), specs: map[string][]byte{}}
	switch {
	case exists(filepath.Join(dir, mergeReportPath)):
		s.kind = kindMerged
	case exists(filepath.Join(dir, exportReportPath)):
		s.kind = kindShard
	case exists(filepath.Join(dir, lerobot.InfoPath)):
		return nil, notShardError(dir, "it has meta/info.json but neither ceres/export-report.json nor ceres/merge-report.json (a LeRobot dataset this tool did not make)")
	default:
		return nil, notShardError(dir, "no meta/info.json")
	}
	if err := s.readInfo(); err != nil {
		return nil, err
	}
	if err := s.readTasks(ctx); err != nil {
		return nil, err
	}
	if err := s.readEpisodes(ctx); err != nil {
		return nil, err
	}
	s.private = exists(s.path("ceres/" + privacy.MarkerName))
	if err := s.readSpecs(); err != nil {
		return nil, err
	}
	if err := s.readDescriptors(); err != nil {
		return nil, err
	}
	if err := s.readProvenance(); err != nil {
		return nil, err
	}
	return s, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func (s *source) path(rel string) string { return filepath.Join(s.dir, filepath.FromSlash(rel)) }

// readInfo parses meta/info.json keeping key order.
func (s *source) readInfo() error {
	p := s.path(lerobot.InfoPath)
	b, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("source %w", err)
	}
	v, err := shard.DecodeJSON(b)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	doc, ok := v.(shard.JSONObject)
	if !ok {
		return fmt.Errorf("%s: not a JSON object", p)
	}
	if cv, _ := doc.Get("codebase_version"); cv != lerobot.CodebaseVersion {
		return fmt.Errorf("%s: codebase_version is %v, want %q", p, cv, lerobot.CodebaseVersion)
	}
	fps, ok := doc.Get("fps")
	if n, isInt := fps.(int64); !ok || !isInt || n <= 0 {
		return fmt.Errorf("%s: fps: want a positive integer, found %v", p, fps)
	}
	s.fps = int(fps.(int64))
	s.robotType, _ = doc.Get("robot_type")
	if _, isStr := s.robotType.(string); s.robotType != nil && !isStr {
		return fmt.Errorf("%s: robot_type: want a string or null, found %v", p, s.robotType)
	}
	fv, _ := doc.Get("features")
	feats, ok := fv.(shard.JSONObject)
	if !ok {
		return fmt.Errorf("%s: features: want an object", p)
	}
	for _, fe := range feats {
		if defaultColumns[fe.Key] {
			continue
		}
		f, err := parseFeature(fe.Key, fe.Value)
		if err != nil {
			return fmt.Errorf("%s: features.%s: %w", p, fe.Key, err)
		}
		s.features = append(s.features, f)
	}
	return nil
}

func parseFeature(name string, v any) (shard.Feature, error) {
	f := shard.Feature{Name: name}
	o, ok := v.(shard.JSONObject)
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
		if f.Info, ok = info.(shard.JSONObject); !ok {
			return f, errors.New("info: want an object")
		}
	}
	return f, nil
}

func (s *source) videoFeatures() []shard.Feature {
	var out []shard.Feature
	for _, f := range s.features {
		if f.Dtype == lerobot.Video {
			out = append(out, f)
		}
	}
	return out
}

// readTasks reads meta/tasks.parquet: row i is task i.
func (s *source) readTasks(ctx context.Context) error {
	t, err := readTable(ctx, s.path(lerobot.TasksPath))
	if err != nil {
		return err
	}
	defer t.release()
	idx, err := t.int64s("task_index")
	if err != nil {
		return err
	}
	// The task strings are the pandas index: a "task" column (newer
	// LeRobot, this tool) or "__index_level_0__" (LeRobot 0.4.4).
	name := "task"
	if !t.has(name) {
		name = "__index_level_0__"
	}
	str, err := t.strings(name)
	if err != nil {
		return err
	}
	for i := 0; i < t.rows; i++ {
		if idx.Value(i) != int64(i) {
			return fmt.Errorf("%s row %d: task_index %d, want %d", t.path, i, idx.Value(i), i)
		}
		s.tasks = append(s.tasks, str.Value(i))
	}
	return nil
}

// readEpisodes reads every meta/episodes file in path order.
func (s *source) readEpisodes(ctx context.Context) error {
	root := s.path("meta/episodes")
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.Type().IsRegular() && episodesFileRe.MatchString(filepath.ToSlash(rel)) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("source %w", err)
	}
	slices.Sort(files)
	if len(files) == 0 {
		return fmt.Errorf("%s: no meta/episodes files", s.dir)
	}
	videos := s.videoFeatures()
	for _, p := range files {
		t, err := readTable(ctx, p)
		if err != nil {
			return err
		}
		err = s.episodeRows(t, videos)
		t.release()
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *source) episodeRows(t *table, videos []shard.Feature) error {
	ints := map[string]int64{}
	intCols := []string{"episode_index", "length", "data/chunk_index", "data/file_index", "dataset_from_index", "dataset_to_index"}
	for _, f := range videos {
		intCols = append(intCols, "videos/"+f.Name+"/chunk_index", "videos/"+f.Name+"/file_index")
	}
	get := map[string]func(i int) int64{}
	for _, c := range intCols {
		a, err := t.int64s(c)
		if err != nil {
			return err
		}
		get[c] = a.Value
	}
	tasks := t.cols["tasks"]
	for i := 0; i < t.rows; i++ {
		for _, c := range intCols {
			ints[c] = get[c](i)
		}
		e := sourceEpisode{
			index: ints["episode_index"], length: ints["length"],
			dataChunk: int(ints["data/chunk_index"]), dataFile: int(ints["data/file_index"]),
			from: ints["dataset_from_index"], to: ints["dataset_to_index"],
			videos: map[string]videoPointer{}, firstFrame: map[string]int{},
		}
		where := fmt.Sprintf("%s row %d", t.path, i)
		if e.index != int64(len(s.episodes)) {
			return fmt.Errorf("%s: episode_index %d, want %d", where, e.index, len(s.episodes))
		}
		if e.length <= 0 || e.to-e.from != e.length || e.from != s.frames {
			return fmt.Errorf("%s: rows [%d, %d) and length %d do not follow the previous episodes' %d rows", where, e.from, e.to, e.length, s.frames)
		}
		var err error
		if e.tasks, err = stringList(tasks, i); err != nil {
			return fmt.Errorf("%s: tasks: %w", where, err)
		}
		if len(e.tasks) != 1 {
			return fmt.Errorf("%s: tasks %q: merge takes episodes of exactly one task", where, e.tasks)
		}
		for _, f := range videos {
			p := "videos/" + f.Name + "/"
			from, err1 := t.float64s(p + "from_timestamp")
			to, err2 := t.float64s(p + "to_timestamp")
			if err := errors.Join(err1, err2); err != nil {
				return err
			}
			vp := videoPointer{chunk: int(ints[p+"chunk_index"]), file: int(ints[p+"file_index"]), from: from.Value(i), to: to.Value(i)}
			// The episode's first frame in its file: from_timestamp must
			// be a whole number of frames, and the episode length/fps long.
			ff := math.Round(vp.from * float64(s.fps))
			if math.Abs(vp.from*float64(s.fps)-ff) > 1e-6 || math.Abs((vp.to-vp.from)*float64(s.fps)-float64(e.length)) > 1e-6 {
				return fmt.Errorf("%s: %sfrom_timestamp %v, to_timestamp %v: not frames [k, k+%d) of a %d fps grid", where, p, vp.from, vp.to, e.length, s.fps)
			}
			if vp.stats, err = readStats(t, "stats/"+f.Name+"/", i); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			e.videos[f.Name] = vp
			e.firstFrame[f.Name] = int(ff)
		}
		if e.ceres, err = readCeres(t, i); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		s.frames += e.length
		s.episodes = append(s.episodes, e)
	}
	return nil
}

// readStats reads one feature's per-episode stats columns (prefix
// "stats/<feature>/").
func readStats(t *table, prefix string, i int) (shard.Stats, error) {
	var st shard.Stats
	get := func(name string) ([]float64, error) {
		a, ok := t.cols[prefix+name]
		if !ok {
			return nil, fmt.Errorf("no column %s%s", prefix, name)
		}
		v, err := numbers(a, i)
		if err != nil {
			return nil, fmt.Errorf("%s%s: %w", prefix, name, err)
		}
		return v, nil
	}
	var err error
	var errs []error
	st.Min, err = get("min")
	errs = append(errs, err)
	st.Max, err = get("max")
	errs = append(errs, err)
	st.Mean, err = get("mean")
	errs = append(errs, err)
	st.Std, err = get("std")
	errs = append(errs, err)
	for j, q := range shard.QuantileNames {
		st.Quantiles[j], err = get(q)
		errs = append(errs, err)
	}
	count, err := get("count")
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return st, err
	}
	if len(count) != 1 {
		return st, fmt.Errorf("%scount: want one value, found %d", prefix, len(count))
	}
	st.Count = int64(count[0])
	return st, nil
}

// readCeres reads the ceres/* columns of row i, including ceres/source/*
// when the source is itself a merged dataset.
func readCeres(t *table, i int) (shard.CeresEpisode, error) {
	var c shard.CeresEpisode
	var errs []error
	str := func(name string) string {
		a, err := t.strings(name)
		if err != nil {
			errs = append(errs, err)
			return ""
		}
		return a.Value(i)
	}
	num := func(name string) int64 {
		a, err := t.int64s(name)
		if err != nil {
			errs = append(errs, err)
			return 0
		}
		return a.Value(i)
	}
	c.SessionID = str("ceres/session_id")
	c.TaskID = str("ceres/task_id")
	c.TaskLabel = str("ceres/task_label")
	c.TaskType = str("ceres/task_type")
	c.Cycle = num("ceres/cycle")
	c.Repetition = num("ceres/repetition")
	c.Attempt = num("ceres/attempt")
	if a, err := t.strings("ceres/outcome"); err != nil {
		errs = append(errs, err)
	} else if a.IsValid(i) {
		o := a.Value(i)
		c.Outcome = &o
	}
	c.StartNS = num("ceres/start_ns")
	c.EndNS = num("ceres/end_ns")
	c.SpecVersion = num("ceres/task_specification/version")
	c.SpecHash = str("ceres/task_specification/hash")
	c.RecordedSpecHash = str("ceres/task_specification/recorded_hash")
	c.TaskDescriptorID = str("ceres/task_descriptor_id")
	if t.has(sourceKeyPrefix + "index") {
		src := &shard.EpisodeSource{
			Index:        num(sourceKeyPrefix + "index"),
			Name:         str(sourceKeyPrefix + "name"),
			ReportSHA256: str(sourceKeyPrefix + "export_report_sha256"),
			EpisodeIndex: num(sourceKeyPrefix + "episode_index"),
		}
		if a, err := t.strings(sourceKeyPrefix + "campaign_task_id"); err != nil {
			errs = append(errs, err)
		} else if a.IsValid(i) {
			v := a.Value(i)
			src.CampaignTaskID = &v
		}
		if a, err := t.int64s(sourceKeyPrefix + "campaign_attempt"); err != nil {
			errs = append(errs, err)
		} else if a.IsValid(i) {
			v := a.Value(i)
			src.CampaignAttempt = &v
		}
		c.Source = src
	}
	return c, errors.Join(errs...)
}

// readSpecs reads every stored specification (checked against its name;
// a metadata-only source's redacted copies carry the original's name).
func (s *source) readSpecs() error {
	dir := specDir
	if s.private {
		dir = "ceres/" + privacy.RedactedSpecDir
	}
	entries, err := os.ReadDir(s.path(dir))
	if err != nil {
		return fmt.Errorf("source %w", err)
	}
	for _, e := range entries {
		hash, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(s.path(dir), e.Name()))
		if err != nil {
			return fmt.Errorf("source %w", err)
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != hash && !s.private {
			return fmt.Errorf("%s: the SHA-256 of its bytes is not its name", filepath.Join(s.path(dir), e.Name()))
		}
		s.specs[hash] = b
	}
	for _, e := range s.episodes {
		for _, h := range []string{e.ceres.SpecHash, e.ceres.RecordedSpecHash} {
			if s.specs[h] == nil {
				return fmt.Errorf("%s: episode %d names specification %s, which is not stored under %s", s.dir, e.index, h, dir)
			}
		}
	}
	return nil
}

// readDescriptors reads ceres/tasks.json, the task descriptors the merge
// pools.
func (s *source) readDescriptors() error {
	p := s.path("ceres/" + descriptor.FileName)
	b, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("source %w", err)
	}
	var f descriptor.File
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if f.SchemaVersion != descriptor.SchemaVersion {
		return fmt.Errorf("%s: schema_version %d, want %d", p, f.SchemaVersion, descriptor.SchemaVersion)
	}
	s.descriptors = f.Tasks
	return nil
}

// exportReportHead is the part of ceres/export-report.json merge uses.
type exportReportHead struct {
	SessionID string `json:"sessionId"`
}

// readProvenance reads what identifies the source: for a shard its export
// report's hash, session and campaign identity; for a merged dataset its
// merge report.
func (s *source) readProvenance() error {
	if s.kind == kindMerged {
		b, err := os.ReadFile(s.path(mergeReportPath))
		if err != nil {
			return fmt.Errorf("source %w", err)
		}
		var r Report
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: %w", s.path(mergeReportPath), err)
		}
		if r.Episodes != len(s.episodes) {
			return fmt.Errorf("%s: says %d episodes, meta/episodes holds %d", s.path(mergeReportPath), r.Episodes, len(s.episodes))
		}
		for _, e := range s.episodes {
			if e.ceres.Source == nil || e.ceres.Source.Index < 0 || e.ceres.Source.Index >= int64(len(r.Sources)) {
				return fmt.Errorf("%s: episode %d has no valid ceres/source/index", s.dir, e.index)
			}
		}
		s.merged = &r
		return nil
	}
	p := s.path(exportReportPath)
	b, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("source %w", err)
	}
	sum := sha256.Sum256(b)
	s.reportSHA = hex.EncodeToString(sum[:])
	var head exportReportHead
	if err := json.Unmarshal(b, &head); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	s.sessionID = head.SessionID
	for _, e := range s.episodes {
		if e.ceres.Source != nil {
			return fmt.Errorf("%s: a shard's episode %d carries ceres/source columns", s.dir, e.index)
		}
	}
	c, err := readCampaign(s.dir)
	if err != nil {
		return err
	}
	s.campaign = c
	return nil
}

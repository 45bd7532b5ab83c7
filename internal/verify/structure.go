package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
)

// LeRobot v3.0's paths (internal/lerobot); merge hard-codes the default
// templates, so nothing else is accepted.
const (
	infoPath          = layout.InfoPath
	statsPath         = layout.StatsPath
	tasksPath         = layout.TasksPath
	dataPathTemplate  = layout.DataPathTemplate
	videoPathTemplate = layout.VideoPathTemplate
	codebaseVersion   = lerobot.CodebaseVersion
	specDir           = layout.SpecsDir + "/"
	reportPath        = layout.ExportReportPath
)

var (
	dataFileRe     = regexp.MustCompile(`^data/chunk-(\d{3,})/file-(\d{3,})\.parquet$`)
	episodesFileRe = regexp.MustCompile(`^meta/episodes/chunk-(\d{3,})/file-(\d{3,})\.parquet$`)
	videoFileRe    = regexp.MustCompile(`^videos/([^/]+)/chunk-(\d{3,})/file-(\d{3,})\.mp4$`)
	specFileRe     = regexp.MustCompile(`^` + regexp.QuoteMeta(specDir) + `([0-9a-f]{64})\.json$`)
	// LeRobot's load_nested_dataset reads sorted(dir.glob("*/*.parquet")).
	dataGlobRe     = regexp.MustCompile(`^data/[^/]+/[^/]+\.parquet$`)
	episodesGlobRe = regexp.MustCompile(`^meta/episodes/[^/]+/[^/]+\.parquet$`)
)

// defaultFeatures are LeRobot's DEFAULT_FEATURES: every shard has them.
var defaultFeatures = lerobot.DefaultFeatures

// feature is one entry of info.json "features".
type feature struct {
	Name  string
	Dtype lerobot.Dtype
	Shape []int
	Names []string // nil when null
	Info  map[string]any
}

// width is the number of values per row of a data feature.
func (f *feature) width() int {
	n := 1
	for _, d := range f.Shape {
		n *= d
	}
	return n
}

// shardInfo is what verify takes from meta/info.json.
type shardInfo struct {
	FPS           int
	Features      []*feature // in info.json order
	byName        map[string]*feature
	TotalEpisodes int64
	TotalFrames   int64
	TotalTasks    int64
	ChunksSize    int64
	RobotType     any
}

// videoFeatures returns the video features in info.json order.
func (si *shardInfo) videoFeatures() []*feature {
	var out []*feature
	for _, f := range si.Features {
		if f.Dtype == lerobot.Video {
			out = append(out, f)
		}
	}
	return out
}

// dataFeatures returns the features that have a data column.
func (si *shardInfo) dataFeatures() []*feature {
	var out []*feature
	for _, f := range si.Features {
		if !f.Dtype.Visual() {
			out = append(out, f)
		}
	}
	return out
}

// checkStructure lists the files, checks the layout and reads info.json.
func (c *checker) checkStructure() error {
	// Entries that are there but not regular files: named for what they
	// are (layout.not-regular), never also called missing.
	irregular := map[string]bool{}
	err := filepath.WalkDir(c.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(c.dir, path)
		if err != nil {
			return err
		}
		if err := input.CheckEntry(path); err != nil {
			// Never opened: a FIFO would block the reader for ever, and a
			// link may point out of the dataset.
			c.errorf("layout.not-regular", filepath.ToSlash(rel), loc{}, "%v (a dataset holds regular files only)", err)
			irregular[filepath.ToSlash(rel)] = true
			return nil
		}
		c.files = append(c.files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w shard %s: %w", ErrUnreadable, c.dir, err)
	}
	// WalkDir visits in lexical order, which is LeRobot's sorted() order.
	c.readInfo()
	present := map[string]bool{}
	for _, f := range c.files {
		present[f] = true
	}
	for _, p := range []string{statsPath, tasksPath} {
		if !present[p] && !irregular[p] {
			c.errorf("layout.missing-file", p, loc{}, "missing: LeRobot's loader and merge need %s", p)
		}
	}
	var nData, nEpisodes int
	for _, f := range c.files {
		c.checkChunkFile(f)
		switch {
		case f == infoPath || f == statsPath || f == tasksPath || f == reportPath || f == cardPath:
		case dataFileRe.MatchString(f):
			nData++
		case episodesFileRe.MatchString(f):
			nEpisodes++
		case dataGlobRe.MatchString(f) || episodesGlobRe.MatchString(f):
			c.errorf("layout.stray-parquet", f, loc{}, "LeRobot reads every */*.parquet here and would concatenate this file's rows; only chunk-CCC/file-FFF.parquet belongs")
		case videoFileRe.MatchString(f):
			key := videoFileRe.FindStringSubmatch(f)[1]
			if c.info != nil {
				if ft := c.info.byName[key]; ft == nil || ft.Dtype != lerobot.Video {
					c.warnf("layout.stray-file", f, loc{}, "video file of %q, which is not a video feature of info.json", key)
				}
			}
		case specFileRe.MatchString(f):
		case strings.HasPrefix(f, specDir):
			c.errorf("spec.file-name", f, loc{}, "a stored specification must be named <sha256 hex>.json")
		case strings.HasPrefix(f, layout.CeresDir+"/"):
			// CERES's own files (reports, indexes); LeRobot never reads
			// them, and every one is named by the layout.
			if _, ok := layout.LookupCeresFile(f); !ok {
				c.warnf("layout.stray-file", f, loc{}, "not a CERES file of the dataset layout (internal/layout.CeresFiles)")
			}
		case strings.HasSuffix(f, ".parquet") && (strings.HasPrefix(f, "data/") || strings.HasPrefix(f, "meta/")):
			c.warnf("layout.stray-file", f, loc{}, "Parquet file outside LeRobot's layout")
		default:
			c.warnf("layout.stray-file", f, loc{}, "file not part of a LeRobot v3.0 shard (CERES files belong under ceres/)")
		}
	}
	if nData == 0 {
		c.errorf("layout.missing-file", "data/chunk-000/file-000.parquet", loc{}, "no data file: the shard has no rows")
	}
	if nEpisodes == 0 {
		c.errorf("layout.missing-file", "meta/episodes/chunk-000/file-000.parquet", loc{}, "no episodes metadata file")
	}
	return nil
}

// checkChunkFile checks that a chunk-CCC/file-FFF path steps as LeRobot's
// update_chunk_file_indices does: a file index below chunks_size.
func (c *checker) checkChunkFile(f string) {
	if c.info == nil || c.info.ChunksSize <= 0 {
		return
	}
	var m []string
	switch {
	case dataFileRe.MatchString(f):
		m = dataFileRe.FindStringSubmatch(f)[1:]
	case episodesFileRe.MatchString(f):
		m = episodesFileRe.FindStringSubmatch(f)[1:]
	case videoFileRe.MatchString(f):
		m = videoFileRe.FindStringSubmatch(f)[2:]
	default:
		return
	}
	if file, _ := strconv.ParseInt(m[1], 10, 64); file >= c.info.ChunksSize {
		c.errorf("layout.chunk-index", f, loc{}, "file index %d is not below chunks_size %d; LeRobot starts a new chunk instead", file, c.info.ChunksSize)
	}
}

// readInfo parses meta/info.json and checks its keys and types. c.info stays
// nil when the features or fps cannot be used.
func (c *checker) readInfo() {
	b, err := input.ReadFile(filepath.Join(c.dir, infoPath))
	if err != nil {
		c.errorf("info.unreadable", infoPath, loc{}, "%v", err)
		return
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		c.errorf("info.unreadable", infoPath, loc{}, "not a JSON object: %v", err)
		return
	}
	si := &shardInfo{byName: map[string]*feature{}}
	usable := true

	if v, ok := doc["codebase_version"]; !ok {
		c.errorf("info.missing-key", infoPath, loc{}, "codebase_version is missing")
	} else if s, ok := v.(string); !ok || s != codebaseVersion {
		c.errorf("info.codebase-version", infoPath, loc{}, "codebase_version is %s, want %q", jsonText(v), codebaseVersion)
	}
	if fps, ok := c.infoInt(doc, "fps", true); ok {
		if fps <= 0 || fps > lerobot.MaxFPS {
			c.errorf("info.fps", infoPath, loc{}, "fps is %d, want a positive integer", fps)
			usable = false
		}
		si.FPS = int(fps)
	} else {
		usable = false
	}
	for _, k := range []string{"total_episodes", "total_frames", "total_tasks"} {
		if v, ok := c.infoInt(doc, k, true); ok {
			if v < 0 {
				c.errorf("info.key-type", infoPath, loc{}, "%s is %d, want >= 0", k, v)
			}
			switch k {
			case "total_episodes":
				si.TotalEpisodes = v
			case "total_frames":
				si.TotalFrames = v
			case "total_tasks":
				si.TotalTasks = v
			}
		}
	}
	for _, k := range []string{"chunks_size", "data_files_size_in_mb", "video_files_size_in_mb"} {
		if v, ok := c.infoInt(doc, k, true); ok && v <= 0 {
			c.errorf("info.key-type", infoPath, loc{}, "%s is %d, want > 0", k, v)
		} else if k == "chunks_size" {
			si.ChunksSize = v
		}
	}
	if v, ok := doc["data_path"]; !ok {
		c.errorf("info.missing-key", infoPath, loc{}, "data_path is missing")
	} else if s, _ := v.(string); s != dataPathTemplate {
		c.errorf("info.path-template", infoPath, loc{}, "data_path is %s, want LeRobot's default %q (merge hard-codes it)", jsonText(v), dataPathTemplate)
	}
	if v, ok := doc["robot_type"]; ok {
		if _, isStr := v.(string); !isStr && v != nil {
			c.errorf("info.key-type", infoPath, loc{}, "robot_type is %s, want a string or null", jsonText(v))
		}
		si.RobotType = v
	}
	if v, ok := doc["splits"]; !ok {
		c.errorf("info.missing-key", infoPath, loc{}, "splits is missing")
	} else if m, isMap := v.(map[string]any); !isMap {
		c.errorf("info.key-type", infoPath, loc{}, "splits is %s, want an object of strings", jsonText(v))
	} else {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if _, isStr := m[k].(string); !isStr {
				sv := m[k]
				c.errorf("info.key-type", infoPath, loc{}, "splits[%q] is %s, want a string", k, jsonText(sv))
			}
		}
		if tr, has := m["train"]; has {
			if want := fmt.Sprintf("0:%d", si.TotalEpisodes); tr != want {
				c.warnf("info.splits", infoPath, loc{}, "splits.train is %s, want %q", jsonText(tr), want)
			}
		}
	}

	fv, ok := doc["features"]
	fm, isMap := fv.(map[string]any)
	if !ok || !isMap {
		c.errorf("info.features", infoPath, loc{}, "features is %s, want an object", jsonText(fv))
		usable = false
	} else {
		for _, name := range objectKeys(b, "features") {
			f := c.parseFeature(name, fm[name])
			if f == nil {
				usable = false
				continue
			}
			si.Features = append(si.Features, f)
			si.byName[name] = f
		}
		for _, d := range defaultFeatures {
			f := si.byName[d.Name]
			if f == nil {
				c.errorf("info.features", infoPath, loc{}, "default feature %q is missing", d.Name)
				usable = false
			} else if f.Dtype != d.Dtype || len(f.Shape) != 1 || f.Shape[0] != 1 {
				c.errorf("info.features", infoPath, loc{}, "default feature %q is %s%v, want %s[1]", d.Name, f.Dtype, f.Shape, d.Dtype)
			}
		}
	}
	hasVideo := false
	for _, f := range si.Features {
		if f.Dtype == lerobot.Video {
			hasVideo = true
		}
	}
	if v, ok := doc["video_path"]; !ok {
		c.errorf("info.missing-key", infoPath, loc{}, "video_path is missing")
	} else if hasVideo {
		if s, _ := v.(string); s != videoPathTemplate {
			c.errorf("info.path-template", infoPath, loc{}, "video_path is %s, want LeRobot's default %q", jsonText(v), videoPathTemplate)
		}
	} else if v != nil {
		c.errorf("info.path-template", infoPath, loc{}, "video_path is %s, want null: the shard has no video feature", jsonText(v))
	}
	if usable {
		c.info = si
	}
}

// infoInt reads an integer key of info.json.
func (c *checker) infoInt(doc map[string]any, key string, required bool) (int64, bool) {
	v, ok := doc[key]
	if !ok {
		if required {
			c.errorf("info.missing-key", infoPath, loc{}, "%s is missing", key)
		}
		return 0, false
	}
	n, isNum := v.(json.Number)
	if !isNum {
		c.errorf("info.key-type", infoPath, loc{}, "%s is %s, want an integer", key, jsonText(v))
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		c.errorf("info.key-type", infoPath, loc{}, "%s is %s, want an integer", key, n)
		return 0, false
	}
	return i, true
}

var featureDtypes = map[lerobot.Dtype]bool{
	"float32": true, "float64": true, "float16": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"uint8": true, "uint16": true, "uint32": true, "uint64": true, "bool": true, "string": true, "video": true, "image": true,
}

// parseFeature checks one feature entry; nil when it cannot be used.
func (c *checker) parseFeature(name string, v any) *feature {
	m, ok := v.(map[string]any)
	if !ok {
		c.errorf("info.features", infoPath, loc{}, "feature %q is %s, want an object", name, jsonText(v))
		return nil
	}
	if strings.Contains(name, "/") {
		c.errorf("info.features", infoPath, loc{}, "feature name %q contains \"/\", LeRobot's flatten separator", name)
	}
	f := &feature{Name: name}
	dt, _ := m["dtype"].(string)
	f.Dtype = lerobot.Dtype(dt)
	if !featureDtypes[f.Dtype] {
		c.errorf("info.features", infoPath, loc{}, "feature %q has dtype %s, want a numpy dtype, string, image or video", name, jsonText(m["dtype"]))
		return nil
	}
	shape, ok := m["shape"].([]any)
	if !ok || len(shape) == 0 {
		c.errorf("info.features", infoPath, loc{}, "feature %q has shape %s, want a non-empty list of positive integers", name, jsonText(m["shape"]))
		return nil
	}
	for _, d := range shape {
		n, _ := d.(json.Number)
		i, err := strconv.Atoi(string(n))
		if err != nil || i <= 0 {
			c.errorf("info.features", infoPath, loc{}, "feature %q has shape %s, want positive integers", name, jsonText(m["shape"]))
			return nil
		}
		f.Shape = append(f.Shape, i)
	}
	names, has := m["names"]
	switch {
	case !has:
		c.errorf("info.features", infoPath, loc{}, "feature %q has no \"names\" key (LeRobot indexes ft[\"names\"]); write null when there are none", name)
	case names == nil:
	default:
		list, ok := names.([]any)
		if !ok {
			c.errorf("info.features", infoPath, loc{}, "feature %q has names %s, want a list of strings or null", name, jsonText(names))
			break
		}
		for _, n := range list {
			s, ok := n.(string)
			if !ok {
				c.errorf("info.features", infoPath, loc{}, "feature %q has a name %s that is not a string", name, jsonText(n))
				break
			}
			f.Names = append(f.Names, s)
		}
		switch {
		case f.Dtype.Visual():
			if len(f.Names) != 3 || f.Names[0] != "height" || f.Names[1] != "width" || (f.Names[2] != "channels" && f.Names[2] != "channel") {
				c.errorf("info.features", infoPath, loc{}, "feature %q has names %v, want [height width channels]", name, f.Names)
			}
		case len(f.Shape) == 1 && len(f.Names) != f.Shape[0]:
			c.errorf("info.features", infoPath, loc{}, "feature %q has %d names for shape %v", name, len(f.Names), f.Shape)
		}
	}
	if f.Dtype == lerobot.Video {
		if len(f.Shape) != 3 {
			c.errorf("info.features", infoPath, loc{}, "video feature %q has shape %v, want [height, width, channels]", name, f.Shape)
			return nil
		}
		info, ok := m["info"].(map[string]any)
		if !ok {
			c.errorf("info.features", infoPath, loc{}, "video feature %q has no info block", name)
		}
		f.Info = info
	} else if len(f.Shape) != 1 && f.Dtype != lerobot.Image {
		c.warnf("info.features", infoPath, loc{}, "feature %q has %d-dimensional shape %v; verify checks only 1-D data features", name, len(f.Shape), f.Shape)
		return nil
	}
	return f
}

// objectKeys returns the keys of the object at top-level key in doc, in
// document order (Go maps lose it; LeRobot keeps it).
func objectKeys(doc []byte, key string) []string {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		return nil
	}
	raw, ok := top[key]
	if !ok {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return keys
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}

// jsonText renders a decoded JSON value for a message.
func jsonText(v any) string {
	if v == nil {
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

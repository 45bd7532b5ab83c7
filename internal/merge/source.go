package merge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"sync"
	"unique"

	"github.com/ceres-robotics/ceres-export/internal/descriptor"
	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/pqcolumns"
	"github.com/ceres-robotics/ceres-export/internal/shard"
)

// source is one input of a merge (a shard, or with Into the merged dataset
// appended to), read through shard.Open into memory except for its rows
// and video.
type source struct {
	ds   *shard.Dataset
	dir  string // as given
	name string // directory name

	fps       int
	robotType any // string or nil
	features  []shard.Feature
	tasks     []string
	episodes  []sourceEpisode
	frames    int64
	specs     map[string][]byte
	// private: a metadata-only dataset.
	private bool
	// descriptors are its task descriptors.
	descriptors []descriptor.Descriptor

	// fingerprint is contentDigest of a shard or foreign dataset, once
	// verified; legacyFingerprint its legacy form.
	fingerprint, legacyFingerprint string
	// reportSHA is the SHA-256 of the export report (shards).
	reportSHA string
	sessionID string
	campaign  *shard.CampaignOrigin
	// userStrings: a metadata-only shard's files that hold values a user
	// wrote, which the merge leaves out (withoutUserStrings).
	userStrings map[string]bool
	// merged is the dataset's own merge report (a merged dataset).
	merged *Report
	// episodeStats are a merged dataset's per-episode statistics of
	// shard.StatsFeatures(its features), what appending to it carries.
	episodeStats [][]shard.Stats
	// foreign is what is known of a LeRobot dataset this tool did not
	// write; nil for ours.
	foreign *ForeignSource
	// license is its licence ("" for none): a shard's export report's, a
	// merged dataset's merge report's, a foreign dataset's card's.
	license string

	// count and maxLength are its number of episodes and the length of
	// its longest.
	count     int
	maxLength int64
	// released says its episodes, specifications and descriptors are not
	// held from its verify to its writing (release), but read again when
	// it is written (reload); videoFiles and readDigest are what is kept
	// of them instead.
	released bool
	// videoFiles are its video files, per video feature, as planning
	// needs them (sourceVideoFiles), once released.
	videoFiles []keyFiles
	// readDigest is the SHA-256 of its episodes, specifications and
	// descriptors as they were read when it was verified (metaDigest).
	readDigest [32]byte
	// kept, for the dataset an append goes into while its seal is trusted
	// (openKept), is what the append needs of its episodes, which are then
	// not read: episodes is empty.
	kept *keptDataset
}

// keyFiles are a source's files of video feature key.
type keyFiles struct {
	key   string
	files []sourceFile
}

// keptDataset is what an append needs of the episodes of the dataset it
// goes into, taken from that dataset's info.json, merge report and card
// instead of its meta/episodes rows (which grow with it): their count and
// frames, their data files, each video file's frames, how many episodes
// each task has, and the card's rows of its sources.
type keptDataset struct {
	shard   shard.KeptEpisodes
	videos  map[string][]sourceFile
	perTask []int // by task index, in the dataset's tasks.parquet order
	// sourceRows are its card's rows of its sources, which an append
	// writes again as they are.
	sourceRows string
	// reportSources are its merge report's entries of its sources, as
	// that file holds them (reportSourcesText); nil when not found.
	reportSources []byte
}

// episodeCount is the number of episodes of s.
func (s *source) episodeCount() int64 {
	if s.kept != nil {
		return s.kept.shard.Episodes
	}
	// A released source's episodes are read again only when it is
	// written: count holds how many.
	return int64(s.count)
}

// openKept opens dir, the merged dataset an append goes into, without its
// episodes (source.kept) when its metadata tells all that the append
// needs of them; otherwise as openSource without statistics. It is
// used only while the dataset's seal is trusted: the append is made again,
// the dataset verified in full, if the seal does not hold, so nothing read
// here need be checked against its episodes.
func openKept(ctx context.Context, dir string, files *pqcolumns.Files) (*source, error) {
	ds, err := shard.OpenSource(dir)
	if err != nil {
		return nil, fmt.Errorf("source %w", err)
	}
	if !ds.Merged || ds.Foreign {
		return openSource(ctx, dir, files, false)
	}
	s, err := newSource(ctx, ds, dir)
	if err != nil {
		return nil, err
	}
	p := ds.Path(layout.MergeReportPath)
	data, err := input.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("source %w", err)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("source %s: %w", p, err)
	}
	kept, ok := keptOf(ds, &r, s.tasks)
	if !ok {
		return openSource(ctx, dir, files, false)
	}
	kept.reportSources = reportSourcesText(data, len(r.Sources))
	s.kept, s.merged, s.license, s.frames = kept, &r, r.License, r.Frames
	if s.specs, err = ds.Specs(); err != nil {
		return nil, fmt.Errorf("source %w", err)
	}
	if s.descriptors, err = ds.Descriptors(); err != nil {
		return nil, fmt.Errorf("source %w", err)
	}
	return s, nil
}

// keptOf is what the dataset ds with merge report r says of its episodes
// (keptDataset); false when it does not say all of it: a report or
// info.json that disagree on the counts, a video file whose parts are not
// listed (a dataset merged before parts were recorded), a card whose task
// table is not as this tool writes it (or none).
func keptOf(ds *shard.Dataset, r *Report, tasks []string) (*keptDataset, bool) {
	if r.Episodes <= 0 || int64(r.Episodes) != ds.Info.TotalEpisodes || r.Frames != ds.Info.TotalFrames || len(r.Data) == 0 {
		return nil, false
	}
	k := &keptDataset{shard: shard.KeptEpisodes{Episodes: int64(r.Episodes), Frames: r.Frames, DataFiles: r.Data}, videos: map[string][]sourceFile{}}
	for _, f := range ds.Info.Features {
		if f.Dtype != lerobot.Video {
			continue
		}
		v, ok := r.Videos[f.Name]
		if !ok || len(v.Files) == 0 {
			return nil, false
		}
		var total int64
		for _, rel := range v.Files {
			chunk, file, ok := layout.ChunkFile(rel, layout.VideoDir(f.Name), layout.VideoExt)
			parts := v.Parts[rel]
			if !ok || len(parts) == 0 {
				return nil, false
			}
			sf := sourceFile{rel: rel, chunk: chunk, file: file}
			for _, p := range parts {
				sf.frames += p.Frames
			}
			total += int64(sf.frames)
			k.videos[f.Name] = append(k.videos[f.Name], sf)
		}
		if total != r.Frames {
			return nil, false
		}
	}
	perTask, rows, err := readKeptCard(ds, tasks, len(r.Sources))
	if err != nil {
		return nil, false
	}
	k.sourceRows = rows
	var n int64
	for _, c := range perTask {
		n += int64(c)
	}
	if n != k.shard.Episodes {
		return nil, false
	}
	k.perTask = perTask
	return k, true
}

// sourceEpisode is one episode of a source.
type sourceEpisode struct {
	shard.Episode
	// firstFrame is, per video feature, the episode's first frame in its file.
	firstFrame map[string]int
	// stats are a foreign source's own statistics of the episode, by
	// feature name (data features only; nil for ours, whose rows give them).
	stats map[string]shard.Stats
}

// openSource reads a source's metadata, its Parquet files through files
// (nil: each read opens its own). Without episodeStats, a merged
// dataset's per-episode statistics are not read: the dataset appended to,
// when its seal holds, whose aggregate the append goes on from
// (appendTotal), and which is most of what an append would read (130 of
// a small shard's 147 columns of meta/episodes).
func openSource(ctx context.Context, dir string, files *pqcolumns.Files, episodeStats bool) (*source, error) {
	ds, err := shard.OpenSource(dir)
	if err != nil {
		return nil, fmt.Errorf("source %w", err)
	}
	ds.Parquet = files
	s, err := newSource(ctx, ds, dir)
	if err != nil {
		return nil, err
	}
	var eps []shard.Episode
	var stats [][]shard.Stats
	statsOf := ds.Info.DataFeatures()
	switch {
	case ds.Foreign:
		// A foreign dataset's statistics are its writer's, aggregated as
		// they are.
		eps, stats, err = ds.EpisodesWithStats(ctx, statsOf)
	case ds.Merged && !episodeStats:
		eps, err = ds.EpisodePlaces(ctx)
	case ds.Merged:
		// A merged dataset carries those of its foreign parts, and all of
		// them when it is appended to (Builder.Continue): read once, for
		// every feature.
		statsOf = shard.StatsFeatures(ds.Info.Features)
		eps, stats, err = ds.EpisodesWithStats(ctx, statsOf)
		s.episodeStats = stats
	default:
		eps, err = ds.Episodes(ctx)
	}
	if err != nil {
		return nil, err
	}
	s.episodes = make([]sourceEpisode, 0, len(eps))
	for i, e := range eps {
		se, err := s.episode(e)
		if err != nil {
			return nil, err
		}
		if stats != nil && (ds.Foreign || e.Ceres.Foreign) {
			se.stats = map[string]shard.Stats{}
			for j, f := range statsOf {
				if f.Dtype != lerobot.String && !f.Dtype.Visual() && !lerobot.IsDefaultFeature(f.Name) {
					se.stats[f.Name] = stats[i][j]
				}
			}
		}
		s.episodes = append(s.episodes, se)
		s.frames += e.Length
		s.maxLength = max(s.maxLength, e.Length)
	}
	s.count = len(s.episodes)
	if ds.Foreign {
		if s.foreign, err = foreignSource(ds); err != nil {
			return nil, err
		}
		if s.license, err = foreignLicense(ds); err != nil {
			return nil, err
		}
		return s, nil
	}
	if err := s.readSpecs(); err != nil {
		return nil, err
	}
	if s.descriptors, err = ds.Descriptors(); err != nil {
		return nil, fmt.Errorf("source %w", err)
	}
	if err := s.readProvenance(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *source) path(rel string) string { return s.ds.Path(rel) }

// shardEpisodes are the source's episodes as the shard reader has them.
func (s *source) shardEpisodes() []shard.Episode {
	eps := make([]shard.Episode, len(s.episodes))
	for i := range s.episodes {
		eps[i] = s.episodes[i].Episode
	}
	return eps
}

func (s *source) isMerged() bool { return s.ds.Merged }

// episode checks what merge needs of an episode beyond the format: one
// task, and video that lies on the frame grid.
func (s *source) episode(e shard.Episode) (sourceEpisode, error) {
	se := sourceEpisode{Episode: e, firstFrame: map[string]int{}}
	where := fmt.Sprintf("%s episode %d", s.dir, e.Index)
	if len(e.Tasks) != 1 {
		return se, fmt.Errorf("%s: tasks %q: merge takes episodes of exactly one task", where, e.Tasks)
	}
	for key, v := range e.Videos {
		// from_timestamp must be a whole number of frames, and the
		// episode length/fps long.
		ff := math.Round(v.FromTimestamp * float64(s.fps))
		// float64(...) keeps each product rounded, so arm64 (which would
		// fuse it into the subtraction) accepts exactly what amd64 accepts.
		if math.Abs(float64(v.FromTimestamp*float64(s.fps))-ff) > 1e-6 || math.Abs(float64((v.ToTimestamp-v.FromTimestamp)*float64(s.fps))-float64(e.Length)) > 1e-6 {
			return se, fmt.Errorf("%s: %s %v, %s %v: not frames [k, k+%d) of a %d fps grid", where,
				layout.VideoColumn(key, layout.VideoFromTimestamp), v.FromTimestamp, layout.VideoColumn(key, layout.VideoToTimestamp), v.ToTimestamp, e.Length, s.fps)
		}
		se.firstFrame[key] = int(ff)
	}
	return se, nil
}

// readSpecs reads every stored specification; every episode's must be
// among them.
func (s *source) readSpecs() error {
	var err error
	if s.specs, err = s.ds.Specs(); err != nil {
		return fmt.Errorf("source %w", err)
	}
	for _, e := range s.episodes {
		if e.Ceres.Foreign {
			continue // from a foreign source: it has no specification
		}
		for _, h := range []string{e.Ceres.SpecHash, e.Ceres.RecordedSpecHash} {
			if s.specs[h] == nil {
				return fmt.Errorf("%s: episode %d names specification %s, which is not stored under %s", s.dir, e.Index, h, s.ds.SpecsDir())
			}
		}
	}
	return nil
}

// exportReportHead is the part of the export report merge uses.
type exportReportHead struct {
	SessionID string `json:"sessionId"`
	Exporter  struct {
		Options struct {
			License string `json:"license"`
		} `json:"options"`
	} `json:"exporter"`
}

// readProvenance reads what identifies the source: for a shard its export
// report's hash, session and campaign identity; for a merged dataset its
// merge report.
func (s *source) readProvenance() error {
	if s.isMerged() {
		var r Report
		if err := s.ds.ReadJSON(layout.MergeReportPath, &r); err != nil {
			return fmt.Errorf("source %w", err)
		}
		if r.Episodes != len(s.episodes) {
			return fmt.Errorf("%s: says %d episodes, %s holds %d", s.path(layout.MergeReportPath), r.Episodes, layout.EpisodesDir, len(s.episodes))
		}
		for _, e := range s.episodes {
			if e.Ceres.Source == nil || e.Ceres.Source.Index < 0 || e.Ceres.Source.Index >= int64(len(r.Sources)) {
				return fmt.Errorf("%s: episode %d has no valid %s", s.dir, e.Index, layout.ColSourceIndex)
			}
		}
		s.merged = &r
		s.license = r.License
		return nil
	}
	sum, b, err := s.ds.ReportSHA256()
	if err != nil {
		return fmt.Errorf("source %w", err)
	}
	s.reportSHA = sum
	var head exportReportHead
	if err := json.Unmarshal(b, &head); err != nil {
		return fmt.Errorf("%s: %w", s.path(layout.ExportReportPath), err)
	}
	s.sessionID = head.SessionID
	s.license = head.Exporter.Options.License
	if s.campaign, err = s.ds.Campaign(); err != nil {
		return fmt.Errorf("source %w", err)
	}
	return nil
}

// alike keeps one copy of what many sources of a merge hold alike, so
// that what a merge keeps of each source from its opening to its writing
// does not repeat it: sources recorded on one rig have the same features
// (meta/info.json parsed: 5.6 KB a small shard), the same task
// specifications, and episodes that repeat the same task and
// specification strings.
type alike struct {
	mu       sync.Mutex
	features map[string][]shard.Feature // by their JSON
	specs    map[string][]byte          // by hash
}

func newAlike() *alike {
	return &alike{features: map[string][]shard.Feature{}, specs: map[string][]byte{}}
}

// share makes s hold the copies kept of what it holds alike with the
// sources shared before it. What it holds stays equal, value for value.
func (a *alike) share(s *source) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if key, err := json.Marshal(s.features); err == nil {
		if prev, ok := a.features[string(key)]; !ok {
			a.features[string(key)] = s.features
		} else if reflect.DeepEqual(prev, s.features) {
			s.features, s.ds.Info.Features = prev, prev
		}
	}
	for h, spec := range s.specs {
		if prev, ok := a.specs[h]; !ok {
			a.specs[h] = spec
		} else if bytes.Equal(prev, spec) {
			s.specs[h] = prev
		}
	}
	str := func(p *string) { *p = unique.Make(*p).Value() }
	for i := range s.episodes {
		e := &s.episodes[i].Episode
		for j := range e.Tasks {
			str(&e.Tasks[j])
		}
		c := &e.Ceres
		for _, p := range []*string{&c.SessionID, &c.TaskID, &c.TaskLabel, &c.TaskType, &c.SpecHash, &c.RecordedSpecHash, &c.TaskDescriptorID} {
			str(p)
		}
	}
}

// release drops what a verified shard holds that grows with its episodes
// and is only needed when it is written (its episodes, specifications and
// task descriptors), keeping what planning needs (its video files) and
// the digest of what was read: a merge holds every source from its
// verify to its writing, and what it held of each (15.6 KB of a small
// shard; TestOpenSourcesKeepLittleOfEach) made its peak memory grow with
// the number of shards. Merged and foreign sources, a few in any merge,
// keep all.
// A shard whose video files do not tile keeps all too: planning reports
// it.
func (s *source) release() {
	if s.isMerged() || s.foreign != nil || s.released {
		return
	}
	digest, err := s.metaDigest()
	if err != nil {
		return
	}
	var files []keyFiles
	for _, f := range s.features {
		if f.Dtype != lerobot.Video {
			continue
		}
		sf, err := sourceVideoFiles(s, f.Name)
		if err != nil {
			return
		}
		for i := range sf {
			sf[i].starts = nil // what only a merged source's parts are checked by
		}
		files = append(files, keyFiles{f.Name, sf})
	}
	s.videoFiles, s.readDigest, s.released = files, digest, true
	s.episodes, s.specs, s.descriptors = nil, nil, nil
}

// reload reads again what release dropped, through s.ds.Parquet, and
// checks it is what was read when the shard was verified: what the merge
// writes of a source is always what its verify saw.
func (s *source) reload(ctx context.Context) error {
	if !s.released || s.episodes != nil {
		return nil
	}
	eps, err := s.ds.Episodes(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %w", ErrUnsound, err)
	}
	episodes := make([]sourceEpisode, 0, len(eps))
	for _, e := range eps {
		se, err := s.episode(e)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrUnsound, err)
		}
		episodes = append(episodes, se)
	}
	s.episodes = episodes
	if s.specs, err = s.ds.Specs(); err == nil {
		s.descriptors, err = s.ds.Descriptors()
	}
	if err != nil {
		s.episodes, s.specs, s.descriptors = nil, nil, nil
		return fmt.Errorf("%w: source %w", ErrUnsound, err)
	}
	digest, err := s.metaDigest()
	if err != nil || digest != s.readDigest {
		s.episodes, s.specs, s.descriptors = nil, nil, nil
		return fmt.Errorf("%w: %s: its %s, %s or %s changed after it was verified; merge it again", ErrUnsound, s.dir, layout.EpisodesDir, s.ds.SpecsDir(), layout.DescriptorsPath)
	}
	return nil
}

// drop lets go of what reload read, once the shard is written.
func (s *source) drop() {
	if s.released {
		s.episodes, s.specs, s.descriptors = nil, nil, nil
	}
}

// metaDigest is the SHA-256 of the shard's episodes, specifications and
// task descriptors as read (JSON, whose maps are in key order).
func (s *source) metaDigest() ([32]byte, error) {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, e := range s.episodes {
		if err := enc.Encode(e.Episode); err != nil {
			return [32]byte{}, err
		}
	}
	if err := enc.Encode(s.specs); err != nil {
		return [32]byte{}, err
	}
	if err := enc.Encode(s.descriptors); err != nil {
		return [32]byte{}, err
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum, nil
}

// newSource is the source of dataset ds at dir with what every source
// reads first: its name, fps, robot type, features and tasks.
func newSource(ctx context.Context, ds *shard.Dataset, dir string) (*source, error) {
	s := &source{
		ds: ds, dir: dir, name: filepath.Base(filepath.Clean(dir)),
		fps: ds.Info.FPS, robotType: ds.Info.RobotType, features: ds.Info.Features,
		private: ds.Private(),
	}
	var err error
	if s.tasks, err = ds.Tasks(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

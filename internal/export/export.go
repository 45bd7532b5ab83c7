// Package export turns one CERES session into one LeRobot v3.0 shard. It wires
// the pipeline stages together, data flowing one way:
//
//	journal.Open(session)            read, validate, index samples
//	plan.Build(events, spec, fps)    attempts → fates → episodes
//	Video.ExportCamera per camera    nearest source frame for every T_k, encoded
//	rows: hold each sensor stream    latest sample ≤ T_k, per frame
//	shard.Builder                    Parquet data, meta, specs, report
//	output.Staging.Commit             atomic rename (or exchange) into place
//
// A failed export removes its staging directory and never touches an
// existing shard.
//
// The cameras are decoded and encoded by FFmpeg behind the package's Video
// interface (video.Files implements it; the CLI and batch pass it in), so
// that the package's rules build and are tested without cgo.
package export

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/ceres-robotics/ceres-export/internal/descriptor"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/media"
	"github.com/ceres-robotics/ceres-export/internal/output"
	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/internal/profile"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/journal"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// Errors callers map to exit codes with errors.Is.
var (
	// ErrStrict: a strictness switch turned back-fill, staleness or gaps
	// into an error. The shard was not written.
	ErrStrict = errors.New("export: strictness check failed")
	// ErrSpecMismatch: the corrected specification does not fit the
	// recording (docs/export-semantics.md, "Re-export after a specification fix").
	ErrSpecMismatch = errors.New("export: task specification does not fit the recording")
	// ErrNoEpisodes: the session has no accepted attempt of at least one
	// frame; LeRobot cannot load an empty dataset.
	ErrNoEpisodes = errors.New("export: no episode to export")
)

// Options configure Export. The zero value of each field is its documented
// default.
type Options struct {
	// FPS is the dataset's frame rate; 0 means the nominal fps of the first
	// video stream, or the rate of the first sensor stream without camera.
	FPS int
	// Profile declares the features (observation.state, action) made of
	// sensor fields, streams to drop and camera keys; fields no feature
	// names keep a feature of their own. nil is the empty profile.
	Profile *profile.Profile
	// KeepFloat64 writes float64 fields as float64 instead of float32.
	KeepFloat64 bool
	// RobotType is info.json's robot_type; "" means SESSION.robotType.
	RobotType string
	// Salvage reads past journal corruption, reporting what it skipped.
	Salvage bool
	// Strict turns counted irregularities into errors.
	Strict Strictness
	// TaskSpec is a corrected task specification (JSON) for a re-export;
	// nil applies the journal's own.
	TaskSpec []byte
	// Replace allows replacing an existing shard at the destination; only
	// an output of this tool is ever replaced (output.CheckDestination).
	Replace bool
	// Inputs are further paths the caller read for this export (a
	// corrected specification's file): the shard may not overlap them, as
	// it may not overlap the session.
	Inputs []string
	// Video configures the camera features.
	Video VideoOptions
	// VideoFiles decodes and encodes the cameras (video.Files). It may be
	// nil only where nothing is encoded: a session without camera files,
	// or a metadata-only export; otherwise the export is refused.
	VideoFiles Video
	// Progress receives progress; nil reports nothing.
	Progress Progress
	// Version is the exporter's version written into the report.
	Version string
	// DataFileSizeBytes, when positive, rotates data files at that size
	// instead of LeRobot's 100 MB (tests).
	DataFileSizeBytes int64
	// Descriptors set the org and user levels of ceres/tasks.json.
	Descriptors descriptor.Options
	// Privacy privacy.MetadataOnly writes a dataset that may leave the lab
	// (docs/privacy.md): no video, no session page, task labels as task
	// strings, identifying values as salted hashes, the specifications
	// redacted.
	Privacy privacy.Mode
	// Salt keys the salted hashes of a metadata-only export; never stored.
	Salt string
	// License is the dataset card's licence, a Hugging Face Hub licence id
	// (shard.CheckLicense); "" leaves the card without one. The export
	// report records it, where merge reads it back.
	License string
	// NoVideoReuse encodes every camera even when the shard being replaced
	// holds video with the same content key (see ceres/videos.json).
	NoVideoReuse bool
	// Page, when set, is called once every file of the shard is staged and
	// before it is committed; it may add files under ceres/ (the report
	// page). Its error fails the export.
	Page func(ctx context.Context, r *Result) error
	// CeresFiles are written into the shard, each value as deterministic
	// JSON at its key: what a caller above export carries into the shard
	// unchanged (a campaign task's identity and extensions). Keys are the
	// layout's paths of carried files (layout.CeresFile.Carried), never one
	// of the exporter's own.
	CeresFiles map[string]any
	// Fence, when set, is asked under the shard's lock, when it is taken
	// and just before the commit, whether this export may still write the
	// shard (output.StageOptions.Fence); its error fails the export and
	// leaves the shard that is there.
	Fence func() error

	// followed is set by Follow: its cameras' episodes, encoded while the
	// session recorded, replace the encoding.
	followed *follower
	// staged is the destination Follow staged (and locked) when it began;
	// nil: Export stages it.
	staged *output.Staging

	// alterPlanForTesting rewrites the plan after plan.Build, so that a test
	// can export a deliberately wrong plan (a leaked retry, a shifted
	// window) and show that verify, which does not use plan, catches it.
	alterPlanForTesting func(*plan.Plan)
}

// Result is what an export wrote and what it was made from, as a Page
// hook (and a report page of a finished shard) sees it.
type Result struct {
	// Dir is the shard: its staging directory while a Page hook runs.
	Dir     string
	Journal *journal.Journal
	Plan    *plan.Plan
	// Spec is the applied task specification.
	Spec   *taskspec.Spec
	Report *Report
}

// Strictness switches: each turns a counted irregularity into an error.
type Strictness struct {
	BackFill bool `json:"backFill"` // a frame before a stream's first sample
	Stale    bool `json:"stale"`    // a held sample older than two nominal periods
	Gaps     bool `json:"gaps"`     // a video frame more than one source period from its time
}

// VideoOptions configure the encoded camera features.
type VideoOptions struct {
	// Codec is "av1" (libsvtav1, LeRobot's default) or "h264" (libx264, no
	// B-frames); "" means av1.
	Codec string `json:"codec"`
	// CRF, Preset and G override the encoder's defaults (crf 30, preset 12
	// for SVT-AV1 or veryfast for x264, g 2).
	CRF    int    `json:"crf,omitempty"`
	Preset string `json:"preset,omitempty"`
	G      int    `json:"g,omitempty"`
	// Width and Height of the output; 0 means the source's, even-rounded.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// Concurrency is how many cameras encode at once; 0 means one per CPU
	// core. Encoders use every core on their own; running two at once still
	// gained 2.5-7% on two cores (docs/video.md), and memory is bounded per
	// camera (a few frames plus the encoder's own, about 300 MB for 720p
	// SVT-AV1).
	Concurrency int `json:"concurrency,omitempty"`
	// Threads per encoder; 0 means media.EncoderOptions' default.
	Threads int `json:"threads,omitempty"`
}

// encoder maps the options to the video package's encoder settings.
func (v VideoOptions) encoder() (media.EncoderOptions, error) {
	enc := media.EncoderOptions{CRF: v.CRF, Preset: v.Preset, G: v.G, Threads: v.Threads}
	switch v.Codec {
	case "", "av1", media.EncoderSVTAV1:
		enc.Codec = media.EncoderSVTAV1
	case "h264", media.EncoderX264:
		enc.Codec = media.EncoderX264
	default:
		return enc, fmt.Errorf("export: video codec %q: want av1 or h264", v.Codec)
	}
	return enc, nil
}

// Video is what an export needs of FFmpeg for its cameras: one camera's
// episodes encoded in one pass over its files, and, for a followed
// session, a pass that encodes episode by episode while the session
// records, whose parts are then joined into the shard's files.
type Video interface {
	// ExportCamera decodes one camera's files once, in order, picks for
	// every frame of every episode the source frame nearest to its time,
	// encodes the episodes and writes the files opts.FilePath names.
	ExportCamera(ctx context.Context, sources []media.Source, episodes []media.EpisodeTimes, opts media.ExportOptions) (media.CameraResult, error)
	// NewCameraEncoder opens a pass over sources that encodes episodes
	// into parts as the pass reaches them.
	NewCameraEncoder(sources []media.Source, opts media.ExportOptions) (media.CameraEncoder, error)
	// PlaceParts joins parts, in order, into the output files
	// opts.FilePath names, and says where each episode lies.
	PlaceParts(ctx context.Context, parts []media.Part, opts media.ExportOptions) ([]media.EpisodeResult, []media.OutputFileResult, error)
}

// ErrNoVideo: an export that must encode cameras was given no Video.
var ErrNoVideo = errors.New("export: no video encoder (Options.VideoFiles) to encode the cameras")

// Progress receives progress of the long stages. Implementations must be
// safe for concurrent use (cameras run concurrently).
type Progress interface {
	// Stage announces a stage ("rows", "camera front") of total units.
	Stage(name string, total int)
	// Set reports units done so far.
	Set(name string, done int)
	// Done closes a stage.
	Done(name string)
}

type noProgress struct{}

func (noProgress) Stage(string, int) {}
func (noProgress) Set(string, int)   {}
func (noProgress) Done(string)       {}

var _ Progress = noProgress{}

// Export reads the session in sessionDir and writes its shard to shardDir.
func Export(ctx context.Context, sessionDir, shardDir string, opts Options) (*Report, error) {
	if opts.Progress == nil {
		opts.Progress = noProgress{}
	}
	enc, inputs, err := checkOptions(sessionDir, shardDir, opts)
	if err != nil {
		return nil, err
	}
	// A directory without journal/ is not a session at all: say so, rather
	// than report the journal's first segment missing.
	if _, err := os.Stat(filepath.Join(sessionDir, "journal")); err != nil {
		return nil, fmt.Errorf("export: %s is not a CERES session: %w", sessionDir, err)
	}
	j, err := journal.Open(ctx, sessionDir, journal.Options{Salvage: opts.Salvage})
	if err != nil {
		return nil, err
	}
	applied, diffs, err := appliedSpec(j, opts.TaskSpec)
	if err != nil {
		return nil, err
	}
	fps, fpsSource := opts.FPS, "--fps"
	if fps == 0 {
		if fps, fpsSource, err = plan.DefaultFPS(j.Info.Streams); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
	}
	p, err := plan.Build(j.Events, plan.SpecTypes(applied), fps)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	if opts.alterPlanForTesting != nil {
		opts.alterPlanForTesting(p)
	}
	// Lifecycle events that do not pair up mean records were lost (a
	// segment cut at a frame boundary, one deleted): the reader saw no
	// damaged frame, so this is the only evidence.
	var lostNote string
	if loss, ok := plan.FindLoss(j.Events); ok {
		msg := fmt.Sprintf("%s: %s: records were lost", j.EventPlaces[loss.Event], loss.Reason)
		if !opts.Salvage {
			return nil, &lostRecordsError{msg: "export: " + msg + " (--salvage exports what is left)"}
		}
		lostNote = "salvage: " + msg + "; exported what is left"
	}
	if len(p.Episodes) == 0 {
		return nil, fmt.Errorf("%w: %d attempts, none accepted with a frame at %d fps", ErrNoEpisodes, len(p.Attempts), fps)
	}
	resolved, err := profile.Resolve(opts.Profile, j.Info)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	rowFeatures := sensorFeatures(resolved, opts.KeepFloat64)
	rep := newReport(j, p, applied, diffs, opts, fps, fpsSource)
	if lostNote != "" {
		rep.Notes = append(rep.Notes, lostNote)
	}
	metadataOnly := opts.Privacy == privacy.MetadataOnly
	if metadataOnly {
		// The page shows frames and texts: a metadata-only dataset has neither.
		opts.Page = nil
		rep.Notes = append(rep.Notes, "metadata-only: no video and no session page")
	}

	st := opts.staged
	if st == nil {
		if st, err = output.Stage(shardDir, output.StageOptions{Replace: opts.Replace, Kind: output.KindShard, Inputs: inputs, Fence: opts.Fence}); err != nil {
			return nil, err
		}
	}
	committed := false
	defer func() {
		if !committed {
			_ = st.Abort()
		}
	}()

	var cams []camera
	var manifest *videoManifest
	if !metadataOnly {
		if cams, manifest, err = exportCameras(ctx, j, p, resolved, st.Dir(), shardDir, enc, opts, rep); err != nil {
			return nil, err
		}
	}
	if opts.followed != nil {
		// The follow's parts are joined into the shard's files by now.
		if err := os.RemoveAll(opts.followed.work); err != nil {
			return nil, err
		}
	}
	features := make([]shard.Feature, 0, len(rowFeatures)+len(cams))
	for _, f := range rowFeatures {
		features = append(features, f.Feature)
	}
	for _, c := range cams {
		features = append(features, c.feature)
	}
	for _, f := range features {
		rep.Features = append(rep.Features, f.Name)
	}
	robot := opts.RobotType
	if robot == "" {
		robot = j.Info.RobotType
	}
	b, err := shard.NewBuilder(st.Dir(), features, shard.Options{FPS: fps, RobotType: robot, DataFileSizeBytes: opts.DataFileSizeBytes})
	if err != nil {
		return nil, err
	}
	if manifest != nil {
		if err := b.WriteCeresJSON(layout.VideosPath, manifest); err != nil {
			return nil, err
		}
	}
	if !opts.Profile.Empty() {
		if err := b.WriteCeresFile(layout.ProfilePath, opts.Profile.Canonical()); err != nil {
			return nil, err
		}
	}
	descriptors := buildDescriptors(applied, p, opts.Descriptors)
	if metadataOnly {
		descriptors = descriptor.Redact(descriptors, opts.Salt, j.Info.SessionID, applied, j.Spec)
	}
	if err := writeRows(ctx, j, p, b, rowFeatures, cams, applied, descriptors, opts, rep); err != nil {
		return nil, err
	}
	if err := b.WriteCeresJSON(layout.DescriptorsPath, descriptor.File{SchemaVersion: descriptor.SchemaVersion, Tasks: descriptors}); err != nil {
		return nil, err
	}
	specs := []*taskspec.Spec{applied}
	if j.Spec.Hash() != applied.Hash() {
		specs = append(specs, j.Spec)
	}
	for _, spec := range specs {
		if metadataOnly {
			err = b.WriteCeresFile(layout.RedactedSpecPath(spec.Hash()), privacy.RedactSpec(spec, j.Info.SessionID, specs...))
		} else {
			err = b.WriteSpec(spec.Hash(), spec.Canonical())
		}
		if err != nil {
			return nil, err
		}
	}
	if err := writeCeresFiles(b, opts.CeresFiles); err != nil {
		return nil, err
	}
	if err := rep.strictness(opts.Strict); err != nil {
		return rep, err
	}
	if metadataOnly {
		rep.redact(opts.Salt)
		if err := b.WriteCeresJSON(layout.PrivacyMarkerPath, privacy.Marker{SchemaVersion: 1, Mode: privacy.MetadataOnly}); err != nil {
			return nil, err
		}
	}
	if err := b.Finish(rep); err != nil {
		return nil, err
	}
	if err := writeCard(b, rep, p, applied, j.Spec, j.Info.SessionID, metadataOnly, robot); err != nil {
		return nil, err
	}
	if opts.Page != nil {
		if err := opts.Page(ctx, &Result{Dir: st.Dir(), Journal: j, Plan: p, Spec: applied, Report: rep}); err != nil {
			return nil, fmt.Errorf("export: report page: %w", err)
		}
	}
	// Last: the seal covers the bytes of every file above (shard.Seal).
	if err := b.WriteSeal(ctx, nil); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := st.Commit(); err != nil {
		return nil, err
	}
	committed = true
	return rep, nil
}

// writeCeresFiles writes a caller's carried files, refusing any path the
// layout does not name as one (the exporter's own files above all).
func writeCeresFiles(b *shard.Builder, files map[string]any) error {
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		if f, ok := layout.LookupCeresFile(rel); !ok || !f.Carried {
			return fmt.Errorf("export: ceres file %q: not a file a caller may carry into a shard (layout.CeresFiles)", rel)
		}
		if err := b.WriteCeresJSON(rel, files[rel]); err != nil {
			return err
		}
	}
	return nil
}

// appliedSpec returns the specification the shard applies: the journal's, or
// a corrected one that must fit the recording.
func appliedSpec(j *journal.Journal, corrected []byte) (*taskspec.Spec, []taskspec.Difference, error) {
	if corrected == nil {
		return j.Spec, nil, nil
	}
	fixed, err := taskspec.Parse(corrected)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrSpecMismatch, err)
	}
	if err := plan.CheckFit(plan.SpecTypes(j.Spec), plan.SpecTypes(fixed), j.Events); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrSpecMismatch, err)
	}
	return fixed, taskspec.Diff(j.Spec, fixed), nil
}

// camera is one exported video feature.
type camera struct {
	stream  string
	feature shard.Feature
	result  media.CameraResult
}

// checkOptions checks what an export is asked before it reads anything:
// the encoder settings, the privacy mode's salt, and a destination that
// would destroy an input or something that is not ours (Stage checks it
// again under the lock). It returns the encoder settings and the inputs.
func checkOptions(sessionDir, shardDir string, opts Options) (media.EncoderOptions, []string, error) {
	enc, err := opts.Video.encoder()
	if err != nil {
		return enc, nil, err
	}
	if err := opts.Privacy.Check(opts.Salt); err != nil {
		return enc, nil, err
	}
	inputs := append([]string{sessionDir}, opts.Inputs...)
	if _, err := output.CheckDestination(shardDir, inputs, opts.Replace); err != nil {
		return enc, nil, err
	}
	return enc, inputs, nil
}

// partsDir, inside the staging directory, holds the episodes' video parts
// until they are joined; it never reaches the shard.
const partsDir = ".parts"

// exportCameras cuts and encodes every camera the profile keeps that has
// media files, up to Concurrency at a time, into the staging directory.

// encodeFunc encodes one camera (Video.ExportCamera's signature).
type encodeFunc func(context.Context, []media.Source, []media.EpisodeTimes, media.ExportOptions) (media.CameraResult, error)

func exportCameras(ctx context.Context, j *journal.Journal, p *plan.Plan, resolved *profile.Resolved, dir, shardDir string, enc media.EncoderOptions, opts Options, rep *Report) ([]camera, *videoManifest, error) {
	var streams []journal.Stream
	keys := map[string]string{}
	for _, c := range resolved.Cameras {
		s := j.Info.Streams[j.StreamIndex(c.Stream)]
		if len(mediaOf(j, s.ID)) == 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("camera %s has no media files; left out of the shard", s.ID))
			continue
		}
		streams = append(streams, s)
		keys[s.ID] = c.Key
	}
	if len(streams) == 0 {
		return nil, nil, nil
	}
	episodes := make([]media.EpisodeTimes, len(p.Episodes))
	for i, ep := range p.Episodes {
		episodes[i] = media.EpisodeTimes{Start: ep.Start, Length: ep.Length}
	}
	prevDir, prev := "", videoManifest{}
	if !opts.NoVideoReuse {
		if p, err := shard.OpenPrevious(shardDir); err == nil && p != nil {
			prevDir, prev = p.Root, readVideoManifest(p.Root)
		}
	}
	if opts.VideoFiles == nil {
		return nil, nil, fmt.Errorf("%w: camera %s", ErrNoVideo, streams[0].ID)
	}
	var encode encodeFunc = opts.VideoFiles.ExportCamera
	total := 0
	for _, ep := range p.Episodes {
		total += ep.Length
	}
	cams := make([]camera, len(streams))
	manifest := videoManifest{Version: videoCacheVersion, Cameras: make([]videoManifestCamera, len(streams))}
	g, gctx := errgroup.WithContext(ctx)
	limit := opts.Video.Concurrency
	if limit <= 0 {
		limit = runtime.NumCPU()
	}
	g.SetLimit(limit)
	var mu sync.Mutex
	for i, s := range streams {
		g.Go(func() error {
			key := keys[s.ID]
			sources := cameraSources(j, s.ID)
			eo := cameraExportOptions(p.FPS, s, enc, opts.Video)
			content, err := cameraKey(j.Dir, sources, p, eo.SourceFPS, enc, opts.Video)
			if err != nil {
				return fmt.Errorf("camera %s: %w", s.ID, err)
			}
			old, reused := prev.find(s.ID, content)
			res := old.Result
			if reused {
				if err := reuseFiles(prevDir, dir, key, old); err != nil {
					// The old shard is not what its manifest says: encode.
					reused = false
					_ = os.RemoveAll(filepath.Join(dir, filepath.FromSlash(layout.VideoDir(key))))
					mu.Lock()
					rep.Notes = append(rep.Notes, fmt.Sprintf("camera %s: the replaced shard's video is not reused (%v); encoded again", s.ID, err))
					mu.Unlock()
				}
			}
			if !reused {
				stage := "camera " + s.ID
				opts.Progress.Stage(stage, total)
				eo.FilePath = func(chunk, file int) string {
					path := filepath.Join(dir, filepath.FromSlash(layout.VideoPath(key, chunk, file)))
					// A failure here surfaces as the encoder's create error.
					_ = os.MkdirAll(filepath.Dir(path), 0o755)
					return path
				}
				eo.PartsDir = filepath.Join(dir, partsDir)
				eo.Progress = func(done, _ int) { opts.Progress.Set(stage, done) }
				encode := encode
				if opts.followed != nil {
					encode = opts.followed.encoder(s.ID, encode)
				}
				res, err = encode(gctx, sources, episodes, eo)
				opts.Progress.Done(stage)
				if err != nil {
					return fmt.Errorf("camera %s: %w", s.ID, err)
				}
				relativeSources(j.Dir, &res)
			}
			// The info block is derived, never stored: a JSON round trip
			// would turn its integers into floats.
			res.Info = nil
			info, err := media.FeatureInfo(res.Width, res.Height, p.FPS, enc, media.InfoWithEncoder)
			if err != nil {
				return fmt.Errorf("camera %s: %w", s.ID, err)
			}
			sums, err := videoHashes(dir, key, res)
			if err != nil {
				return fmt.Errorf("camera %s: %w", s.ID, err)
			}
			manifest.Cameras[i] = videoManifestCamera{Stream: s.ID, Key: content, Result: res, FileSHA256: sums}
			cams[i] = camera{stream: s.ID, result: res, feature: shard.Feature{
				Name:  key,
				Dtype: lerobot.Video,
				Shape: []int{res.Height, res.Width, 3},
				Names: []string{"height", "width", "channels"},
				Info:  infoObject(info),
			}}
			mu.Lock()
			defer mu.Unlock()
			rep.addCamera(s.ID, key, res)
			if reused {
				rep.VideoReused = append(rep.VideoReused, s.ID)
			}
			return nil
		})
	}
	err := g.Wait()
	// The encoders' parts are joined into the videos by now (or not needed).
	if rerr := os.RemoveAll(filepath.Join(dir, partsDir)); err == nil && rerr != nil {
		err = fmt.Errorf("export: %w", rerr)
	}
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(rep.VideoReused)
	return cams, &manifest, nil
}

// cameraSources lists the camera files of stream in journal order.
func cameraSources(j *journal.Journal, stream string) []media.Source {
	var sources []media.Source
	for _, m := range mediaOf(j, stream) {
		sources = append(sources, media.Source{Path: filepath.Join(j.Dir, filepath.FromSlash(m.Path)), StartT: m.StartT})
	}
	return sources
}

// cameraExportOptions are the video settings of camera s, everything but
// where the files go and the progress: what a batch export and a followed
// one must agree on for their videos to be the same bytes.
func cameraExportOptions(fps int, s journal.Stream, enc media.EncoderOptions, v VideoOptions) media.ExportOptions {
	return media.ExportOptions{
		FPS:       fps,
		SourceFPS: int(s.FPS + 0.5),
		Width:     v.Width,
		Height:    v.Height,
		Encoder:   enc,
		InfoStyle: media.InfoWithEncoder,
		DecodeAll: true,
	}
}

func mediaOf(j *journal.Journal, stream string) []journal.Media {
	var out []journal.Media
	for _, m := range j.Media {
		if m.Stream == stream {
			out = append(out, m)
		}
	}
	return out
}

// infoKeyOrder is the order LeRobot writes a video feature's info block in.
var infoKeyOrder = []string{
	"video.height", "video.width", "video.codec", "video.pix_fmt", "video.is_depth_map", "video.fps",
	"video.channels", "video.g", "video.crf", "video.preset", "video.fast_decode", "video.video_backend",
	"video.extra_options", "has_audio", "is_depth_map",
}

// infoObject orders the video package's info map as LeRobot writes it.
func infoObject(m map[string]any) shard.JSONObject {
	var o shard.JSONObject
	for _, k := range infoKeyOrder {
		if v, ok := m[k]; ok {
			o = append(o, shard.JSONField{Key: k, Value: v})
		}
	}
	return o
}

// writeRows assembles every episode's rows on the frame clock and writes them
// with their metadata.
func writeRows(ctx context.Context, j *journal.Journal, p *plan.Plan, b *shard.Builder, features []rowFeature,
	cams []camera, applied *taskspec.Spec, descriptors []descriptor.Descriptor, opts Options, rep *Report) error {
	ra, err := newRowAssembler(j, features)
	if err != nil {
		return err
	}
	defer ra.close()
	appliedHash, recordedHash := applied.Hash(), j.Spec.Hash()
	descriptorOf := map[string]string{}
	for _, d := range descriptors {
		descriptorOf[d.Ext.Ceres.TaskID] = d.ID
	}
	maxLen, total := 0, 0
	for _, ep := range p.Episodes {
		maxLen = max(maxLen, ep.Length)
		total += ep.Length
	}
	opts.Progress.Stage("rows", total)
	defer opts.Progress.Done("rows")
	done := 0
	newRows := func() *shard.EpisodeRows { return b.NewRows(maxLen) }
	err = ra.assembleEpisodes(ctx, p.Episodes, p.FPS, newRows, func(i int, rows *shard.EpisodeRows) error {
		ep := p.Episodes[i]
		task, _ := applied.Task(ep.Task)
		taskString, label, session := task.Instructions, task.Label, j.Info.SessionID
		if opts.Privacy == privacy.MetadataOnly {
			label = privacy.TaskLabel(task, j.Info.SessionID, applied, j.Spec)
			taskString, session = label, privacy.SaltedHash(opts.Salt, session)
		}
		meta := shard.EpisodeMeta{
			Task:   taskString,
			Videos: map[string]shard.VideoSegment{},
			Ceres: layout.CeresEpisode{
				SessionID: session, TaskID: ep.Task, TaskLabel: label, TaskType: task.Type,
				Cycle: int64(ep.Cycle), Repetition: int64(ep.Repetition), Attempt: int64(ep.Attempt),
				StartNS: ep.Start, EndNS: ep.End,
				SpecVersion: int64(applied.Version), SpecHash: appliedHash, RecordedSpecHash: recordedHash,
				TaskDescriptorID: descriptorOf[ep.Task],
			},
		}
		if ep.Outcome != "" {
			outcome := ep.Outcome
			meta.Ceres.Outcome = &outcome
		}
		for _, c := range cams {
			er := c.result.Episodes[i]
			meta.Videos[c.feature.Name] = shard.VideoSegment{
				ChunkIndex: er.Chunk, FileIndex: er.File,
				FromTimestamp: er.FromTimestamp, ToTimestamp: er.ToTimestamp,
				Stats: imageStats(er.Stats),
			}
		}
		if err := b.WriteEpisode(meta, rows); err != nil {
			return err
		}
		done += ep.Length
		opts.Progress.Set("rows", done)
		return nil
	})
	if err != nil {
		return err
	}
	rep.Sensors = ra.counts
	return nil
}

// imageStats converts the video package's per-channel statistics to the
// shard's, shaped (3,1,1) by the shard writer. s is a copy, so the slices
// share nothing with the caller.
func imageStats(s media.ImageStats) shard.Stats {
	return shard.Stats{
		Count: s.Count, Min: s.Min[:], Max: s.Max[:], Mean: s.Mean[:], Std: s.Std[:],
		Quantiles: [5][]float64{s.Q01[:], s.Q10[:], s.Q50[:], s.Q90[:], s.Q99[:]},
	}
}

// buildDescriptors returns the task descriptors of the plan's tasks.
func buildDescriptors(spec *taskspec.Spec, p *plan.Plan, opts descriptor.Options) []descriptor.Descriptor {
	attempts := make([]descriptor.Attempt, len(p.Attempts))
	for i, a := range p.Attempts {
		attempts[i] = descriptor.Attempt{Task: a.Task, Accepted: a.Fate == plan.Accepted, Retried: a.Fate == plan.Retried, Outcome: a.Outcome}
	}
	episodes := make([]descriptor.Episode, len(p.Episodes))
	for i, ep := range p.Episodes {
		episodes[i] = descriptor.Episode{Task: ep.Task, Frames: ep.Length}
	}
	return descriptor.Build(spec, attempts, episodes, opts)
}

// lostRecordsError is a journal whose frames are all intact but whose
// lifecycle events show that records were lost; it matches
// journal.ErrCorrupt, like any other damage salvage reads past.
type lostRecordsError struct{ msg string }

func (e *lostRecordsError) Error() string { return e.msg }
func (e *lostRecordsError) Unwrap() error { return journal.ErrCorrupt }

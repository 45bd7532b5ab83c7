// Package merge joins LeRobot v3.0 shards written by ceres-export into one
// dataset without re-encoding: video by stream copy onto one frame grid,
// rows re-indexed through the shard writer, statistics aggregated from the
// per-episode statistics, and every source's provenance kept (see
// docs/merge.md).
//
//	res, err := merge.Merge(ctx, merge.Options{Sources: shards, Output: dir})
//	res, err := merge.Merge(ctx, merge.Options{Sources: more, Into: dir})   // append
//
// The output is built in a staging directory beside it and moved into place
// only when complete (an existing one is exchanged atomically), so a failed
// or killed merge leaves what was there before.
package merge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/descriptor"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/media"
	"github.com/ceres-robotics/ceres-export/internal/output"
	"github.com/ceres-robotics/ceres-export/internal/pqcolumns"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/internal/verify"
)

// Errors a caller maps to exit statuses.
var (
	// ErrUsage marks options or inputs that are wrong before anything is
	// read deeply: no sources, a directory that is not a shard, the same
	// shard twice, an output inside an input.
	ErrUsage = errors.New("merge: bad input")
	// ErrUnsound marks a source that is not sound: it fails its verify
	// (verifySource) or a stream contradicts its feature's info.
	// Statistics its rows contradict are recomputed, not refused.
	ErrUnsound = errors.New("merge: a source is not sound")
)

// Options configures Merge. Zero sizes take LeRobot's defaults.
type Options struct {
	// Sources are the shard directories, merged in this order.
	Sources []string
	// Output is the dataset to write; with Into and no Output, Into.
	Output string
	// Into names an existing merged dataset whose episodes come first; the
	// sources are appended after them.
	Into string
	// Replace allows replacing an existing Output (not needed with Into
	// when Output is Into).
	Replace bool
	// NoConcat keeps every source video file as a file of its own
	// (LeRobot's concatenate_videos=False) instead of joining files up to
	// the size limit.
	NoConcat bool
	// Privacy privacy.MetadataOnly makes sure the dataset may leave the lab:
	// every source must be a metadata-only export. Without it the dataset
	// is metadata-only exactly when its sources are (they may not mix).
	Privacy privacy.Mode
	// Quantiles says how per-episode quantiles combine into stats.json.
	Quantiles shard.QuantileAggregation
	// ChunksSize, DataFileSizeMB and VideoFileSizeMB are LeRobot's
	// chunks_size, data_files_size_in_mb and video_files_size_in_mb.
	ChunksSize, DataFileSizeMB, VideoFileSizeMB int
	// DataFileSizeBytes and VideoFileSizeBytes, when positive, replace the
	// MB limits (tests with small files); info.json keeps the MB values.
	DataFileSizeBytes, VideoFileSizeBytes int64
	// HeldRowsBytes bounds the decoded rows kept from the sources' quick
	// verify until they are written (0: heldRowsBudget; negative: none,
	// each source's rows are decoded again when written). The dataset is
	// the same whatever it is.
	HeldRowsBytes int64
	// License is the dataset's licence, a Hugging Face Hub licence id; ""
	// takes the sources' licence when they all have the same (none
	// included) and refuses sources that differ (ErrLicenses).
	License string
	// Version is the tool version recorded in the report.
	Version string
	// WaitBusy is how long to wait for a destination another process
	// holds (a merge whose node froze) before failing with
	// output.ErrDestinationBusy.
	WaitBusy time.Duration
	// Logger receives progress lines; nil discards them.
	Logger *slog.Logger
	// Video reads and joins the sources' video files (video.Files, which
	// the CLI passes); Merge fails without it.
	Video Video
}

// Video is what a merge needs of a video library, no more: read a stream's
// signature from a file's header, join ranges of files into one by stream
// copy, and verify's decoding (a source whose seal does not hold is
// verified in full). internal/video implements it with FFmpeg
// (video.Files); the rules of what goes where stay here, built and tested
// without cgo.
type Video interface {
	verify.FrameDecoder
	// StreamSignature reads the header of path's video stream.
	StreamSignature(path string) (media.StreamSignature, error)
	// Join writes dst, a constant-rate mp4 of frames frames at fps, by
	// stream copy of ranges in order; on an error nothing is left at dst.
	Join(ctx context.Context, dst string, fps, frames int, ranges []media.JoinRange) error
}

// Result summarises a merge.
type Result struct {
	Output     string  `json:"output"`
	Sources    int     `json:"sources"` // shards in the dataset, all runs
	Added      int     `json:"added"`   // shards this run added
	Episodes   int     `json:"episodes"`
	Frames     int64   `json:"frames"`
	Tasks      int     `json:"tasks"`
	DataFiles  int     `json:"data_files"`
	VideoFiles int     `json:"video_files"`
	Report     *Report `json:"-"` // the dataset holds it (layout.MergeReportPath)
}

// WriteText writes the Result as merge's one line of text.
func (r *Result) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "merged %d shards (%d added): %d episodes, %d frames, %d tasks, %d data and %d video files in %s\n",
		r.Sources, r.Added, r.Episodes, r.Frames, r.Tasks, r.DataFiles, r.VideoFiles, r.Output)
	return err
}

// busyPoll is how often a merge waiting for its destination
// (Options.WaitBusy) looks again.
const busyPoll = time.Second

// Merge writes one LeRobot dataset from the sources (after the dataset
// named by Into, when set). Nothing is written unless every source is a
// sound shard and all agree on fps, robot type and features. The
// destination's lock is taken before any work: a merge that finds it held
// looks again until Options.WaitBusy is over.
func Merge(ctx context.Context, opts Options) (*Result, error) {
	until := time.Now().Add(opts.WaitBusy)
	for {
		res, err := mergeTry(ctx, opts)
		if !errors.Is(err, output.ErrDestinationBusy) || !time.Now().Before(until) {
			return res, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(busyPoll):
		}
	}
}

// mergeTry is Merge's one try at the destination: its options checked,
// then the merge, built a second time when an append finds the seal of
// the dataset it appends to does not hold.
func mergeTry(ctx context.Context, opts Options) (*Result, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Video == nil {
		return nil, errors.New("merge: no Options.Video to read and join the video files with")
	}
	if opts.Output == "" {
		opts.Output = opts.Into
	}
	if opts.Output == "" {
		return nil, fmt.Errorf("%w: no output dataset given", ErrUsage)
	}
	if len(opts.Sources) == 0 {
		return nil, fmt.Errorf("%w: no shards to merge", ErrUsage)
	}
	if opts.ChunksSize == 0 {
		opts.ChunksSize = lerobot.DefaultChunksSize
	}
	if opts.DataFileSizeMB == 0 {
		opts.DataFileSizeMB = lerobot.DefaultDataFileSizeMB
	}
	if opts.VideoFileSizeMB == 0 {
		opts.VideoFileSizeMB = lerobot.DefaultVideoFileSizeMB
	}
	if opts.ChunksSize < 0 || opts.DataFileSizeMB < 0 || opts.VideoFileSizeMB < 0 {
		return nil, fmt.Errorf("%w: chunks and file sizes must be positive", ErrUsage)
	}
	res, err := mergeOnce(ctx, opts, log, nil)
	var unsealed *errIntoUnsealed
	if errors.As(err, &unsealed) {
		res, err = mergeOnce(ctx, opts, log, unsealed.again())
	}
	return res, err
}

// mergeOnce builds the merge once and commits it. With Into, the seal of
// the dataset appended to is checked while the append is built (intoSeal)
// unless seal has its result already; an append built while it was
// checked returns errIntoUnsealed when it does not hold, with nothing
// written.
func mergeOnce(ctx context.Context, opts Options, log *slog.Logger, seal *intoSeal) (_ *Result, err error) {
	start := time.Now()
	dirs := opts.Sources
	if opts.Into != "" {
		dirs = append([]string{opts.Into}, dirs...)
	}
	replace := opts.Replace || (opts.Into != "" && sameDir(opts.Into, opts.Output))
	inputs := destinationInputs(opts, dirs)
	if _, err := output.CheckDestination(opts.Output, inputs, replace); err != nil {
		return nil, err
	}
	if err := checkOutput(opts); err != nil {
		return nil, err
	}
	// The destination's lock is held from here to the commit, so that the
	// dataset appended to cannot change under the merge.
	st, err := output.Stage(opts.Output, output.StageOptions{Replace: replace, Kind: output.KindMerged, Inputs: inputs})
	if err != nil {
		return nil, err
	}
	defer st.Abort()
	sums := newFileSums()
	if opts.Into != "" && seal == nil {
		seal = checkIntoSeal(ctx, dirs[0], sums)
		defer func() {
			// Whatever stopped the append, the dataset appended to is
			// verified in full if its seal does not hold, and the error
			// is what that finds.
			if holds, _ := seal.wait(); !holds && err != nil && ctx.Err() == nil {
				err = &errIntoUnsealed{seal}
			}
		}()
	}
	pages := &pqcolumns.PagePool{}
	sources, openErrs, verifyErrs, held := openSources(ctx, opts, dirs, seal, sums, pages, log)
	for i, d := range dirs {
		s, err := sources[i], openErrs[i]
		if err != nil {
			if errors.Is(err, ctx.Err()) && ctx.Err() != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %w", ErrUsage, err)
		}
		if opts.Into != "" && i == 0 && !s.isMerged() {
			return nil, fmt.Errorf("%w: --into %s: not a merged dataset (it has no %s); merge it with -o first", ErrUsage, d, layout.MergeReportPath)
		}
	}
	if err := checkDuplicates(sources); err != nil {
		return nil, err
	}
	// Privacy first: a metadata-only source also lacks the video features.
	if err := checkPrivacy(sources, opts.Privacy); err != nil {
		return nil, err
	}
	if err := checkCompatible(sources); err != nil {
		return nil, err
	}
	license, err := mergedLicense(sources, opts.License)
	if err != nil {
		return nil, err
	}
	// Nothing is written from a source that fails its quick verify.
	for _, err := range verifyErrs {
		if err != nil {
			return nil, err
		}
	}
	log.Debug("merge: sources read", "sources", len(sources), "rows_held_bytes", held, "elapsed", time.Since(start))
	m := &merger{opts: opts, log: log, sources: sources, into: opts.Into != "", seal: seal, start: start, sums: sums, pages: pages, license: license}
	// A shard is one source of the report; a merged dataset brings all of
	// its own, numbered on from where it stands.
	m.reportIndex = make([]int, len(sources))
	next := 0
	for i, s := range sources {
		m.reportIndex[i] = next
		if s.isMerged() {
			next += len(s.merged.Sources)
			continue
		}
		next++
		if s.private {
			s.withoutUserStrings(next - 1)
		}
	}
	return m.run(ctx, st)
}

// openSources opens every source and verifies it (the dataset appended
// to, dirs[0] with Into, by its seal), two at a time, and returns what the
// merge keeps of each until it writes it, each source's errors, and the
// bytes of rows held from the verifies (holdRows).
func openSources(ctx context.Context, opts Options, dirs []string, seal *intoSeal, sums *fileSums, pages *pqcolumns.PagePool, log *slog.Logger) (sources []*source, openErrs, verifyErrs []error, heldBytes int64) {
	// Each source is opened and quick-verified by the same worker, through
	// one set of Parquet files: verify checks the very columns the merge
	// reads, and each file's footer is parsed, and each column decoded,
	// once (twice made the sources' meta/episodes half of a merge's CPU).
	sources = make([]*source, len(dirs))
	openErrs = make([]error, len(dirs))
	verifyErrs = make([]error, len(dirs))
	var held atomic.Int64
	budget := opts.HeldRowsBytes
	if budget == 0 {
		budget = heldRowsBudget
	}
	shared := newAlike()
	twoAtATime(len(dirs), func(i int) {
		files := pqcolumns.NewFiles(pages)
		defer files.Close()
		// The dataset appended to is read without its per-episode
		// statistics (appendTotal); while its seal is being checked, it is
		// not verified: the append is made again if the seal does not hold.
		into := opts.Into != "" && i == 0
		if into && !seal.known {
			sources[i], openErrs[i] = openKept(ctx, dirs[i], files)
		} else {
			sources[i], openErrs[i] = openSource(ctx, dirs[i], files, !into)
		}
		if openErrs[i] != nil {
			return
		}
		shared.share(sources[i])
		if into && !seal.known {
			sources[i].ds.Parquet = nil
			return
		}
		var holds bool
		var why error
		if into {
			holds, why = seal.wait()
		} else {
			holds, why = sealHolds(ctx, dirs[i], sums)
		}
		verifyErrs[i] = verifySource(ctx, sources[i], into, holds, why, files, opts.Video, log)
		if verifyErrs[i] == nil && !sources[i].isMerged() {
			// What tells the source from any other (checkDuplicates),
			// from the files the seal check has just hashed.
			s := sources[i]
			if s.fingerprint, s.legacyFingerprint, verifyErrs[i] = contentDigest(ctx, s.dir, sums); verifyErrs[i] != nil && ctx.Err() == nil {
				verifyErrs[i] = fmt.Errorf("%w: %w", ErrUsage, verifyErrs[i])
			}
		}
		if verifyErrs[i] == nil && !into {
			holdRows(ctx, sources[i], &held, budget)
			sources[i].release()
		}
		sources[i].ds.Parquet = nil
	})
	return sources, openErrs, verifyErrs, held.Load()
}

// destinationInputs are the inputs the output may not overlap: every
// source except the dataset appended to when it is the output itself.
func destinationInputs(opts Options, dirs []string) []string {
	var inputs []string
	for i, d := range dirs {
		if opts.Into != "" && i == 0 && sameDir(d, opts.Output) {
			continue
		}
		inputs = append(inputs, d)
	}
	return inputs
}

func sameDir(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// checkOutput refuses to replace an output of this tool that is not a
// merged dataset (a shard, a campaign output): merge makes datasets only.
func checkOutput(opts Options) error {
	if _, err := os.Lstat(opts.Output); err != nil {
		return nil
	}
	if kind, ok := output.KindOf(opts.Output); ok && kind != output.KindMerged {
		return fmt.Errorf("%w: output %s is a ceres-export %s, not a merged dataset; refusing to replace it", ErrUsage, opts.Output, kind)
	}
	return nil
}

// checkDuplicates refuses the same source twice: the same directory, the
// same export report (a copy of a shard), or the same content (a copy of
// a foreign dataset, which has no export report), also against the
// sources already in a merged dataset among them. A merged dataset made
// before seals version 2 recorded a foreign source's fingerprint in the
// legacy form, which a source is compared with too.
func checkDuplicates(sources []*source) error {
	dirs := newDirSet()
	seenReport := map[string]string{}
	seenContent := map[string]string{}
	for _, s := range sources {
		if s.isMerged() {
			for _, r := range s.merged.Sources {
				where := fmt.Sprintf("%s (already in %s)", r.Name, s.dir)
				if r.Foreign == nil {
					seenReport[r.ExportReportSHA256] = where
					continue
				}
				if prev, ok := seenContent[r.Fingerprint]; ok && r.Fingerprint != "" {
					return fmt.Errorf("%w: %s is the same source as %s (identical content)", ErrUsage, where, prev)
				}
				if r.Fingerprint != "" {
					seenContent[r.Fingerprint] = where
				}
			}
			continue
		}
		if prev, ok := dirs.add(s.dir); ok {
			return fmt.Errorf("%w: shard %s is given twice (also as %s)", ErrUsage, s.dir, prev)
		}
		for _, fp := range []string{s.fingerprint, s.legacyFingerprint} {
			if prev, ok := seenContent[fp]; ok && fp != "" {
				return fmt.Errorf("%w: %s is the same source as %s (identical content)", ErrUsage, s.dir, prev)
			}
		}
		if s.fingerprint != "" {
			seenContent[s.fingerprint] = s.dir
		}
		if s.foreign != nil {
			continue // no export report to tell it by
		}
		if prev, ok := seenReport[s.reportSHA]; ok {
			return fmt.Errorf("%w: shard %s is the same shard as %s (identical %s)", ErrUsage, s.dir, prev, layout.ExportReportPath)
		}
		seenReport[s.reportSHA] = s.dir
	}
	return nil
}

// dirSet tells a directory met before under another path. Each directory
// is looked up once: comparing every pair by path (os.Stat twice a pair)
// made 66,000 of the 84,000 stat calls of a 256-shard merge.
type dirSet struct {
	byID  map[fileID]string
	infos []os.FileInfo // where the platform gives no fileID
	paths []string
}

func newDirSet() *dirSet { return &dirSet{byID: map[fileID]string{}} }

// add records dir and returns the path it was met under before, if it was.
// A directory that cannot be read is never the same as another.
func (d *dirSet) add(dir string) (string, bool) {
	info, err := os.Stat(dir)
	if err != nil {
		return "", false
	}
	if id, ok := identifyDir(info); ok {
		if prev, seen := d.byID[id]; seen {
			return prev, true
		}
		d.byID[id] = dir
		return "", false
	}
	for i, prev := range d.infos {
		if os.SameFile(info, prev) {
			return d.paths[i], true
		}
	}
	d.infos, d.paths = append(d.infos, info), append(d.paths, dir)
	return "", false
}

// heldRowsBudget bounds by default the decoded rows a merge keeps from its
// sources' quick verify until it writes them. Within it a source's data
// files are decoded once, not again by the writer (the writer of a merge
// of 256 small shards, whose rows take 1.1 MiB in all, spent most of its
// time waiting for that second decoding); beyond it they are decoded
// again when written, one source ahead of the writer, so that memory does
// not grow with the number or the size of the sources. Held rows take
// more heap than they count (arrow's buffers and arrays, about twice for
// small shards): at 16 MiB a merge of a thousand small shards held all
// 4.4 MiB of its rows and its peak RSS was 14-20 MiB above that at 2 MiB,
// and 2 MiB held took it 6 MiB above 512 KiB (docs/benchmarks.md, "Merge
// at scale").
const heldRowsBudget = 512 << 10

// holdRows keeps the rows the quick verify of s decoded, if they fit in
// what is left of budget (held counts what the merge keeps).
func holdRows(ctx context.Context, s *source, held *atomic.Int64, budget int64) {
	if budget <= 0 {
		return
	}
	n, err := s.ds.HoldDataFiles(ctx, s.shardEpisodes())
	if err != nil {
		return // the writer reads the rows itself, and reports it
	}
	if held.Add(n) > budget {
		held.Add(-n)
		s.ds.ReleaseDataFiles()
	}
}

// twoAtATime calls fn(i) for i in [0, n), two calls at a time: the
// sources' opening and quick verify (their Parquet files, hashing their
// video files) keep both cores busy that way. Not one per core: a quick
// verify holds a source's data file in memory, and a merge job's memory
// request must not grow with the node it lands on.
func twoAtATime(n int, fn func(i int)) {
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

// verifySource verifies a source through the Parquet files its reader
// opened, by what its seal (shard.Seal) says of it. The dataset appended
// to (into) is trusted when its seal holds: its files are then, byte for
// byte, those its merge committed, which a verify would only read again.
// Only the destination is: a seal is a digest anyone can compute, so it
// tells a dataset changed since it was written, not one forged. Another
// source whose seal holds gets the quick verify; any whose seal does not
// hold (changed since, sealed before seals covered every byte, or never
// sealed: a foreign dataset) gets the full verify, which decodes every
// video frame against its feature's info and recomputes the statistics
// from the rows.
func verifySource(ctx context.Context, s *source, into, holds bool, why error, files *pqcolumns.Files, vid Video, log *slog.Logger) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	switch {
	case holds && into:
		log.Debug("merge: the dataset appended to is as its merge sealed it", "dataset", s.dir)
		return nil
	case holds:
		return verifySound(ctx, s.dir, true, !into, files, vid)
	}
	log.Info("verifying in full: its seal does not hold", "dataset", s.dir, "why", why)
	return verifySound(ctx, s.dir, false, !into, files, vid)
}

// verifySound runs verify's quick or full check on a source. A source
// merged from (not the dataset appended to, whose files the output keeps)
// is not refused for findings about what the merge does not carry over
// (carriedNot).
func verifySound(ctx context.Context, dir string, quick, mergedFrom bool, files *pqcolumns.Files, vid Video) error {
	res, err := verify.Shard(ctx, dir, verify.Options{Quick: quick, Parquet: files, Video: vid})
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if res.Sound {
		return nil
	}
	var lines []string
	for _, f := range res.Findings {
		if f.Severity == verify.SeverityError && !(mergedFrom && carriedNot(f)) {
			lines = append(lines, "  "+f.String())
			if len(lines) == 10 {
				lines = append(lines, fmt.Sprintf("  ... %d errors in all", res.Count(verify.SeverityError)))
				break
			}
		}
	}
	if len(lines) == 0 {
		return nil // only findings about what the merge does not carry over
	}
	how, flag := "full", ""
	if quick {
		how, flag = "quick", " --quick"
	}
	return fmt.Errorf("%w: %s fails a %s verify (run ceres-export verify%s %s):\n%s", ErrUnsound, dir, how, flag, dir, strings.Join(lines, "\n"))
}

// carriedNot reports whether finding f is about a file no merge carries
// into its output: a source's meta/stats.json, since the merged statistics
// are aggregated from each episode's own (which mergeable checks against
// the rows: shard.ErrStatsContradictRows). LeRobot's own tools leave that
// file stale (lerobot-edit-dataset deletes episodes without recomputing
// it) or in float32; refusing such a source would refuse LeRobot's own
// datasets for a file the merge never reads.
func carriedNot(f verify.Finding) bool {
	return f.File == layout.StatsPath && f.Code == "stats.mismatch"
}

// merger holds one Merge run.
type merger struct {
	opts    Options
	log     *slog.Logger
	sources []*source
	into    bool // sources[0] is the dataset appended to
	// seal is the check of the seal of the dataset appended to.
	seal *intoSeal
	// linked gives the result of linking the provenance files of the
	// dataset appended to.
	linked chan error
	start  time.Time
	// sums are the files hashed so far (the seal of the dataset appended
	// to, then the new one's).
	sums *fileSums
	// pages recycles the page buffers of the merge's Parquet reads.
	pages *pqcolumns.PagePool
	// reportIndex is each source's position in the report's sources; for a
	// merged dataset, that of its first source.
	reportIndex []int
	// license is the dataset's licence (mergedLicense).
	license string

	// What writeRows gathers of each source while it holds what the
	// source's writing read (reload), for what is written after the
	// rows: its specifications' hashes and episodes per task (the card)
	// and its task descriptors pooled in source order (writePooled).
	specHashes map[string]bool
	perTask    map[string]int
	pooled     []descriptor.Descriptor
}

func (m *merger) run(ctx context.Context, st *output.Staging) (_ *Result, err error) {
	defer func() {
		// Nothing may still write into the staging directory once the
		// merge returns (and Abort removes it).
		if m.linked != nil {
			if lerr := <-m.linked; err == nil && lerr != nil {
				err = lerr
			}
			m.linked = nil
		}
	}()
	features := mergedFeatures(m.sources)
	plans, err := m.planVideos(features)
	if err != nil {
		return nil, err
	}
	b, err := shard.NewBuilder(st.Dir(), features, shard.Options{
		FPS: m.sources[0].fps, RobotType: robotString(m.sources[0].robotType),
		ChunksSize: m.opts.ChunksSize, DataFileSizeMB: m.opts.DataFileSizeMB, DataFileSizeBytes: m.opts.DataFileSizeBytes,
		VideoFileSizeMB: m.opts.VideoFileSizeMB, CreatedBy: createdBy(m.opts.Version),
		Workers: min(runtime.GOMAXPROCS(0), 2), QuantileAggregation: m.opts.Quantiles, SourceColumns: true,
	})
	if err != nil {
		return nil, err
	}

	// Every source's fingerprint was taken when it was verified.
	waitFingerprints := func() ([]string, error) {
		fingerprints := make([]string, len(m.sources))
		for i, s := range m.sources {
			fingerprints[i] = s.fingerprint
		}
		return fingerprints, nil
	}

	vctx, cancel := context.WithCancel(ctx)
	defer cancel()
	videoErrs := make([]error, len(plans))
	var wg sync.WaitGroup
	for i, p := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.execute(vctx, m.opts.Video, st.Dir(), m.sources[0].fps); err != nil {
				videoErrs[i] = err
				cancel()
			}
		}()
	}
	m.log.Debug("merge: video planned", "elapsed", time.Since(m.start))
	// The metadata depends on the plan, not on the copied bytes: it is
	// written while the video is still being copied.
	report, err := m.writeMetadata(ctx, b, features, plans, waitFingerprints)
	if err != nil {
		cancel()
	}
	wg.Wait()
	m.log.Debug("merge: video written", "elapsed", time.Since(m.start))
	if err != nil {
		return nil, err
	}
	if err := errors.Join(videoErrs...); err != nil {
		return nil, err
	}
	if m.linked != nil {
		err := <-m.linked
		m.linked = nil
		if err != nil {
			return nil, err
		}
	}
	if m.into && !m.seal.known {
		if holds, _ := m.seal.wait(); !holds {
			return nil, &errIntoUnsealed{m.seal}
		}
		m.log.Debug("merge: the dataset appended to is as its merge sealed it", "dataset", m.sources[0].dir)
	}
	if err := writeSeal(ctx, b, m.sums); err != nil {
		return nil, err
	}
	m.log.Debug("merge: metadata written and sealed", "elapsed", time.Since(m.start))
	if err := st.Commit(); err != nil {
		return nil, err
	}
	m.log.Debug("merge: committed", "elapsed", time.Since(m.start))
	res := &Result{
		Output: m.opts.Output, Sources: len(report.Sources), Added: len(report.Runs[len(report.Runs)-1].Sources),
		Episodes: report.Episodes, Frames: report.Frames, Tasks: report.Tasks, DataFiles: len(report.Data), Report: report,
	}
	for _, v := range report.Videos {
		res.VideoFiles += len(v.Files)
	}
	return res, nil
}

// writeMetadata writes the rows, then, once the fingerprints are hashed,
// the merge report, the pooled descriptors and LeRobot's metadata.
func (m *merger) writeMetadata(ctx context.Context, b *shard.Builder, features []shard.Feature, plans []*videoPlan, waitFingerprints func() ([]string, error)) (*Report, error) {
	report, err := m.writeRows(ctx, b, features, plans)
	m.log.Debug("merge: rows written", "elapsed", time.Since(m.start))
	fingerprints, fpErr := waitFingerprints()
	m.log.Debug("merge: fingerprints", "elapsed", time.Since(m.start))
	if err != nil {
		return nil, err
	}
	if fpErr != nil {
		return nil, fpErr
	}
	for i, fp := range fingerprints {
		if !m.sources[i].isMerged() {
			report.Sources[m.reportIndex[i]].Fingerprint = fp
		}
	}
	for _, p := range plans {
		report.Videos[p.key] = p.report()
	}
	var kept int
	var keptText []byte
	if k := m.sources[0].kept; k != nil {
		kept, keptText = len(m.sources[0].merged.Sources), k.reportSources
	}
	data, err := reportJSON(report, kept, keptText)
	if err != nil {
		return nil, fmt.Errorf("merge: %s: %w", layout.MergeReportPath, err)
	}
	if err := b.WriteCeresFile(layout.MergeReportPath, data); err != nil {
		return nil, err
	}
	if err := m.writePooled(b); err != nil {
		return nil, err
	}
	if err := b.Finish(nil); err != nil {
		return nil, err
	}
	if err := m.writeCard(b, report); err != nil {
		return nil, err
	}
	return report, nil
}

func robotString(v any) string {
	s, _ := v.(string)
	return s
}

func createdBy(version string) string {
	if version == "" {
		return ""
	}
	return "ceres-export " + version
}

// writeRows writes every episode of every source through the builder and
// returns the report (without the video part).
func (m *merger) writeRows(ctx context.Context, b *shard.Builder, features []shard.Feature, plans []*videoPlan) (*Report, error) {
	report := &Report{Merger: "ceres-export", License: m.license, Videos: map[string]VideoReport{}}
	run := RunReport{Version: m.opts.Version, Options: ReportOptions{
		NoConcat: m.opts.NoConcat, Quantiles: quantileName(m.opts.Quantiles), ChunksSize: m.opts.ChunksSize,
		DataFileSizeMB: m.opts.DataFileSizeMB, VideoFileSizeMB: m.opts.VideoFileSizeMB,
	}}
	if m.into {
		base := m.sources[0].merged
		report.Runs = append(report.Runs, base.Runs...)
		report.Sources = append(report.Sources, base.Sources...)
	}
	// Tasks in LeRobot's order: every source's tasks.parquet in turn.
	for _, s := range m.sources {
		for _, t := range s.tasks {
			b.AddTask(t)
		}
	}
	var data []shard.Feature
	for _, f := range features {
		if f.Dtype != lerobot.Video {
			data = append(data, f)
		}
	}
	var maxLen int64
	for _, s := range m.sources {
		maxLen = max(maxLen, s.maxLength)
	}
	episodeRows := b.NewRows(int(maxLen))
	redacted := map[string]bool{}
	var episodes, frames int64
	ahead := m.decodeAhead(ctx)
	defer ahead.stop()
	m.specHashes, m.perTask = map[string]bool{}, map[string]int{}
	for si, s := range m.sources {
		srcIndex := int64(m.reportIndex[si])
		if !(m.into && si == 0) {
			// The decoder has read the source's episodes again (reload)
			// unless it stopped early.
			ahead.wait(si)
			if err := ahead.reloaded(si); err != nil {
				return nil, err
			}
			if err := s.reload(ctx); err != nil {
				return nil, err
			}
		}
		switch {
		case !s.isMerged():
			run.Sources = append(run.Sources, len(report.Sources))
			report.Sources = append(report.Sources, sourceReport(s, episodes, frames, len(report.Runs), ""))
		case !(m.into && si == 0):
			// A merged dataset's sources join this run, their ranges moved
			// to where its episodes now stand.
			for _, r := range s.merged.Sources {
				r.FirstEpisode += episodes
				r.FirstIndex += frames
				r.Run = len(report.Runs)
				run.Sources = append(run.Sources, len(report.Sources))
				report.Sources = append(report.Sources, r)
			}
		}
		if m.into && si == 0 {
			// The provenance files of the dataset appended to (one a
			// shard) are linked on the other core while the rest is
			// written; run waits for them.
			m.linked = make(chan error, 1)
			go func() { m.linked <- storeSourceFiles(b, s, m.reportIndex[si]) }()
		} else if err := storeSourceFiles(b, s, m.reportIndex[si]); err != nil {
			return nil, err
		}
		if m.into && si == 0 {
			// Appending: the dataset's rows stay in its data files, which
			// the new dataset links; only what follows is written.
			m.log.Info("keeping rows", "source", s.dir, "episodes", s.episodeCount())
			total, err := m.appendTotal(ctx, s)
			if err != nil {
				return nil, err
			}
			if s.kept != nil && total != nil {
				err = b.ContinueKnown(ctx, s.ds, s.kept.shard, total)
			} else {
				err = b.Continue(ctx, s.ds, s.shardEpisodes(), total, s.episodeStats)
			}
			if err != nil {
				return nil, err
			}
		} else {
			m.log.Info("merging rows", "source", s.dir, "episodes", len(s.episodes))
			err := m.writeSource(ctx, b, si, s, srcIndex, data, episodeRows, plans)
			ahead.done(si)
			if err != nil {
				return nil, err
			}
		}
		for h, spec := range s.specs {
			var err error
			if s.private {
				// Several sources store the same redacted copy: written once
				// (a staging file is only ever created).
				if redacted[h] {
					continue
				}
				redacted[h] = true
				err = b.WriteCeresFile(layout.RedactedSpecPath(h), spec)
			} else {
				err = b.WriteSpec(h, spec)
			}
			if err != nil {
				return nil, err
			}
		}
		for h := range s.specs {
			m.specHashes[h] = true
		}
		if s.kept != nil {
			for i, n := range s.kept.perTask {
				m.perTask[s.tasks[i]] += n
			}
		}
		for _, e := range s.episodes {
			m.perTask[e.Tasks[0]]++
		}
		m.pooled = descriptor.Pool(m.pooled, s.descriptors)
		episodes += s.episodeCount()
		frames += s.frames
		s.drop()
	}
	report.Runs = append(report.Runs, run)
	report.Episodes = int(episodes)
	report.Frames = frames
	report.Tasks = len(b.Tasks())
	report.Data = b.DataFiles()
	return report, nil
}

// appendTotal is the aggregate statistics the append goes on from: those
// of meta/stats.json of the dataset appended to (s) when its seal holds
// (the file is as its merge wrote it) and its last run aggregated as this
// one does; nil otherwise, after reading the per-episode statistics into
// s.episodeStats, so that the statistics are always those of one merge of
// every shard in order.
func (m *merger) appendTotal(ctx context.Context, s *source) ([]shard.Stats, error) {
	runs := s.merged.Runs
	why := fmt.Errorf("its last run aggregated quantiles other than by %s", quantileName(m.opts.Quantiles))
	switch {
	case !m.seal.trusted():
		why = errors.New("its seal does not hold")
	case len(runs) > 0 && runs[len(runs)-1].Options.Quantiles == quantileName(m.opts.Quantiles):
		total, err := s.ds.BaseTotal()
		if err == nil {
			return total, nil
		}
		why = err
	}
	m.log.Info("merge: aggregating the statistics of every episode appended to", "dataset", s.dir, "why", why)
	eps, stats, err := s.ds.EpisodesWithStats(ctx, shard.StatsFeatures(s.ds.Info.Features))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	s.episodeStats = stats
	if s.kept != nil {
		// Opened without its episodes (openKept): Continue takes them
		// with their statistics.
		for _, e := range eps {
			s.episodes = append(s.episodes, sourceEpisode{Episode: e})
		}
	}
	return nil, nil
}

// rowsDecoder decodes the data files of the source the writer comes to
// next while it writes the current one, on the other core: the writer is
// one goroutine, and decoding was a third of its time. One source ahead,
// so that at most two sources' rows are held whatever their size.
type rowsDecoder struct {
	sources []*source
	// reloadErrs are the errors of reading a source's episodes again.
	reloadErrs []error
	ready      []chan struct{}
	next       chan struct{} // a token per source the decoder may start
	cancel     context.CancelFunc
	stopped    chan struct{}
}

// decodeAhead starts decoding the sources' data files in order (the
// dataset appended to, whose rows stay where they are, excepted). A file
// that fails to decode is left to the writer's own read, which reports it.
func (m *merger) decodeAhead(ctx context.Context) *rowsDecoder {
	ctx, cancel := context.WithCancel(ctx)
	d := &rowsDecoder{sources: m.sources, reloadErrs: make([]error, len(m.sources)), ready: make([]chan struct{}, len(m.sources)), next: make(chan struct{}, len(m.sources)),
		cancel: cancel, stopped: make(chan struct{})}
	for i := range d.ready {
		d.ready[i] = make(chan struct{})
	}
	d.next <- struct{}{} // the first source
	go func() {
		// Every source not reached is ready (nothing decoded) when the
		// decoder stops early: the writer reads it itself, and finds the
		// cancellation.
		reached := 0
		defer func() {
			for _, r := range d.ready[reached:] {
				close(r)
			}
			close(d.stopped)
		}()
		for si, s := range m.sources {
			if !(m.into && si == 0) {
				select {
				case <-ctx.Done():
					return
				case <-d.next:
				}
				s.ds.Parquet = pqcolumns.NewFiles(m.pages)
				if d.reloadErrs[si] = s.reload(ctx); d.reloadErrs[si] == nil {
					_ = s.ds.DecodeDataFiles(ctx, s.shardEpisodes())
				}
			}
			close(d.ready[si])
			reached = si + 1
		}
	}()
	return d
}

// wait returns when source si's data files are decoded.
func (d *rowsDecoder) wait(si int) {
	d.next <- struct{}{} // the decoder may go on to si+1
	<-d.ready[si]
}

// reloaded returns the error of reading source si's episodes again, once
// wait has returned.
func (d *rowsDecoder) reloaded(si int) error { return d.reloadErrs[si] }

// done releases what was decoded, or held, of source si.
func (d *rowsDecoder) done(si int) {
	if f := d.sources[si].ds.Parquet; f != nil {
		f.Close()
		d.sources[si].ds.Parquet = nil
	}
	d.sources[si].ds.ReleaseDataFiles()
}

// stop ends the decoder and waits for it.
func (d *rowsDecoder) stop() {
	d.cancel()
	<-d.stopped
	for si := range d.sources {
		d.done(si)
	}
}

// writeSource writes the episodes of source si.
func (m *merger) writeSource(ctx context.Context, b *shard.Builder, si int, s *source, srcIndex int64, data []shard.Feature, episodeRows *shard.EpisodeRows, plans []*videoPlan) error {
	rows := s.ds.NewRowReader(data)
	defer rows.Close()
	for ei := range s.episodes {
		if err := ctx.Err(); err != nil {
			return err
		}
		e := &s.episodes[ei]
		if err := rows.Read(ctx, &e.Episode, episodeRows); err != nil {
			return err
		}
		meta := shard.EpisodeMeta{Task: e.Tasks[0], Videos: map[string]shard.VideoSegment{}, Ceres: e.Ceres, Stats: e.stats}
		meta.Ceres.Foreign = meta.Ceres.Foreign || s.foreign != nil
		for _, p := range plans {
			seg, err := p.segment(si, e, s.fps)
			if err != nil {
				return err
			}
			meta.Videos[p.key] = seg
		}
		if !s.isMerged() {
			meta.Ceres.Source = episodeSource(s, srcIndex, e)
		} else if srcIndex > 0 {
			moved := *meta.Ceres.Source
			moved.Index += srcIndex
			meta.Ceres.Source = &moved
		}
		before := len(b.Restated())
		if err := b.WriteEpisode(meta, episodeRows); err != nil {
			return fmt.Errorf("%s episode %d: %w", s.dir, e.Index, err)
		}
		// A foreign writer's statistics are taken as they are only while
		// the rows bear them out; otherwise the rows' own are written.
		for _, r := range b.Restated()[before:] {
			m.log.Warn("merge: statistics recomputed from the rows", "source", s.dir, "why", r.Error())
		}
	}
	return nil
}

func quantileName(q shard.QuantileAggregation) string {
	if q == shard.QuantileEnvelope {
		return "envelope"
	}
	return "weighted-mean"
}

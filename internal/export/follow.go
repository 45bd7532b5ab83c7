package export

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/media"
	"github.com/ceres-robotics/ceres-export/internal/output"
	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/internal/profile"
	"github.com/ceres-robotics/ceres-export/journal"
)

// A followed export runs beside the recorder. It reads the journal again
// whenever it grows and, as each attempt ends accepted (so far: an accepted
// fate is final only at END, since a Retry or a later attempt of the same
// repetition may still discard it), encodes that episode's video, one part
// per camera, with the same code a batch export runs; between episodes it
// decodes and drops what no episode can need. At END (or once no valid
// record has appeared for FollowOptions.Idle: the recorder is gone) it runs
// the batch export, whose cameras take the parts of the final plan's
// episodes instead of encoding them again. Parts of episodes a later Retry
// discarded are never used and go with the work directory. Every episode
// is encoded on its own in a batch export too, so the shard is the batch
// export's, byte for byte.

// DefaultFollowIdle is how long a followed journal may go without a new
// valid record, without END, before the recorder counts as gone: the journal writer
// fsyncs at least once a second while it records, so 30 s of silence is a
// dead recorder, not a slow one.
const DefaultFollowIdle = 30 * time.Second

// defaultFollowPoll is how often, at least, a growing followed journal is
// read again whole (more often when an event or END arrives).
const defaultFollowPoll = 200 * time.Millisecond

// followTick is how often a followed journal is looked at for appended
// records (only those are read).
const followTick = 20 * time.Millisecond

// FollowOptions configure Follow.
type FollowOptions struct {
	// Idle: with no END, the session counts as ended once no valid record
	// has appeared for this long (a journal that never appears or
	// disappears is then an error); 0 means DefaultFollowIdle.
	Idle time.Duration
	// Poll is how often, at least, a growing journal is read again (more
	// often when an event arrives); 0 means 200 ms.
	Poll time.Duration
	// Status, when set, is called every Poll and once the session ended.
	Status func(FollowStatus)
	// Logger receives the follow's warnings (a camera encoded again because
	// its file changed); nil discards them.
	Logger *slog.Logger
}

// FollowStatus is where a followed export stands.
type FollowStatus struct {
	// Waiting is true while the session has no readable journal yet.
	Waiting bool
	// SessionTime is the journal time (ns) of the latest event.
	SessionTime int64
	// Episodes are the accepted attempts so far; Encoded of them have
	// their video encoded in every camera, Pending wait for it. Open
	// counts attempts started and not yet ended.
	Episodes, Encoded, Pending, Open int
	// EncodedSeconds is the session time the slowest camera has encoded;
	// Speed is that camera's session seconds encoded per second spent
	// encoding (above 1: faster than real time).
	EncodedSeconds float64
	Speed          float64
	// Behind is how far (ns of session time) the end of the last episode
	// the slowest camera has encoded lags the latest attempt end; 0 when
	// nothing waits.
	Behind int64
	// Ended is true once END is read or the journal went idle.
	Ended bool
}

// Follow exports the session at sessionDir into shardDir while it is being
// recorded (see the comment above). The shard is what Export of the
// finished session writes; a cancelled ctx leaves no output.
func Follow(ctx context.Context, sessionDir, shardDir string, opts Options, fo FollowOptions) (*Report, error) {
	if fo.Idle <= 0 {
		fo.Idle = DefaultFollowIdle
	}
	if fo.Poll <= 0 {
		fo.Poll = defaultFollowPoll
	}
	enc, inputs, err := checkOptions(sessionDir, shardDir, opts)
	if err != nil {
		return nil, err
	}
	// The destination is staged, under its lock, before anything else: a
	// second writer (another follow, an export) is refused now, not at the
	// end, and the follow's work lies inside the staging directory, so that
	// what a killed follow leaves is removed by the next run into the
	// destination, as every staging directory is.
	st, err := output.Stage(shardDir, output.StageOptions{Replace: opts.Replace, Kind: output.KindShard, Inputs: inputs})
	if err != nil {
		return nil, err
	}
	defer func() { _ = st.Abort() }() // nothing after the commit
	work := filepath.Join(st.Dir(), followWorkDir)
	if err := os.Mkdir(work, 0o755); err != nil {
		return nil, err
	}
	log := fo.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &follower{opts: opts, enc: enc, work: work, log: log, workers: map[string]*cameraWorker{}}
	wctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		f.stop()
	}()
	f.ctx = wctx

	// The recorder is alive while valid records appear: not while files
	// grow (a preallocating recorder writes in place) or exist. The clock
	// starts with the follow, so that a session path that never shows a
	// journal ends the follow as a recorder gone silent does.
	lastRecord := time.Now()
	records := 0
	// The journal is watched every followTick, reading only what was
	// appended; it is opened again (read whole) when an event or END
	// arrives, and otherwise at most every openEvery, which grows with
	// what an open costs so that reading stays a small share of a core
	// however long the session.
	watcher := journal.NewWatcher(sessionDir)
	openEvery := fo.Poll
	var lastOpen, lastStatus time.Time
	pending := false
	tick := time.NewTicker(followTick)
	defer tick.Stop()
	for {
		a, err := watcher.Poll()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err // a segment that vanished is judged below
		}
		if a.Records > 0 {
			records += a.Records
			lastRecord = time.Now()
		}
		pending = pending || a.Records > 0
		if pending && (a.End || a.Events > 0 || time.Since(lastOpen) >= openEvery) {
			start := time.Now()
			// A journal that does not open yet (no SESSION record, a
			// segment still empty) is one not written yet.
			j, err := journal.Open(ctx, sessionDir, journal.Options{Salvage: opts.Salvage})
			lastOpen = time.Now()
			openEvery = min(max(fo.Poll, 4*lastOpen.Sub(start)), 5*time.Second)
			if err == nil {
				pending = false
				f.update(j)
			}
		}
		idle := time.Since(lastRecord) >= fo.Idle
		if idle && !f.ended {
			if err := lostJournal(sessionDir, records, fo.Idle); err != nil {
				return nil, err
			}
		}
		ended := f.ended || idle
		if fo.Status != nil && (ended || time.Since(lastStatus) >= fo.Poll) {
			lastStatus = time.Now()
			fo.Status(f.status(ended))
		}
		if ended {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
	f.finish()
	opts.followed = f
	opts.staged = st
	return Export(ctx, sessionDir, shardDir, opts)
}

// followWorkDir, inside the staging directory, holds a follow's camera
// parts until the export at the end has joined them; it never reaches the
// shard.
const followWorkDir = ".follow"

// lostJournal is the error of a follow whose recorder went silent for idle
// because the session's journal is not there: it never appeared (a
// mistyped session path, a recorder that never started) or it disappeared
// after records were read (the session moved or deleted after a crash).
// A journal that is there is exported as it is.
func lostJournal(sessionDir string, records int, idle time.Duration) error {
	dir := filepath.Join(sessionDir, "journal")
	_, err := os.Stat(dir)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if records == 0 {
		return fmt.Errorf("export: follow: no journal appeared at %s within --follow-idle %s (is the session path right? a recorder creates it when it starts): %w", dir, idle, err)
	}
	return fmt.Errorf("export: follow: the journal %s disappeared after %d records were read (the session was moved or deleted while it was followed): %w", dir, records, err)
}

// follower is the state of one Follow.
type follower struct {
	log   *slog.Logger
	opts  Options
	enc   media.EncoderOptions
	work  string
	ctx   context.Context
	ended bool // END read
	// final is set once the session has ended: camera files are complete.
	final atomic.Bool

	ready   bool // the settings below are known
	applied plan.TaskTypes
	fps     int
	cameras []journal.Stream // the cameras the export keeps
	workers map[string]*cameraWorker
	wg      sync.WaitGroup
	plan    *plan.Plan
	lastT   int64
}

// followMargin is how far behind the latest record a followed export
// encodes an attempt still being recorded: a recorder may stamp an event a
// little before samples it has already written (another thread's clock),
// and a frame past the attempt's end must never be sent.
const followMargin = 500 * time.Millisecond

// followView is what the journal says a camera may encode now.
type followView struct {
	// items are the attempts that are, or may still become, episodes: the
	// accepted ones and those started and not yet ended, by start time.
	items []followItem
	// safe: no frame before it serves an episode yet to be seen.
	safe int64
	// upto: the recording has reached it (frames of an open attempt before
	// it may be encoded).
	upto int64
}

type followItem struct {
	start  int64
	length int // frames; 0 while open
	open   bool
}

// key names an ended item's part.
func (it followItem) key() [2]int64 { return [2]int64{it.start, int64(it.length)} }

// viewOf derives the view of plan p with latest the journal's latest time.
func viewOf(p *plan.Plan, lastEvent, latest int64) followView {
	v := followView{safe: lastEvent, upto: latest - int64(followMargin)}
	for _, a := range p.Attempts {
		switch {
		case a.Fate == plan.Accepted:
			v.items = append(v.items, followItem{start: a.Start, length: a.Length})
		case a.Fate == plan.Incomplete && a.HasStart && !a.HasEnd:
			v.items = append(v.items, followItem{start: a.Start, open: true})
			v.safe = min(v.safe, a.Start)
		}
	}
	// Every attempt yet to start starts at or after the latest event
	// (event times never decrease), an open one at its start.
	slices.SortStableFunc(v.items, func(a, b followItem) int { return cmp.Compare(a.start, b.start) })
	v.upto = min(v.upto, lastEvent+int64(time.Hour)) // a sample stamped far ahead moves nothing
	return v
}

// update takes in the journal as it is now.
func (f *follower) update(j *journal.Journal) {
	if !f.ready {
		if j.SpecRecord == nil {
			return
		}
		applied, _, err := appliedSpec(j, f.opts.TaskSpec)
		if err != nil {
			return // the export at the end says why
		}
		fps := f.opts.FPS
		if fps == 0 {
			if fps, _, err = plan.DefaultFPS(j.Info.Streams); err != nil {
				return
			}
		}
		resolved, err := profile.Resolve(f.opts.Profile, j.Info)
		if err != nil {
			return
		}
		f.applied, f.fps, f.ready = plan.SpecTypes(applied), fps, true
		if f.opts.Privacy != privacy.MetadataOnly {
			for _, c := range resolved.Cameras {
				f.cameras = append(f.cameras, j.Info.Streams[j.StreamIndex(c.Stream)])
			}
		}
	}
	p, err := plan.Build(j.Events, f.applied, f.fps)
	if err != nil {
		return
	}
	f.plan = p
	if n := len(j.Events); n > 0 {
		f.lastT = j.Events[n-1].T
	}
	view := viewOf(p, f.lastT, j.LatestTime())
	for i, s := range f.cameras {
		sources := cameraSources(j, s.ID)
		w := f.workers[s.ID]
		if w == nil {
			if len(sources) == 0 {
				continue
			}
			eo := cameraExportOptions(f.fps, s, f.enc, f.opts.Video)
			w = newCameraWorker(f, s.ID, filepath.Join(f.work, strconv.Itoa(i)), eo)
			f.workers[s.ID] = w
			w.offer(sources, view)
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				w.run(f.ctx)
			}()
			continue
		}
		w.offer(sources, view)
	}
	if j.End != nil {
		f.ended = true
	}
}

// status summarises the follow.
func (f *follower) status(ended bool) FollowStatus {
	st := FollowStatus{Waiting: !f.ready, SessionTime: f.lastT, Ended: ended}
	if f.plan == nil {
		return st
	}
	st.Episodes = len(f.plan.Episodes)
	for _, a := range f.plan.Attempts {
		if a.HasStart && !a.HasEnd && a.Fate == plan.Incomplete {
			st.Open++
		}
	}
	var lastEnd int64
	for _, a := range f.plan.Attempts {
		if a.Fate == plan.Accepted && a.End > lastEnd {
			lastEnd = a.End
		}
	}
	st.Encoded = st.Episodes
	first := true
	for _, w := range f.workers {
		done, secs, busy, end := w.progress(f.plan.Episodes)
		st.Encoded = min(st.Encoded, done)
		if first || secs < st.EncodedSeconds {
			st.EncodedSeconds = secs
			if busy > 0 {
				st.Speed = secs / busy.Seconds()
			}
			st.Behind = max(0, lastEnd-end)
			first = false
		}
	}
	if len(f.workers) < len(f.cameras) && st.Episodes > 0 {
		st.Encoded = 0 // a camera whose first file has not appeared
	}
	st.Pending = st.Episodes - st.Encoded
	if st.Pending == 0 {
		st.Behind = 0
	}
	return st
}

// finish marks the session ended and waits for the workers to encode what
// they were offered.
func (f *follower) finish() {
	f.final.Store(true)
	for _, w := range f.workers {
		w.close()
	}
	f.wg.Wait()
}

// stop releases the workers' encoders.
func (f *follower) stop() {
	f.final.Store(true)
	for _, w := range f.workers {
		w.close()
	}
	f.wg.Wait()
	for _, w := range f.workers {
		w.release()
	}
}

// encoder returns the encode function of the batch export for camera
// stream: the worker's parts where it has them, fallback otherwise.
func (f *follower) encoder(stream string, fallback encodeFunc) encodeFunc {
	w := f.workers[stream]
	if w == nil {
		return fallback
	}
	return func(ctx context.Context, sources []media.Source, episodes []media.EpisodeTimes, eo media.ExportOptions) (media.CameraResult, error) {
		res, err := w.complete(ctx, sources, episodes, eo)
		if errors.Is(err, errFollowFallback) {
			f.log.Debug("follow: camera encoded at the end", "camera", stream, "why", err)
			w.release()
			return fallback(ctx, sources, episodes, eo)
		}
		return res, err
	}
}

// errFollowFallback: the worker's pass cannot serve the final plan (it
// failed, its inputs differ, or an episode lies behind it); the camera is
// encoded as a batch export does.
var errFollowFallback = errors.New("followed camera cannot serve the export")

// cameraWorker encodes one camera's episodes while the session records.
type cameraWorker struct {
	f      *follower
	stream string
	dir    string
	eo     media.ExportOptions

	mu      sync.Mutex
	wake    chan struct{}
	sources []media.Source
	view    followView
	closed  bool
	parts   map[[2]int64]media.Part
	err     error
	frames  int // frames encoded
	busy    time.Duration
	lastEnd int64 // window end of the latest part
	// Owned by run.
	enc      media.CameraEncoder
	cur      media.PartWriter // the open attempt's part
	curStart int64
	behind   map[int64]bool // items (by start) the pass had left behind
	skipped  int64
	finished chan struct{}
	// prints identify the bytes the pass read, once it is released.
	prints []media.ReadPrint
}

func newCameraWorker(f *follower, stream, dir string, eo media.ExportOptions) *cameraWorker {
	w := &cameraWorker{f: f, stream: stream, dir: dir, eo: eo, wake: make(chan struct{}, 1),
		parts: map[[2]int64]media.Part{}, behind: map[int64]bool{}, finished: make(chan struct{})}
	w.eo.MoreSources = w.moreSources
	return w
}

// offer hands the worker the camera's files and the view so far.
func (w *cameraWorker) offer(sources []media.Source, view followView) {
	w.mu.Lock()
	for i := len(w.sources); i < len(sources); i++ {
		s := sources[i]
		s.Final = func() bool { return w.fileFinal(i) }
		w.sources = append(w.sources, s)
	}
	w.view = view
	w.mu.Unlock()
	w.poke()
}

// fileFinal: file i is complete once the session has ended or a later file
// of the camera is named (a recorder starts a camera's next file only
// after it closed the last).
func (w *cameraWorker) fileFinal(i int) bool {
	if w.f.final.Load() {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return i < len(w.sources)-1
}

func (w *cameraWorker) moreSources() ([]media.Source, bool) {
	final := w.f.final.Load()
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.sources), final
}

func (w *cameraWorker) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *cameraWorker) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.poke()
}

// advanceStep bounds the frames one step encodes of an open attempt, so
// that the worker sees a newer view (the attempt ended, or was retried)
// soon.
const advanceStep = 15

// run encodes, step by step, what the latest view allows until closed.
func (w *cameraWorker) run(ctx context.Context) {
	defer close(w.finished)
	w.mu.Lock()
	first := slices.Clone(w.sources)
	w.mu.Unlock()
	if w.f.opts.VideoFiles == nil {
		w.fail(ErrNoVideo) // the export at the end says so
		return
	}
	enc, err := w.f.opts.VideoFiles.NewCameraEncoder(first, w.eo)
	if err != nil {
		w.fail(err)
		return
	}
	w.enc = enc
	for {
		w.mu.Lock()
		view, closed, failed := w.view, w.closed, w.err != nil
		w.mu.Unlock()
		if failed {
			return
		}
		worked, err := w.step(ctx, view)
		if err != nil {
			w.fail(err)
			return
		}
		if worked {
			continue
		}
		if closed {
			return
		}
		select {
		case <-ctx.Done():
			w.fail(ctx.Err())
			return
		case <-w.wake:
		}
	}
}

// step does one piece of the work view allows: finish or encode an ended
// attempt's part, advance the open attempt's, or skip what nothing needs.
// It reports whether it did anything.
func (w *cameraWorker) step(ctx context.Context, view followView) (bool, error) {
	if w.cur != nil && !slices.ContainsFunc(view.items, func(it followItem) bool { return it.start == w.curStart }) {
		// Retried (or otherwise discarded) while it was being recorded.
		w.cur.Abort()
		w.cur = nil
	}
	for _, it := range view.items {
		if w.behind[it.start] {
			continue
		}
		if !it.open {
			w.mu.Lock()
			_, done := w.parts[it.key()]
			w.mu.Unlock()
			if done {
				continue
			}
		}
		start := time.Now()
		switch {
		case it.open && w.cur == nil:
			path := filepath.Join(w.dir, fmt.Sprintf("open-%d.mp4", it.start))
			pw, err := w.enc.BeginPart(len(w.parts), it.start, path)
			if errors.Is(err, media.ErrBehind) {
				w.behind[it.start] = true
				continue
			}
			if err != nil {
				return false, err
			}
			w.cur, w.curStart = pw, it.start
			return true, nil
		case it.open && w.curStart == it.start:
			sent := w.cur.Sent()
			upto := min(view.upto, lerobot.FrameTime(it.start, sent+advanceStep+1, w.eo.FPS))
			if err := w.cur.Advance(ctx, upto); err != nil {
				return false, err
			}
			w.account(w.cur.Sent()-sent, time.Since(start), 0)
			if w.cur.Sent() > sent {
				return true, nil
			}
			return false, nil // waits for the recording
		case it.open:
			continue // another attempt's part is open: this one waits
		case w.cur != nil && w.curStart == it.start:
			sent := w.cur.Sent()
			p, err := w.cur.Finish(ctx, it.length)
			w.cur = nil
			if errors.Is(err, media.ErrBehind) {
				w.behind[it.start] = true
				continue
			}
			if err != nil {
				return false, err
			}
			w.store(it, p, it.length-sent, time.Since(start))
			return true, nil
		case w.cur != nil:
			continue // the open part keeps the pass: this one is encoded at the end
		default:
			path := filepath.Join(w.dir, fmt.Sprintf("%d-%d.mp4", it.start, it.length))
			p, err := w.enc.EncodePart(ctx, len(w.parts), media.EpisodeTimes{Start: it.start, Length: it.length}, path)
			if errors.Is(err, media.ErrBehind) {
				w.behind[it.start] = true
				continue
			}
			if err != nil {
				return false, err
			}
			w.store(it, p, it.length, time.Since(start))
			return true, nil
		}
	}
	if w.cur == nil && view.safe > w.skipped {
		w.skipped = view.safe
		if err := w.enc.SkipTo(ctx, view.safe); err != nil {
			return false, err
		}
		return true, nil
	}
	return false, nil
}

// store keeps an ended attempt's part.
func (w *cameraWorker) store(it followItem, p media.Part, frames int, took time.Duration) {
	w.mu.Lock()
	w.parts[it.key()] = p
	w.mu.Unlock()
	w.account(frames, took, lerobot.FrameTime(it.start, it.length, w.eo.FPS))
}

// account adds encoding work to the progress figures.
func (w *cameraWorker) account(frames int, took time.Duration, end int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.frames += frames
	w.busy += took
	w.lastEnd = max(w.lastEnd, end)
}

func (w *cameraWorker) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

// progress reports how many of episodes have parts, the session seconds
// encoded, the time spent encoding and the end of the latest part.
func (w *cameraWorker) progress(episodes []plan.Episode) (done int, seconds float64, busy time.Duration, lastEnd int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ep := range episodes {
		if _, ok := w.parts[[2]int64{ep.Start, int64(ep.Length)}]; ok {
			done++
		}
	}
	return done, float64(w.frames) / float64(w.eo.FPS), w.busy, w.lastEnd
}

// complete is the camera's encode in the batch export at the end: the
// parts of the final episodes, the missing ones encoded by the same pass,
// joined into the shard's files. The pass must have read the bytes the
// batch export reads: a camera file that no longer begins with what the
// pass read (rewritten or cut short by a recorder that broke its
// append-only promise) makes the camera be encoded again from its files
// as they are now, as a batch export encodes it.
func (w *cameraWorker) complete(ctx context.Context, sources []media.Source, episodes []media.EpisodeTimes, eo media.ExportOptions) (media.CameraResult, error) {
	<-w.finished
	if w.cur != nil {
		// Still open at the end: the attempt never ended (no episode), or
		// ended after the worker stopped; either way the final plan says.
		w.cur.Abort()
		w.cur = nil
	}
	if w.enc == nil {
		return media.CameraResult{}, fmt.Errorf("%w: %v", errFollowFallback, w.err)
	}
	res, err := w.completeParts(ctx, sources, episodes, eo)
	if errors.Is(err, errFollowFallback) {
		// The pass's reads are over once it is released.
		w.release()
		if cerr := w.checkReads(); cerr != nil {
			w.f.log.Warn("follow: a camera file changed under the follow; encoding the camera again from its files as they are now",
				"camera", w.stream, "why", cerr)
			return media.CameraResult{}, fmt.Errorf("%w: %w", errFollowFallback, cerr)
		}
	}
	return res, err
}

// completeParts is complete's work once the pass is known to exist.
func (w *cameraWorker) completeParts(ctx context.Context, sources []media.Source, episodes []media.EpisodeTimes, eo media.ExportOptions) (media.CameraResult, error) {
	if w.err != nil {
		return media.CameraResult{}, fmt.Errorf("%w: %v", errFollowFallback, w.err)
	}
	if !sameCameraInputs(w.sources, w.eo, sources, eo) {
		return media.CameraResult{}, fmt.Errorf("%w: its files or settings differ", errFollowFallback)
	}
	parts := make([]media.Part, 0, len(episodes))
	for e, ep := range episodes {
		if p, ok := w.parts[[2]int64{ep.Start, int64(ep.Length)}]; ok {
			parts = append(parts, p)
			continue
		}
		p, err := w.enc.EncodePart(ctx, e, ep, filepath.Join(w.dir, "end-"+media.PartName(e)))
		if err != nil {
			// An error may come from bytes that changed under the pass:
			// complete judges by the reads.
			return media.CameraResult{}, fmt.Errorf("%w: %w", errFollowFallback, err)
		}
		parts = append(parts, p)
	}
	res, err := w.enc.Finish(eo.DecodeAll)
	if err != nil {
		return res, fmt.Errorf("%w: %w", errFollowFallback, err)
	}
	w.prints = w.enc.ReadPrints()
	if err := w.checkReads(); err != nil {
		return res, fmt.Errorf("%w: %w", errFollowFallback, err)
	}
	if res.Episodes, res.Files, err = w.f.opts.VideoFiles.PlaceParts(ctx, parts, eo); err != nil {
		return res, err
	}
	if eo.Progress != nil {
		total := 0
		for _, p := range parts {
			total += p.Episode.Frames
		}
		eo.Progress(total, total)
	}
	return res, nil
}

// checkReads checks that every camera file still begins with the bytes the
// pass read of it.
func (w *cameraWorker) checkReads() error {
	for _, p := range w.prints {
		if err := p.Check(); err != nil {
			return err
		}
	}
	return nil
}

// release frees the worker's decoders and encoder state, keeping what the
// pass read (checkReads).
func (w *cameraWorker) release() {
	w.mu.Lock()
	enc := w.enc
	w.enc = nil
	w.mu.Unlock()
	if enc != nil {
		enc.Close()
		w.prints = enc.ReadPrints()
	}
}

// sameCameraInputs reports whether the follow's pass read the files and
// used the settings the batch export asks for.
func sameCameraInputs(have []media.Source, haveOpts media.ExportOptions, want []media.Source, wantOpts media.ExportOptions) bool {
	if len(have) != len(want) {
		return false
	}
	for i := range have {
		if have[i].Path != want[i].Path || have[i].StartT != want[i].StartT {
			return false
		}
	}
	a, b := haveOpts, wantOpts
	return a.FPS == b.FPS && a.SourceFPS == b.SourceFPS && a.Width == b.Width && a.Height == b.Height &&
		a.InfoStyle == b.InfoStyle && a.DecoderThreads == b.DecoderThreads && a.RecordChoices == b.RecordChoices &&
		a.DecodeAll == b.DecodeAll && reflect.DeepEqual(a.Encoder, b.Encoder)
}

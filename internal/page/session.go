package page

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/internal/video"
	"github.com/ceres-robotics/ceres-export/journal"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// sessionPage is what the session template shows.
type sessionPage struct {
	SessionID, RunTitle, RunDescription, StartedAt, Recorder string
	Exported                                                 bool
	Exporter                                                 string
	Status                                                   []badge
	Cards                                                    []card
	Timeline                                                 template.HTML
	Legend                                                   []legendItem
	Attempts                                                 []attemptRow
	Traces                                                   template.HTML
	TraceLegend                                              []legendItem
	Episodes                                                 []episodeRow
	CameraNames                                              []string
	Spec                                                     specSection
	Cameras                                                  []cameraRow
	Sensors                                                  []sensorRow
	Journal                                                  journalSection
	Notes, Diagnostics                                       []string
}

type badge struct{ Text, Class string }

type card struct{ Label, Value, Note string }

type legendItem struct{ Name, Color, Shape string }

type attemptRow struct {
	Cycle, Repetition, Attempt int
	Task, Fate, Outcome        string
	Start, Length, Reason      string
	Episode                    string
}

type episodeRow struct {
	Index              int
	Task, Key, Outcome string
	Frames             int
	Seconds            string
	Cameras            []cameraThumbs
}

type cameraThumbs struct {
	Stream string
	Gaps   int
	Strip  strip
}

type specSection struct {
	Version           int
	Applied, Recorded string
	Corrected         bool
	Differences       []taskspec.Difference
	Tasks             []specTask
	CycleCount        int64
}

type specTask struct {
	ID, Type, Label, Instructions, Duration, Repeat, Reset string
}

type cameraRow struct {
	Stream, Feature, Size string
	Frames, Gaps          int
	GapShare              string
	Files                 int
	Bytes                 string
	BitsPerFrame          string
	Sources               []sourceRow
	Reused                bool
}

type sourceRow struct {
	Path, Note string
	Frames     int
	Dropped    int
	Truncated  bool
}

type sensorRow struct {
	Stream                     string
	Rate                       string
	Samples                    int64
	BackFilled, Stale, Missing int64
	Unlocated                  int64
}

type journalSection struct {
	Segments     []journal.SegmentInfo
	Bytes        string
	Torn         *journal.TornTail
	Skipped      []journal.ByteRange
	Unterminated bool
	End          string
	MissingMedia []string
}

// WriteSession renders the session page of r: the journal and plan always,
// and when r.Report is set (an exported shard in r.Dir) the video
// thumbnails and the shard's figures.
func WriteSession(ctx context.Context, w io.Writer, r *export.Result) error {
	pg, err := buildSession(ctx, r)
	if err != nil {
		return err
	}
	return pageTemplates.ExecuteTemplate(w, "session.html", pg)
}

func buildSession(ctx context.Context, r *export.Result) (*sessionPage, error) {
	j, p, rep := r.Journal, r.Plan, r.Report
	cams := map[string]video.CameraResult{}
	if rep != nil && len(rep.Cameras) > 0 {
		var err error
		if cams, err = export.ReadCameraResults(r.Dir); err != nil {
			return nil, fmt.Errorf("page: %w", err)
		}
	}
	lanes := cameraLanes(j, p, rep, cams)
	clk := sessionClock(j, lanes)
	damage, lastRead, err := journalDamage(j, clk)
	if err != nil {
		return nil, err
	}
	pg := &sessionPage{
		SessionID: j.Info.SessionID, StartedAt: j.Info.StartedAt,
		RunTitle: r.Spec.RunTitle, RunDescription: r.Spec.RunDescription,
		Exported: rep != nil,
	}
	if rc := j.Info.Recorder; rc != nil {
		pg.Recorder = rc.Name + " " + rc.Version
	}
	if rep != nil {
		pg.Exporter = rep.Exporter.Name + " " + rep.Exporter.Version
	}
	pg.Status = statusBadges(j, p, rep)
	pg.Cards = cards(j, p, rep, cams, r.Dir, clk)
	pg.Timeline, err = timeline(timelineInput{j: j, p: p, spec: r.Spec, clk: clk, cams: lanes, damage: damage, lastRead: lastRead})
	if err != nil {
		return nil, err
	}
	pg.Legend = timelineLegend(p, lanes, damage, j)
	for _, a := range p.Attempts {
		row := attemptRow{Cycle: a.Cycle, Task: a.Task, Repetition: a.Repetition, Attempt: a.Attempt,
			Fate: string(a.Fate), Outcome: a.Outcome, Reason: a.Reason}
		if a.HasStart {
			row.Start = clockText(clk, a.Start)
		}
		if a.Length > 0 {
			row.Length = fmt.Sprintf("%d frames", a.Length)
		}
		if a.Episode >= 0 {
			row.Episode = fmt.Sprint(a.Episode)
		}
		pg.Attempts = append(pg.Attempts, row)
	}
	trs, notes, err := readTraces(ctx, j, clk)
	if err != nil {
		return nil, err
	}
	pg.Notes = append(pg.Notes, notes...)
	if pg.Traces, err = traces(trs, p, rep, clk); err != nil {
		return nil, err
	}
	pg.TraceLegend = []legendItem{{Name: "episode window", Color: "episode"}}
	if rep != nil {
		pg.TraceLegend = append(pg.TraceLegend, legendItem{Name: "stale frames", Color: "stale"}, legendItem{Name: "back-filled frames", Color: "backfill"})
	}
	if pg.Episodes, pg.CameraNames, err = episodeRows(ctx, r, cams); err != nil {
		return nil, err
	}
	pg.Spec = specOf(r, j)
	pg.Cameras = cameraRows(j, rep, cams)
	pg.Sensors = sensorRows(j, rep)
	pg.Journal = journalOf(j, clk)
	if rep != nil {
		pg.Notes = append(pg.Notes, rep.Notes...)
	} else {
		pg.Notes = append(pg.Notes, "This session has not been exported (or no shard was given): the page shows what an export with default options would take and leave; video thumbnails and shard figures need the shard.")
	}
	pg.Diagnostics = p.Diagnostics
	return pg, nil
}

// clockText formats a journal time as session time: m:ss.s.
func clockText(clk clock, t int64) string {
	s := float64(t-clk.origin) / 1e9
	neg := ""
	if s < 0 {
		neg, s = "−", -s
	}
	m := int(s / 60)
	return fmt.Sprintf("%s%d:%04.1f", neg, m, s-float64(60*m))
}

func statusBadges(j *journal.Journal, p *plan.Plan, rep *export.Report) []badge {
	var out []badge
	if rep != nil {
		out = append(out, badge{"exported", "ok"})
	} else {
		out = append(out, badge{"not exported", "neutral"})
	}
	switch {
	case j.End != nil:
		out = append(out, badge{"ended: " + j.End.Reason, "ok"})
	case j.Report.Torn != nil:
		out = append(out, badge{"crashed: torn journal tail", "bad"})
	default:
		out = append(out, badge{"no END record", "warn"})
	}
	if len(j.Report.Skipped) > 0 {
		out = append(out, badge{fmt.Sprintf("salvaged: %d ranges skipped", len(j.Report.Skipped)), "bad"})
	}
	if n := p.Count(plan.Retried); n > 0 {
		out = append(out, badge{fmt.Sprintf("%d retried", n), "warn"})
	}
	if rep != nil && rep.Spec.Hash != rep.Spec.RecordedHash {
		out = append(out, badge{"corrected specification", "warn"})
	}
	return out
}

func cards(j *journal.Journal, p *plan.Plan, rep *export.Report, cams map[string]video.CameraResult, dir string, clk clock) []card {
	frames := 0
	for _, ep := range p.Episodes {
		frames += ep.Length
	}
	fates := []string{}
	for _, f := range []plan.Fate{plan.Accepted, plan.Retried, plan.Incomplete, plan.Anomalous, plan.Empty} {
		if n := p.Count(f); n > 0 {
			fates = append(fates, fmt.Sprintf("%d %s", n, f))
		}
	}
	out := []card{
		{"episodes", fmt.Sprint(len(p.Episodes)), fmt.Sprintf("of %d attempts", len(p.Attempts))},
		{"frames", fmt.Sprint(frames), fmt.Sprintf("%s of data at %d fps", seconds(float64(frames)/float64(p.FPS)), p.FPS)},
		{"attempts", fmt.Sprint(len(p.Attempts)), strings.Join(fates, ", ")},
		{"recording", seconds(float64(clk.end-clk.origin) / 1e9), plural(len(cycleWindows(j.Events, clk.end)), "cycle") + ", " + plural(len(p.Resets), "reset") + ", " + plural(len(p.Pauses), "pause")},
	}
	if rep != nil {
		gaps := 0
		for _, c := range rep.Cameras {
			gaps += c.Gaps
		}
		var bf, st int64
		for _, s := range rep.Sensors {
			bf += s.BackFilled
			st += s.Stale
		}
		out = append(out,
			card{"camera frames in gaps", fmt.Sprint(gaps), fmt.Sprintf("over %d cameras", len(rep.Cameras))},
			card{"sensor frames back-filled / stale", fmt.Sprintf("%d / %d", bf, st), fmt.Sprintf("over %d streams", len(rep.Sensors))},
		)
		if n, err := shardBytes(dir); err == nil {
			var video int64
			for _, c := range cams {
				for _, f := range c.Files {
					video += f.Bytes
				}
			}
			out = append(out, card{"shard size", byteSize(n), byteSize(video) + " of it video"})
		}
	}
	return out
}

// shardBytes sums the sizes of the shard's files, leaving out this page,
// the seal and the output marker (all written after the rest, so the page
// that export stages and the one rendered from the committed shard
// agree).
func shardBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		if r := filepath.ToSlash(rel); r == layout.SessionPagePath || r == layout.OutputMarkerPath || r == layout.SealPath || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += info.Size()
		return nil
	})
	return n, err
}

// plural writes "1 cycle", "2 cycles".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func seconds(s float64) string {
	switch {
	case s >= 3600:
		return fmt.Sprintf("%dh %02dmin", int(s/3600), int(s/60)%60)
	case s >= 60:
		return fmt.Sprintf("%dmin %02ds", int(s/60), int(s)%60)
	}
	return fmt.Sprintf("%.1f s", s)
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func timelineLegend(p *plan.Plan, lanes []cameraLane, damage []damageMark, j *journal.Journal) []legendItem {
	out := []legendItem{{Name: "accepted", Color: "accepted"}, {Name: "retried", Color: "retried"}, {Name: "incomplete", Color: "incomplete"}}
	if p.Count(plan.Anomalous) > 0 {
		out = append(out, legendItem{Name: "anomalous", Color: "anomalous"})
	}
	if p.Count(plan.Empty) > 0 {
		out = append(out, legendItem{Name: "empty", Color: "empty"})
	}
	out = append(out,
		legendItem{Name: "pass", Color: "pass", Shape: "dot"},
		legendItem{Name: "fail", Color: "fail", Shape: "cross"},
		legendItem{Name: "reset", Color: "reset"},
		legendItem{Name: "pause", Color: "pause"})
	if len(lanes) > 0 {
		out = append(out, legendItem{Name: "camera file", Color: "camera"}, legendItem{Name: "frames in camera gaps", Color: "gap"})
	}
	out = append(out, legendItem{Name: "journal", Color: "journal"})
	if len(damage) > 0 || j.Report.Torn != nil {
		out = append(out, legendItem{Name: "torn / salvaged journal", Color: "damage"})
	}
	return out
}

func episodeRows(ctx context.Context, r *export.Result, cams map[string]video.CameraResult) ([]episodeRow, []string, error) {
	p := r.Plan
	rows := make([]episodeRow, len(p.Episodes))
	for i, ep := range p.Episodes {
		rows[i] = episodeRow{
			Index: ep.Index, Task: ep.Task, Outcome: ep.Outcome, Frames: ep.Length,
			Key:     fmt.Sprintf("cycle %d · rep %d · attempt %d", ep.Cycle, ep.Repetition, ep.Attempt),
			Seconds: seconds(float64(ep.Length) / float64(p.FPS)),
		}
	}
	if r.Report == nil {
		return rows, nil, nil
	}
	streams := slices.Sorted(maps.Keys(cams))
	// Order cameras as the session declares them.
	order := map[string]int{}
	for i, s := range r.Journal.Info.Streams {
		order[s.ID] = i
	}
	slices.SortFunc(streams, func(a, b string) int { return order[a] - order[b] })
	count := 0
	for _, s := range streams {
		count += 3 * len(cams[s].Episodes)
	}
	width, quality := thumbSize(count)
	// Cameras decode side by side, one goroutine each (as export encodes
	// them): decoding the exported video is most of a page's time.
	strips := make([][]strip, len(streams))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, runtime.NumCPU()))
	for k, s := range streams {
		res := cams[s]
		if len(res.Episodes) != len(p.Episodes) {
			return nil, nil, fmt.Errorf("page: camera %s has %d episodes in %s, the plan %d", s, len(res.Episodes), layout.VideosPath, len(p.Episodes))
		}
		feature := r.Report.Cameras[s].Feature
		g.Go(func() error {
			var err error
			strips[k], err = thumbnails(gctx, r.Dir, feature, res, width, quality)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	for k, s := range streams {
		for i := range rows {
			rows[i].Cameras = append(rows[i].Cameras, cameraThumbs{Stream: s, Gaps: cams[s].Episodes[i].Gaps, Strip: strips[k][i]})
		}
	}
	return rows, streams, nil
}

func specOf(r *export.Result, j *journal.Journal) specSection {
	s := specSection{Version: r.Spec.Version, Applied: r.Spec.Hash(), Recorded: j.Spec.Hash(), CycleCount: r.Spec.CycleCount}
	s.Corrected = s.Applied != s.Recorded
	if r.Report != nil {
		s.Differences = r.Report.Spec.Differences
	} else if s.Corrected {
		s.Differences = taskspec.Diff(j.Spec, r.Spec)
	}
	for _, t := range r.Spec.Tasks {
		st := specTask{ID: t.ID, Type: t.Type, Label: t.Label, Instructions: t.Instructions}
		if t.DurationS != nil {
			st.Duration = fmt.Sprintf("%g s", *t.DurationS)
		}
		if t.RepeatCount != nil {
			st.Repeat = fmt.Sprint(*t.RepeatCount)
		}
		if t.ResetTimeS != nil {
			st.Reset = fmt.Sprintf("%g s", *t.ResetTimeS)
		}
		s.Tasks = append(s.Tasks, st)
	}
	return s
}

func cameraRows(j *journal.Journal, rep *export.Report, cams map[string]video.CameraResult) []cameraRow {
	if rep == nil {
		return nil
	}
	var out []cameraRow
	for _, s := range j.Info.Streams {
		c := rep.Cameras[s.ID]
		if s.Kind != journal.KindVideo || c == nil {
			continue
		}
		row := cameraRow{Stream: s.ID, Feature: c.Feature, Size: fmt.Sprintf("%d×%d", c.Width, c.Height),
			Frames: c.Frames, Gaps: c.Gaps, Files: len(c.Files), Reused: slices.Contains(rep.VideoReused, s.ID)}
		if c.Frames > 0 {
			row.GapShare = fmt.Sprintf("%.2f %%", 100*float64(c.Gaps)/float64(c.Frames))
		}
		var bytes int64
		for _, f := range cams[s.ID].Files {
			bytes += f.Bytes
		}
		row.Bytes = byteSize(bytes)
		if c.Frames > 0 {
			row.BitsPerFrame = fmt.Sprintf("%.1f kbit", float64(8*bytes)/float64(c.Frames)/1000)
		}
		for _, src := range c.Sources {
			sr := sourceRow{Path: src.Path, Frames: src.Frames, Dropped: src.Dropped, Truncated: src.Truncated}
			switch {
			case src.Truncated:
				sr.Note = "cut short: " + src.Err
			case src.NotDecoded:
				sr.Note = "not reached"
			}
			row.Sources = append(row.Sources, sr)
		}
		out = append(out, row)
	}
	return out
}

func sensorRows(j *journal.Journal, rep *export.Report) []sensorRow {
	var out []sensorRow
	for _, s := range j.Info.Streams {
		if s.Kind != journal.KindSensor {
			continue
		}
		row := sensorRow{Stream: s.ID, Rate: fmt.Sprintf("%g Hz", s.RateHz), Samples: j.Report.Samples[s.ID].Samples}
		if rep != nil {
			if c := rep.Sensors[s.ID]; c != nil {
				row.BackFilled, row.Stale, row.Missing, row.Unlocated = c.BackFilled, c.Stale, c.Missing, c.Unlocated
			}
		}
		out = append(out, row)
	}
	return out
}

func journalOf(j *journal.Journal, clk clock) journalSection {
	js := journalSection{Segments: j.Report.Segments, Torn: j.Report.Torn, Skipped: j.Report.Skipped,
		Unterminated: j.Report.Unterminated, MissingMedia: j.Report.MissingMedia}
	var n int64
	for _, s := range j.Report.Segments {
		n += s.Size
	}
	js.Bytes = byteSize(n)
	if j.End != nil {
		js.End = fmt.Sprintf("%s at %s", j.End.Reason, clockText(clk, j.End.T))
	}
	return js
}

// journalDamage places the torn tail and the ranges salvage skipped on the
// time axis, and returns the time of the last record read. A skipped range
// lies between the last time read before it and the first after it.
func journalDamage(j *journal.Journal, clk clock) ([]damageMark, int64, error) {
	last := clk.end
	var out []damageMark
	if t := j.Report.Torn; t != nil {
		out = append(out, damageMark{interval{clk.end, clk.end}, true, fmt.Sprintf("torn tail: %s offset %d, %d bytes", t.Segment, t.Offset, t.Bytes)})
	}
	if len(j.Report.Skipped) == 0 {
		return out, last, nil
	}
	segs := j.Segments()
	for _, r := range j.Report.Skipped {
		idx := slices.IndexFunc(segs, func(p string) bool { return filepath.Base(p) == r.Segment })
		if idx < 0 {
			continue
		}
		before, after, err := timesAround(segs[idx], r, j.Info.Streams)
		if err != nil {
			return nil, 0, fmt.Errorf("page: journal %s: %w", r.Segment, err)
		}
		if before == nil {
			before = &clk.origin
		}
		if after == nil {
			after = &clk.end
		}
		out = append(out, damageMark{interval{*before, *after}, false, fmt.Sprintf("salvage skipped %s offset %d, %d bytes", r.Segment, r.Offset, r.Length)})
	}
	return out, last, nil
}

// timesAround reads the segment's frames and returns the latest record
// time before the skipped range and the earliest after it (nil when
// there is none).
func timesAround(path string, r journal.ByteRange, streams []journal.Stream) (before, after *int64, err error) {
	f, err := input.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	fr := journal.NewFrameReader(f, journal.SegmentHeaderSize, st.Size())
	for {
		off := fr.Offset()
		typ, payload, err := fr.Next()
		if errors.Is(err, io.EOF) {
			return before, after, nil
		}
		if err != nil {
			if off >= r.Offset+r.Length {
				return before, after, nil
			}
			// Continue past the damage, as salvage did.
			fr.Resync(r.Offset + r.Length)
			continue
		}
		t, ok := recordTime(typ, payload, streams)
		if !ok {
			continue
		}
		switch {
		case off < r.Offset:
			before = &t
		case off >= r.Offset+r.Length:
			after = &t
			return before, after, nil
		}
	}
}

// recordTime is a record's journal time: t of an EVENT, SPEC or MEDIA, the
// first sample time of SAMPLES.
func recordTime(typ uint8, payload []byte, streams []journal.Stream) (int64, bool) {
	switch typ {
	case journal.TypeEvent, journal.TypeSpec, journal.TypeMedia:
		var v struct {
			T *int64 `json:"t"`
		}
		if json.Unmarshal(payload, &v) != nil || v.T == nil {
			return 0, false
		}
		return *v.T, true
	case journal.TypeSamples:
		b, err := journal.DecodeSamples(payload, streams)
		if err != nil || b.Len() == 0 {
			return 0, false
		}
		return b.Times[0], true
	}
	return 0, false
}

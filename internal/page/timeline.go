package page

import (
	"cmp"
	"fmt"
	"html/template"
	"image/color"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/internal/video"
	"github.com/ceres-robotics/ceres-export/journal"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// clock places journal times on the page's time axis.
type clock struct {
	origin, end int64 // journal ns: the session's first and last known times
	axis        timeAxis
}

// sessionClock spans every event, sample and camera file start of the
// session.
func sessionClock(j *journal.Journal, cams []cameraLane) clock {
	first, last := int64(0), int64(0)
	seen := false
	note := func(t int64) {
		if !seen {
			first, last, seen = t, t, true
			return
		}
		first, last = min(first, t), max(last, t)
	}
	for _, ev := range j.Events {
		note(ev.T)
	}
	for _, s := range j.Report.Samples {
		if s.Samples > 0 {
			note(s.FirstT)
			note(s.LastT)
		}
	}
	for _, c := range cams {
		for _, f := range c.files {
			note(f.from)
			note(f.to)
		}
	}
	if last <= first {
		last = first + 1e9
	}
	return clock{origin: first, end: last, axis: timeAxisFor(float64(last-first) / 1e9)}
}

func (c clock) x(t int64) float64 { return c.axis.x(t, c.origin) }

// cameraLane is what the timeline shows of one camera: the stretches its
// files cover and the exported frames that fell in gaps.
type cameraLane struct {
	stream string
	files  []interval
	gaps   []interval
}

type interval struct{ from, to int64 }

// cameraLanes derives the camera lanes from the export report (each source
// file's first and last decoded frame) and the per-episode gap runs.
func cameraLanes(j *journal.Journal, p *plan.Plan, rep *export.Report, cams map[string]video.CameraResult) []cameraLane {
	if rep == nil {
		return nil
	}
	startOf := map[string]int64{}
	for _, m := range j.Media {
		startOf[m.Path] = m.StartT
	}
	var out []cameraLane
	for _, s := range j.Info.Streams {
		cr := rep.Cameras[s.ID]
		if s.Kind != journal.KindVideo || cr == nil {
			continue
		}
		lane := cameraLane{stream: s.ID}
		for _, src := range cr.Sources {
			if src.Frames == 0 || src.TimeBase.Den == 0 {
				continue
			}
			at := func(pts int64) int64 {
				return startOf[src.Path] + pts*int64(src.TimeBase.Num)*1e9/int64(src.TimeBase.Den)
			}
			lane.files = append(lane.files, interval{at(src.FirstPTS), at(src.LastPTS)})
		}
		if res, ok := cams[s.ID]; ok {
			for i, er := range res.Episodes {
				if i >= len(p.Episodes) {
					break
				}
				ep := p.Episodes[i]
				for _, g := range er.GapRuns {
					lane.gaps = append(lane.gaps, interval{
						lerobot.FrameTime(ep.Start, g.From, p.FPS), lerobot.FrameTime(ep.Start, g.From+g.Frames, p.FPS),
					})
				}
			}
		}
		out = append(out, lane)
	}
	return out
}

// fateColor is the colour of an attempt's fate on the timeline.
func fateColor(f plan.Fate) color.Color {
	switch f {
	case plan.Accepted:
		return colAccepted
	case plan.Retried:
		return colRetried
	case plan.Incomplete:
		return colIncomplete
	case plan.Anomalous:
		return colAnomalous
	}
	return colEmpty
}

// visibleEnd is where an attempt's bar ends: its attempt_end, or for one
// that never ended the next event that moved the run on (a retry, the next
// attempt or reset), or the end of the recording after a crash.
func visibleEnd(a plan.Attempt, events []journal.Event, end int64) int64 {
	if a.HasEnd {
		return a.End
	}
	started := false
	for _, ev := range events {
		if !started {
			started = ev.Kind == journal.EventAttemptStart && ev.T == a.Start && ev.Task == a.Task &&
				ev.Cycle == a.Cycle && ev.Repetition == a.Repetition && ev.Attempt == a.Attempt
			continue
		}
		switch ev.Kind {
		case journal.EventRetry, journal.EventAttemptStart, journal.EventResetStart, journal.EventPauseStart,
			journal.EventCycleEnd, journal.EventRunEnd:
			return ev.T
		}
	}
	return end
}

// timelineInput gathers what the timeline draws.
type timelineInput struct {
	j        *journal.Journal
	p        *plan.Plan
	spec     *taskspec.Spec
	clk      clock
	cams     []cameraLane
	damage   []damageMark
	lastRead int64 // journal time of the last record read (torn tail, crash)
}

// damageMark is a torn or salvaged journal range placed on the time axis.
type damageMark struct {
	interval
	torn bool // the torn tail, at the end of what was read
	what string
}

// timeline draws the run: one lane per task (attempts coloured by fate,
// resets beneath, outcomes as marks), per pause task, per camera (file
// coverage, gap frames) and for the journal (torn and salvaged ranges),
// over shaded cycles.
func timeline(in timelineInput) (template.HTML, error) {
	p := newPlot()
	p.X.Label.Text = "session time (" + in.clk.axis.name + ")"
	p.Y.Tick.Label.Font = font.From(chartFont, 10)
	p.X.Min, p.X.Max = 0, in.clk.x(in.clk.end)
	p.X.Tick.Marker = niceTicks{n: 12}

	// Lanes from the top: tasks in specification order, tasks the
	// specification lacks (anomalous attempts), cameras, journal.
	var names []string
	for _, t := range in.spec.Tasks {
		names = append(names, fmt.Sprintf("%s (%s)", t.ID, t.Type))
	}
	otherLane := -1
	for _, a := range in.p.Attempts {
		if _, ok := in.spec.Task(a.Task); !ok && a.HasStart && otherLane < 0 {
			otherLane = len(names)
			names = append(names, "other tasks")
		}
	}
	firstCam := len(names)
	for _, c := range in.cams {
		names = append(names, "camera "+c.stream)
	}
	journalLane := len(names)
	names = append(names, "journal")
	laneOf := func(i int) float64 { return float64(len(names) - 1 - i) }
	lane := func(task string) float64 {
		if i := slices.IndexFunc(in.spec.Tasks, func(t taskspec.Task) bool { return t.ID == task }); i >= 0 {
			return laneOf(i)
		}
		return laneOf(otherLane)
	}

	var cycles bands
	cycles.label = draw.TextStyle{Color: colInk, Font: font.From(chartFont, 8), Handler: p.Title.TextStyle.Handler, YAlign: draw.YTop}
	for i, cy := range cycleWindows(in.j.Events, in.clk.end) {
		var fill color.Color // nil: rectFills skips it, see newPlot
		if i%2 == 0 {
			fill = colCycleBand
		}
		cycles.list = append(cycles.list, band{x0: in.clk.x(cy.from), x1: in.clk.x(cy.to), fill: fill, text: fmt.Sprintf("cycle %d", cy.cycle)})
	}
	p.Add(cycles)
	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil // no line; see newPlot
	grid.Vertical.Color = colGrid
	p.Add(grid)

	var bars spans
	for _, r := range in.p.Resets {
		end := r.End
		if r.Open {
			end = in.clk.end
		}
		bars = append(bars, span{x0: in.clk.x(r.Start), x1: in.clk.x(end), lane: lane(r.Task) - 0.3, height: 0.16, fill: colReset})
	}
	for _, ps := range in.p.Pauses {
		end := ps.End
		if ps.Open {
			end = in.clk.end
		}
		bars = append(bars, span{x0: in.clk.x(ps.Start), x1: in.clk.x(end), lane: lane(ps.Task), height: 0.5, fill: colPause})
	}
	var pass, fail plotter.XYs
	for _, a := range in.p.Attempts {
		if !a.HasStart {
			continue
		}
		end := visibleEnd(a, in.j.Events, in.clk.end)
		l := lane(a.Task)
		bars = append(bars, span{x0: in.clk.x(a.Start), x1: in.clk.x(end), lane: l + 0.02, height: 0.42, fill: fateColor(a.Fate)})
		mark := plotter.XY{X: in.clk.x(a.Start + (end-a.Start)/2), Y: l + 0.36}
		switch a.Outcome {
		case "pass":
			pass = append(pass, mark)
		case "fail":
			fail = append(fail, mark)
		}
	}
	for i, c := range in.cams {
		l := laneOf(firstCam + i)
		for _, f := range c.files {
			bars = append(bars, span{x0: in.clk.x(f.from), x1: in.clk.x(f.to), lane: l, height: 0.34, fill: colCamera})
		}
		for _, g := range c.gaps {
			bars = append(bars, span{x0: in.clk.x(g.from), x1: in.clk.x(g.to), lane: l, height: 0.7, fill: colGap, thin: true})
		}
	}
	jl := laneOf(journalLane)
	bars = append(bars, span{x0: 0, x1: in.clk.x(in.lastRead), lane: jl, height: 0.16, fill: colJournal})
	var torn plotter.XYs
	for _, d := range in.damage {
		if d.torn {
			torn = append(torn, plotter.XY{X: in.clk.x(d.from), Y: jl})
			continue
		}
		bars = append(bars, span{x0: in.clk.x(d.from), x1: in.clk.x(d.to), lane: jl, height: 0.7, fill: colDamage})
	}
	p.Add(bars)
	for _, m := range []struct {
		pts    plotter.XYs
		shape  draw.GlyphDrawer
		col    color.Color
		radius vg.Length
	}{{pass, draw.CircleGlyph{}, colPass, 2.6}, {fail, draw.CrossGlyph{}, colFail, 2.6}, {torn, draw.PyramidGlyph{}, colDamage, 5}} {
		if len(m.pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(m.pts)
		if err != nil {
			return "", err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: m.col, Radius: m.radius, Shape: m.shape}
		p.Add(sc)
	}
	// NominalY names lanes bottom-up.
	rev := slices.Clone(names)
	slices.Reverse(rev)
	p.NominalY(rev...)
	p.Y.Padding = laneLabelPadding
	p.Y.Min, p.Y.Max = -0.6, float64(len(names))-0.4
	height := vg.Points(float64(28*len(names) + 46))
	return svgOf("timeline", "Timeline of the session: attempts by fate, resets, pauses, camera coverage and journal damage", vg.Points(900), height, p)
}

// cycleWindow is one cycle's stretch of the run.
type cycleWindow struct {
	cycle    int
	from, to int64
}

// cycleWindows pairs cycle_start with cycle_end events; a cycle the
// journal never ends runs to the end of the recording.
func cycleWindows(events []journal.Event, end int64) []cycleWindow {
	open := map[int]int{}
	var out []cycleWindow
	for _, ev := range events {
		switch ev.Kind {
		case journal.EventCycleStart:
			open[ev.Cycle] = len(out)
			out = append(out, cycleWindow{cycle: ev.Cycle, from: ev.T, to: end})
		case journal.EventCycleEnd:
			if i, ok := open[ev.Cycle]; ok {
				out[i].to = ev.T
				delete(open, ev.Cycle)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b cycleWindow) int { return cmp.Compare(a.from, b.from) })
	return out
}

var _ plot.Plotter = spans(nil)

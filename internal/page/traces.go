package page

import (
	"context"
	"fmt"
	"html/template"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/journal"
)

// traceBuckets is how many time buckets a trace keeps: one per two or
// three pixels of the page's plot width, whatever the session's length, so
// a one-hour session's traces weigh what a one-minute session's do.
const traceBuckets = 480

// maxTraceLines bounds the lines of one field's plot (a vector field of
// more elements shows its first ones) and maxTracePlots the plots.
const (
	maxTraceLines = 8
	maxTracePlots = 12
)

// trace is one field's downsampled values: per element, per bucket, the
// minimum and maximum of the samples that fell into it.
type trace struct {
	stream, field, unit string
	names               []string // element names (x, y, z), nil for a scalar
	elems               int
	min, max            [][]float64 // [element][bucket]
	has                 []bool      // bucket holds a sample
	raw                 [][]plotter.XY
	samples             int64
}

// readTraces reads every numeric field of every sensor stream once,
// keeping a min/max envelope per bucket (or the samples themselves when
// there are fewer than two per bucket).
func readTraces(ctx context.Context, j *journal.Journal, clk clock) ([]*trace, []string, error) {
	var out []*trace
	var notes []string
	span := float64(clk.end - clk.origin)
	for si, s := range j.Info.Streams {
		if s.Kind != journal.KindSensor || len(s.Fields) == 0 {
			continue
		}
		n := j.Report.Samples[s.ID].Samples
		if n == 0 {
			notes = append(notes, fmt.Sprintf("stream %s has no samples", s.ID))
			continue
		}
		_ = si
		raw := n < 2*traceBuckets
		first := len(out)
		for _, f := range s.Fields {
			elems := 1
			for _, d := range f.Shape {
				elems *= d
			}
			if elems > maxTraceLines {
				notes = append(notes, fmt.Sprintf("%s.%s has %d elements; its plot shows the first %d", s.ID, f.Name, elems, maxTraceLines))
				elems = maxTraceLines
			}
			tr := &trace{stream: s.ID, field: f.Name, unit: f.Unit, elems: elems, samples: n}
			if len(f.Names) >= elems && elems > 1 {
				tr.names = f.Names[:elems]
			}
			if raw {
				tr.raw = make([][]plotter.XY, elems)
			} else {
				tr.min, tr.max = make([][]float64, elems), make([][]float64, elems)
				for e := range elems {
					tr.min[e] = make([]float64, traceBuckets)
					tr.max[e] = make([]float64, traceBuckets)
				}
				tr.has = make([]bool, traceBuckets)
			}
			out = append(out, tr)
		}
		cur, err := j.Samples(s.ID)
		if err != nil {
			return nil, nil, err
		}
		for cur.Next() {
			if err := ctx.Err(); err != nil {
				cur.Close()
				return nil, nil, err
			}
			b := cur.Batch()
			for fi := range s.Fields {
				tr := out[first+fi]
				all := b.FieldElems(fi)
				for k, t := range b.Times {
					x := clk.x(t)
					bucket := int(float64(t-clk.origin) / span * traceBuckets)
					bucket = min(max(bucket, 0), traceBuckets-1)
					for e := range tr.elems {
						v := b.Float64At(fi, k*all+e)
						if math.IsNaN(v) || math.IsInf(v, 0) {
							continue
						}
						if raw {
							tr.raw[e] = append(tr.raw[e], plotter.XY{X: x, Y: v})
							continue
						}
						if !tr.has[bucket] || v < tr.min[e][bucket] {
							tr.min[e][bucket] = v
						}
						if !tr.has[bucket] || v > tr.max[e][bucket] {
							tr.max[e][bucket] = v
						}
					}
					if !raw {
						tr.has[bucket] = true
					}
				}
			}
		}
		err = cur.Err()
		if cerr := cur.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, nil, fmt.Errorf("page: stream %s: %w", s.ID, err)
		}
	}
	if len(out) > maxTracePlots {
		notes = append(notes, fmt.Sprintf("%d sensor fields; the traces show the first %d", len(out), maxTracePlots))
		out = out[:maxTracePlots]
	}
	return out, notes, nil
}

// line returns element e's points: the samples, or per bucket its minimum
// and maximum (an envelope that keeps every spike visible).
func (tr *trace) line(e int, clk clock) plotter.XYs {
	if tr.raw != nil {
		return tr.raw[e]
	}
	width := float64(clk.end-clk.origin) / traceBuckets
	lo, hi := math.Inf(1), math.Inf(-1)
	for b := range traceBuckets {
		if tr.has[b] {
			lo, hi = math.Min(lo, tr.min[e][b]), math.Max(hi, tr.max[e][b])
		}
	}
	// A bucket whose spread is below what the plot can show is one point.
	flat := (hi - lo) / 300
	var pts plotter.XYs
	for b := range traceBuckets {
		if !tr.has[b] {
			continue
		}
		x := clk.x(clk.origin + int64((float64(b)+0.5)*width))
		mn, mx := tr.min[e][b], tr.max[e][b]
		if mx-mn <= flat {
			pts = append(pts, plotter.XY{X: x, Y: (mn + mx) / 2})
			continue
		}
		pts = append(pts, plotter.XY{X: x, Y: mn}, plotter.XY{X: x, Y: mx})
	}
	return pts
}

// traces plots every field under the episode windows, with the frames whose
// value was stale or back-filled marked along the bottom.
func traces(list []*trace, p *plan.Plan, rep *export.Report, clk clock) (template.HTML, error) {
	if len(list) == 0 {
		return "", nil
	}
	var episodes bands
	for _, ep := range p.Episodes {
		episodes.list = append(episodes.list, band{x0: clk.x(ep.Start), x1: clk.x(ep.End), fill: colEpisode})
	}
	var plots []*plot.Plot
	for i, tr := range list {
		pl := newPlot()
		pl.X.Min, pl.X.Max = 0, clk.x(clk.end)
		title := tr.stream + "." + tr.field
		if tr.unit != "" {
			title += " (" + tr.unit + ")"
		}
		pl.Title.Text = title
		pl.Title.Padding = vg.Points(2)
		pl.X.Tick.Marker = niceTicks{n: 12, hide: i < len(list)-1}
		pl.Y.Tick.Marker = niceTicks{n: 3}
		if i == len(list)-1 {
			pl.X.Label.Text = "session time (" + clk.axis.name + ")"
		}
		pl.Add(episodes)
		grid := plotter.NewGrid()
		grid.Vertical.Color = colGrid
		grid.Horizontal.Color = colGrid
		pl.Add(grid)
		for e := range tr.elems {
			pts := tr.line(e, clk)
			if len(pts) == 0 {
				continue
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return "", fmt.Errorf("page: trace %s: %w", title, err)
			}
			l.Color = traceColors[e%len(traceColors)]
			l.Width = vg.Points(0.8)
			pl.Add(l)
			if tr.names != nil {
				pl.Legend.Add(tr.names[e], l)
			}
		}
		pl.Legend.Top = true
		pl.Legend.XOffs = vg.Points(-4)
		pl.Legend.ThumbnailWidth = vg.Points(10)
		if rep != nil {
			if c := rep.Sensors[tr.stream]; c != nil {
				pl.Add(frameRuns(c.Runs, p, clk))
			}
		}
		plots = append(plots, pl)
	}
	h := vg.Points(float64(110*len(plots) + 24))
	names := make([]string, len(list))
	for i, tr := range list {
		names[i] = tr.stream + "." + tr.field
	}
	return svgOf("traces", "Sensor traces: "+strings.Join(names, ", "), vg.Points(900), h, plots...)
}

// frameRuns places stale and back-filled frame runs on the time axis.
func frameRuns(runs []export.FrameRun, p *plan.Plan, clk clock) rug {
	r := rug{height: vg.Points(5)}
	for _, run := range runs {
		if run.Episode < 0 || run.Episode >= len(p.Episodes) {
			continue
		}
		ep := p.Episodes[run.Episode]
		fill := colStale
		if run.State == export.RunBackFilled {
			fill = colBackFill
		}
		r.list = append(r.list, band{
			x0:   clk.x(lerobot.FrameTime(ep.Start, run.From, p.FPS)),
			x1:   clk.x(lerobot.FrameTime(ep.Start, run.From+run.Frames, p.FPS)),
			fill: fill,
		})
	}
	return r
}

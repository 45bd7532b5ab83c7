package page

import (
	"fmt"
	"html/template"
	"image/color"
	"io"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// CampaignPage is what the campaign page shows: one row per task of a batch,
// and the merges of their shards, if any. It is the page's own input, so
// that the batch runner fills it from its records without the page knowing
// their format.
type CampaignPage struct {
	ID     string
	Title  string // "" means the id
	Tasks  []CampaignTask
	Merges []CampaignMerge
	Notes  []string
}

// Task states the page knows how to colour; others show as they are.
const (
	StateSucceeded = "succeeded"
	StateFailed    = "failed"
	StateRunning   = "running"
	StatePending   = "pending"
	StateSkipped   = "skipped"
)

// CampaignTask is one task of a campaign (one case, setting and run).
type CampaignTask struct {
	TaskID, CaseID, SettingID, RunID string
	// State of the task's latest attempt.
	State string
	// Attempts made so far, oldest first.
	Attempts []CampaignAttempt
	// Episodes and Frames of the task's shard (0 without one).
	Episodes, Frames int
	// Page links the task's session page, relative to the campaign page
	// ("<task id>/ceres/report.html"); "" when there is none.
	Page string
	// Error of the latest attempt, "" when it succeeded.
	Error string
}

// CampaignAttempt is one execution of a task.
type CampaignAttempt struct {
	No         int
	State      string
	Start, End time.Time // zero when unknown
	ExitStatus int
	Error      string
}

// CampaignMerge describes one merged dataset of the campaign (batch merges
// one per setting).
type CampaignMerge struct {
	SettingID string
	Path      string // relative to the campaign page
	State     string
	Shards    int
	Episodes  int
	Frames    int
	Error     string
}

type campaignPage struct {
	CampaignPage
	Title           string
	Cards           []card
	Timeline, Chart template.HTML
	Rows            []campaignRow
	Legend          []legendItem
}

type campaignRow struct {
	CampaignTask
	Tries    int
	Duration string
}

// WriteCampaign renders the campaign page.
func WriteCampaign(w io.Writer, c *CampaignPage) error {
	pg := campaignPage{CampaignPage: *c, Title: c.Title}
	if pg.Title == "" {
		pg.Title = "Campaign " + c.ID
	}
	var episodes, frames, failedAttempts, attempts int
	states := map[string]int{}
	var total time.Duration
	for _, t := range c.Tasks {
		episodes += t.Episodes
		frames += t.Frames
		attempts += len(t.Attempts)
		states[t.State]++
		row := campaignRow{CampaignTask: t, Tries: len(t.Attempts)}
		for _, a := range t.Attempts {
			if a.State == StateFailed {
				failedAttempts++
			}
		}
		if n := len(t.Attempts); n > 0 {
			if d := attemptDuration(t.Attempts[n-1]); d > 0 {
				row.Duration = d.Round(100 * time.Millisecond).String()
				total += d
			}
		}
		pg.Rows = append(pg.Rows, row)
	}
	pg.Cards = []card{
		{"tasks", fmt.Sprint(len(c.Tasks)), fmt.Sprintf("%d succeeded, %d failed", states[StateSucceeded], states[StateFailed])},
		{"attempts", fmt.Sprint(attempts), fmt.Sprintf("%d failed", failedAttempts)},
		{"episodes", fmt.Sprint(episodes), fmt.Sprintf("%d frames", frames)},
		{"export time", total.Round(time.Second).String(), "latest attempt of each task, summed"},
	}
	if len(c.Merges) > 0 {
		var eps, shards int
		for _, m := range c.Merges {
			eps += m.Episodes
			shards += m.Shards
		}
		pg.Cards = append(pg.Cards, card{"merged", fmt.Sprint(eps), fmt.Sprintf("episodes from %d shards in %d datasets", shards, len(c.Merges))})
	}
	var err error
	if pg.Chart, err = caseChart(c.Tasks); err != nil {
		return err
	}
	if pg.Timeline, err = attemptTimeline(c.Tasks); err != nil {
		return err
	}
	pg.Legend = []legendItem{{Name: "succeeded", Color: "accepted"}, {Name: "failed", Color: "incomplete"}, {Name: "other", Color: "empty"}}
	return pageTemplates.ExecuteTemplate(w, "campaign.html", pg)
}

func attemptDuration(a CampaignAttempt) time.Duration {
	if a.Start.IsZero() || a.End.IsZero() {
		return 0
	}
	return a.End.Sub(a.Start)
}

// caseChart draws, per case, its episodes and its failed attempts as two
// bar charts side by side (their scales differ by orders of magnitude).
func caseChart(tasks []CampaignTask) (template.HTML, error) {
	var cases []string
	episodes, failures := map[string]float64{}, map[string]float64{}
	for _, t := range tasks {
		if !slices.Contains(cases, t.CaseID) {
			cases = append(cases, t.CaseID)
		}
		episodes[t.CaseID] += float64(t.Episodes)
		for _, a := range t.Attempts {
			if a.State == StateFailed {
				failures[t.CaseID]++
			}
		}
	}
	if len(cases) == 0 {
		return "", nil
	}
	bar := func(title string, values map[string]float64, fill color.Color) (*plot.Plot, error) {
		p := newPlot()
		p.Title.Text = title
		vs := make(plotter.Values, len(cases))
		for i, c := range cases {
			vs[i] = values[c]
		}
		width := vg.Points(min(36, 360/float64(len(cases))))
		b, err := plotter.NewBarChart(vs, width)
		if err != nil {
			return nil, err
		}
		b.Color = fill
		b.LineStyle.Width = 0
		grid := plotter.NewGrid()
		grid.Vertical.Color = nil // no line; see newPlot
		grid.Horizontal.Color = colGrid
		p.Add(grid, b)
		p.NominalX(cases...)
		p.X.Min, p.X.Max = -0.6, float64(len(cases))-0.4
		p.Y.Tick.Marker = niceTicks{n: 4, integer: true}
		p.Y.Min = 0
		if p.Y.Max < 1 {
			p.Y.Max = 1
		}
		if len(cases) > 6 {
			p.X.Tick.Label.Rotation = 0.6
			p.X.Tick.Label.XAlign = draw.XRight
			p.X.Tick.Label.YAlign = draw.YCenter
		}
		return p, nil
	}
	pe, err := bar("episodes per case", episodes, colAccepted)
	if err != nil {
		return "", err
	}
	pf, err := bar("failed attempts per case", failures, colIncomplete)
	if err != nil {
		return "", err
	}
	return svgSideBySide("cases", "Episodes and failed attempts per case", vg.Points(900), vg.Points(230), pe, pf)
}

// attemptTimeline draws every task's attempts on wall-clock time, coloured
// by state; tasks without timings are left out.
func attemptTimeline(tasks []CampaignTask) (template.HTML, error) {
	var t0, t1 time.Time
	for _, t := range tasks {
		for _, a := range t.Attempts {
			if a.Start.IsZero() || a.End.IsZero() {
				continue
			}
			if t0.IsZero() || a.Start.Before(t0) {
				t0 = a.Start
			}
			if a.End.After(t1) {
				t1 = a.End
			}
		}
	}
	if t0.IsZero() {
		return "", nil
	}
	axis := timeAxisFor(t1.Sub(t0).Seconds())
	p := newPlot()
	p.X.Label.Text = "campaign time (" + axis.name + ")"
	p.X.Tick.Marker = niceTicks{n: 12}
	var names []string
	var bars spans
	for i, t := range tasks {
		lane := float64(len(tasks) - 1 - i)
		names = append(names, fmt.Sprintf("%s · %s · run %s", t.CaseID, t.SettingID, t.RunID))
		for _, a := range t.Attempts {
			if a.Start.IsZero() || a.End.IsZero() {
				continue
			}
			fill := color.Color(colEmpty)
			switch a.State {
			case StateSucceeded:
				fill = colAccepted
			case StateFailed:
				fill = colIncomplete
			}
			bars = append(bars, span{
				x0: a.Start.Sub(t0).Seconds() / axis.div, x1: a.End.Sub(t0).Seconds() / axis.div,
				lane: lane, height: 0.55, fill: fill,
			})
		}
	}
	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil // no line; see newPlot
	grid.Vertical.Color = colGrid
	p.Add(grid, bars)
	slices.Reverse(names)
	p.NominalY(names...)
	p.Y.Padding = laneLabelPadding
	p.Y.Min, p.Y.Max = -0.6, float64(len(tasks))-0.4
	p.X.Min, p.X.Max = 0, t1.Sub(t0).Seconds()/axis.div
	h := vg.Points(float64(18*len(tasks) + 50))
	return svgOf("timeline", "Attempts of every task over the campaign, by state", vg.Points(900), h, p)
}

// svgSideBySide draws two plots next to each other in one SVG.
func svgSideBySide(id, title string, w, h vg.Length, left, right *plot.Plot) (template.HTML, error) {
	return svgTiles(id, title, w, h, [][]*plot.Plot{{left, right}})
}

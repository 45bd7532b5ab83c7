package page

import (
	"image/color"
	"strings"
	"testing"
	"time"
)

// TestChartsWriteNoInvalidColour renders every chart that asks for "no
// colour" (the plot background, hidden grid lines, unfilled cycle bands)
// and checks the SVG names no colour with a minus sign: gonum's SVG
// backend divides by a colour's alpha, so a zero-alpha colour that reaches
// it comes out as fill:#-8000000000000000... on amd64 (and black on arm64).
func TestChartsWriteNoInvalidColour(t *testing.T) {
	t0 := time.Date(2024, 5, 1, 9, 0, 0, 0, time.UTC)
	tasks := []CampaignTask{
		{TaskID: "t1", CaseID: "pick", SettingID: "lab", State: "done", Episodes: 2, Frames: 300,
			Attempts: []CampaignAttempt{{No: 1, State: "done", Start: t0, End: t0.Add(90 * time.Second)}}},
		{TaskID: "t2", CaseID: "place", SettingID: "lab", State: "failed",
			Attempts: []CampaignAttempt{{No: 1, State: "failed", Start: t0.Add(2 * time.Minute), End: t0.Add(3 * time.Minute), ExitStatus: 1}}},
	}
	tests := []struct {
		name   string
		render func() (string, error)
	}{
		{"transparent and nil bands", func() (string, error) {
			p := newPlot()
			p.Add(bands{list: []band{
				{x0: 0, x1: 1, fill: color.Transparent},
				{x0: 1, x1: 2, fill: colGrid},
				{x0: 2, x1: 3},
				{x0: 3, x1: 4, fill: color.RGBA{}},
			}})
			svg, err := svgOf("bands", "bands", 200, 100, p)
			return string(svg), err
		}},
		{"campaign case chart", func() (string, error) {
			svg, err := caseChart(tasks)
			return string(svg), err
		}},
		{"campaign attempt timeline", func() (string, error) {
			svg, err := attemptTimeline(tasks)
			return string(svg), err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svg, err := tt.render()
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if !strings.Contains(svg, "<svg") {
				t.Fatalf("no SVG rendered: %.200q", svg)
			}
			if i := strings.Index(svg, "#-"); i >= 0 {
				t.Errorf("invalid colour in the SVG: %q", svg[max(0, i-40):min(len(svg), i+60)])
			}
		})
	}
}

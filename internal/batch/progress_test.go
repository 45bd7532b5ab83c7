package batch

import (
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
)

// The progress lines of a run: one for the run, with the tasks ended by
// outcome and those running, then one per running task.
func TestProgressLines(t *testing.T) {
	p := NewProgress(3)
	a, b := campaign.Task{ID: "a"}, campaign.Task{ID: "b"}
	p.Start(a)
	p.Start(b)
	p.Done(TaskResult{Task: a, Outcome: OutcomeExported})
	lines := p.Lines()
	if len(lines) != 2 {
		t.Fatalf("lines %q, want 2", lines)
	}
	if !strings.HasPrefix(lines[0], "campaign: 1/3 tasks (33%)") || !strings.HasSuffix(lines[0], " [1 "+OutcomeExported+"], 1 running") {
		t.Errorf("run line %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "task b: running for ") {
		t.Errorf("task line %q", lines[1])
	}
}

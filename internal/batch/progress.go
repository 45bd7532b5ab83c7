package batch

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/export"
)

// Progress is how far a run is, for its progress lines: Start and Done
// are Options.OnStart and OnDone's, Lines the lines.
type Progress struct {
	mu       sync.Mutex
	total    int
	began    time.Time
	running  map[string]time.Time
	outcomes map[string]int
	ended    int
}

// NewProgress is the progress of a run of total tasks, begun now.
func NewProgress(total int) *Progress {
	return &Progress{total: total, began: time.Now(), running: map[string]time.Time{}, outcomes: map[string]int{}}
}

// Start says that the task started.
func (p *Progress) Start(t campaign.Task) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running[t.ID] = time.Now()
}

// Done says that a task ended, with r.
func (p *Progress) Done(r TaskResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.running, r.Task.ID)
	p.outcomes[r.Outcome]++
	p.ended++
}

// Lines is one line for the run (tasks ended, by outcome, rate, time
// left) and one per running task with how long it has run.
func (p *Progress) Lines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var by []string
	for _, k := range slices.Sorted(maps.Keys(p.outcomes)) {
		by = append(by, fmt.Sprintf("%d %s", p.outcomes[k], k))
	}
	line := "campaign: " + export.RateLine(p.ended, p.total, "tasks", time.Since(p.began))
	if len(by) > 0 {
		line += " [" + strings.Join(by, ", ") + "]"
	}
	line += fmt.Sprintf(", %d running", len(p.running))
	out := []string{line}
	for _, id := range slices.Sorted(maps.Keys(p.running)) {
		out = append(out, fmt.Sprintf("task %s: running for %s", id, time.Since(p.running[id]).Round(time.Second)))
	}
	return out
}

package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/ceres-robotics/ceres-export/internal/export"
)

// progressBars draws one bar per stage on a terminal. Anywhere else (a
// SLURM or Kubernetes log, CI) a bar would be noise, and silence looks like
// a hang: it prints a line per running stage every `every` instead (what,
// how far, rate, time left).
type progressBars struct {
	w      io.Writer
	tty    bool
	mu     sync.Mutex
	bars   map[string]*progressbar.ProgressBar
	stages map[string]*stageProgress
	stop   func()
}

// stageProgress is how far one stage is, for the progress lines.
type stageProgress struct {
	total, done int
	start       time.Time
}

var _ export.Progress = (*progressBars)(nil)

func newProgressBars(w io.Writer, every time.Duration) *progressBars {
	p := &progressBars{w: w, tty: isTerminal(w), bars: map[string]*progressbar.ProgressBar{}, stages: map[string]*stageProgress{}}
	if !p.tty {
		p.stop = progressLines(w, every, p.lines)
	}
	return p
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// lines are the progress lines of the running stages, by name.
func (p *progressBars) lines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for name, st := range p.stages {
		out = append(out, fmt.Sprintf("%s: %s", name, export.RateLine(st.done, st.total, "frames", time.Since(st.start))))
	}
	sort.Strings(out)
	return out
}

// progressLines prints "progress: LINE" for each of lines() every `every`
// until the returned stop is called; every <= 0 prints nothing.
func progressLines(w io.Writer, every time.Duration, lines func() []string) (stop func()) {
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				for _, l := range lines() {
					fmt.Fprintf(w, "progress: %s\n", l)
				}
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }
}

func (p *progressBars) Stage(name string, total int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty {
		p.stages[name] = &stageProgress{total: total, start: time.Now()}
		return
	}
	p.bars[name] = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(name),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("frames"),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
	)
}

func (p *progressBars) Set(name string, done int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if st := p.stages[name]; st != nil {
		st.done = done
	}
	if b := p.bars[name]; b != nil {
		_ = b.Set(done)
	}
}

func (p *progressBars) Done(name string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.stages, name)
	if b := p.bars[name]; b != nil {
		_ = b.Finish()
		delete(p.bars, name)
	}
}

func (p *progressBars) close() {
	if p == nil {
		return
	}
	if p.stop != nil {
		p.stop()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, b := range p.bars {
		_ = b.Finish()
		delete(p.bars, name)
	}
}

// followProgress says what a followed export is doing: on a terminal one
// line kept up to date, elsewhere a line every `every`.
type followProgress struct {
	w    io.Writer
	tty  bool
	mu   sync.Mutex
	st   export.FollowStatus
	has  bool
	last time.Time
	stop func()
}

func newFollowProgress(w io.Writer, every time.Duration) *followProgress {
	p := &followProgress{w: w, tty: isTerminal(w)}
	if !p.tty {
		p.stop = progressLines(w, every, func() []string {
			p.mu.Lock()
			defer p.mu.Unlock()
			if !p.has {
				return nil
			}
			return []string{followLine(p.st)}
		})
	}
	return p
}

func (p *followProgress) set(st export.FollowStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty && st.Ended && !p.st.Ended {
		// The end of the session is news: said at once, not at the next tick.
		fmt.Fprintf(p.w, "progress: %s\n", followLine(st))
	}
	p.st, p.has = st, true
	if p.tty && time.Since(p.last) >= 500*time.Millisecond {
		p.last = time.Now()
		fmt.Fprintf(p.w, "\r\x1b[K%s", followLine(st))
	}
}

func (p *followProgress) close() {
	if p.stop != nil {
		p.stop()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && !p.last.IsZero() {
		fmt.Fprintf(p.w, "\r\x1b[K%s\n", followLine(p.st))
	}
}

// followLine is one line of where a followed export stands.
func followLine(st export.FollowStatus) string {
	if st.Waiting {
		return "follow: waiting for the session's journal"
	}
	line := fmt.Sprintf("follow: session at %.1f s; %d episodes encoded, %d pending, %d attempts open",
		float64(st.SessionTime)/1e9, st.Encoded, st.Pending, st.Open)
	if st.Speed > 0 {
		line += fmt.Sprintf("; encoder %.2g× real time", st.Speed)
	}
	if st.Pending > 0 {
		line += fmt.Sprintf("; %.1f s behind", float64(st.Behind)/1e9)
	}
	if st.Ended {
		line += "; session ended, committing"
	}
	return line
}

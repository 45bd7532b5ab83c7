// Package progress is what the commands show of long work on stderr: on a
// terminal a bar per export stage, or one line kept up to date while an
// export follows a session; anywhere else (a SLURM or Kubernetes log, CI),
// where a bar would be noise and silence looks like a hang, a
// "progress: ..." line per running stage at a steady pace (what, how far,
// rate, time left). The export, follow and batch libraries drive it
// through export.Progress, export.FollowStatus and their Lines.
package progress

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

// DefaultEvery is the pace of progress lines in logs: often enough that a
// log shows the work moving, rarely enough to stay readable.
const DefaultEvery = 10 * time.Second

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Lines prints "progress: LINE" on w for each of lines() every `every`
// until the returned stop is called; every <= 0 prints nothing.
func Lines(w io.Writer, every time.Duration, lines func() []string) (stop func()) {
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

// Bars shows an export's stages: a bar per stage on a terminal, elsewhere
// progress lines every `every`. A nil *Bars shows nothing.
type Bars struct {
	w      io.Writer
	tty    bool
	mu     sync.Mutex
	bars   map[string]*progressbar.ProgressBar
	stages map[string]*stage
	stop   func()
}

// stage is how far one stage is, for the progress lines.
type stage struct {
	total, done int
	start       time.Time
}

var _ export.Progress = (*Bars)(nil)

// NewBars shows stages on w; Close stops it.
func NewBars(w io.Writer, every time.Duration) *Bars {
	p := &Bars{w: w, tty: IsTerminal(w), bars: map[string]*progressbar.ProgressBar{}, stages: map[string]*stage{}}
	if !p.tty {
		p.stop = Lines(w, every, p.lines)
	}
	return p
}

// lines are the progress lines of the running stages, by name.
func (p *Bars) lines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for name, st := range p.stages {
		out = append(out, fmt.Sprintf("%s: %s", name, export.RateLine(st.done, st.total, "frames", time.Since(st.start))))
	}
	sort.Strings(out)
	return out
}

// Stage starts the stage name of total frames.
func (p *Bars) Stage(name string, total int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty {
		p.stages[name] = &stage{total: total, start: time.Now()}
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

// Set says that done frames of the stage name are done.
func (p *Bars) Set(name string, done int) {
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

// Done ends the stage name.
func (p *Bars) Done(name string) {
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

// Close stops the lines and finishes the bars.
func (p *Bars) Close() {
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

// Follow says what a followed export is doing: on a terminal one line
// kept up to date, elsewhere a line every `every`.
type Follow struct {
	w    io.Writer
	tty  bool
	mu   sync.Mutex
	st   export.FollowStatus
	has  bool
	last time.Time
	stop func()
}

// NewFollow shows a follow's status on w; Close stops it.
func NewFollow(w io.Writer, every time.Duration) *Follow {
	p := &Follow{w: w, tty: IsTerminal(w)}
	if !p.tty {
		p.stop = Lines(w, every, func() []string {
			p.mu.Lock()
			defer p.mu.Unlock()
			if !p.has {
				return nil
			}
			return []string{FollowLine(p.st)}
		})
	}
	return p
}

// Set is export.FollowOptions.Status: where the follow stands now.
func (p *Follow) Set(st export.FollowStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty && st.Ended && !p.st.Ended {
		// The end of the session is news: said at once, not at the next tick.
		fmt.Fprintf(p.w, "progress: %s\n", FollowLine(st))
	}
	p.st, p.has = st, true
	if p.tty && time.Since(p.last) >= 500*time.Millisecond {
		p.last = time.Now()
		fmt.Fprintf(p.w, "\r\x1b[K%s", FollowLine(st))
	}
}

// Close stops the lines and ends the terminal's line.
func (p *Follow) Close() {
	if p.stop != nil {
		p.stop()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && !p.last.IsZero() {
		fmt.Fprintf(p.w, "\r\x1b[K%s\n", FollowLine(p.st))
	}
}

// FollowLine is one line of where a followed export stands.
func FollowLine(st export.FollowStatus) string {
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

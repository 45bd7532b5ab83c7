package main

import (
	"io"
	"os"
	"sync"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/ceres-robotics/ceres-export/internal/export"
)

// progressBars draws one bar per stage on a terminal; on anything else it
// draws nothing, so logs and CI output stay clean.
type progressBars struct {
	w    io.Writer
	tty  bool
	mu   sync.Mutex
	bars map[string]*progressbar.ProgressBar
}

var _ export.Progress = (*progressBars)(nil)

func newProgressBars(w io.Writer) *progressBars {
	f, ok := w.(*os.File)
	return &progressBars{w: w, tty: ok && term.IsTerminal(int(f.Fd())), bars: map[string]*progressbar.ProgressBar{}}
}

func (p *progressBars) Stage(name string, total int) {
	if p == nil || !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
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
	if p == nil || !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if b := p.bars[name]; b != nil {
		_ = b.Set(done)
	}
}

func (p *progressBars) Done(name string) {
	if p == nil || !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if b := p.bars[name]; b != nil {
		_ = b.Finish()
		delete(p.bars, name)
	}
}

func (p *progressBars) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, b := range p.bars {
		_ = b.Finish()
		delete(p.bars, name)
	}
}

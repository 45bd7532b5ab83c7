package progress

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/export"
)

// buffer is a bytes.Buffer the ticker's goroutine and the test share.
type buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Lines prints every line at each tick and nothing once stopped; a pace of
// 0 prints nothing at all.
func TestLines(t *testing.T) {
	var w buffer
	stop := Lines(&w, 5*time.Millisecond, func() []string { return []string{"a: 1", "b: 2"} })
	time.Sleep(40 * time.Millisecond)
	stop()
	got := w.String()
	if n := strings.Count(got, "progress: a: 1\nprogress: b: 2\n"); n < 2 {
		t.Errorf("%d ticks in 40ms at 5ms, want several:\n%s", n, got)
	}
	time.Sleep(15 * time.Millisecond)
	if after := w.String(); after != got {
		t.Errorf("lines after stop:\n%s", strings.TrimPrefix(after, got))
	}
	stop() // a second stop is harmless
	var none buffer
	Lines(&none, 0, func() []string { return []string{"x"} })()
	if none.String() != "" {
		t.Errorf("every 0 printed %q", none.String())
	}
}

// Off a terminal, Bars prints a line per running stage, sorted, with its
// count and rate; a finished stage has none, and a nil *Bars is silent.
func TestBarsLines(t *testing.T) {
	var w buffer
	p := NewBars(&w, time.Hour)
	p.Stage("rows", 10)
	p.Stage("encode front", 200)
	p.Set("encode front", 50)
	p.Set("rows", 10)
	p.Done("rows")
	lines := p.lines()
	p.Close()
	if len(lines) != 1 || !regexp.MustCompile(`^encode front: 50/200 frames \(25%\)`).MatchString(lines[0]) {
		t.Errorf("lines %q, want encode front's alone", lines)
	}
	var nilBars *Bars
	nilBars.Stage("x", 1)
	nilBars.Set("x", 1)
	nilBars.Done("x")
	nilBars.Close()
}

// Off a terminal, the end of a followed session is said at once, not at
// the next tick, and once.
func TestFollowSaysTheEndAtOnce(t *testing.T) {
	var w buffer
	p := NewFollow(&w, time.Hour)
	p.Set(export.FollowStatus{SessionTime: 1e9})
	p.Set(export.FollowStatus{SessionTime: 2e9, Ended: true})
	p.Set(export.FollowStatus{SessionTime: 2e9, Ended: true})
	p.Close()
	want := "progress: follow: session at 2.0 s; 0 episodes encoded, 0 pending, 0 attempts open; session ended, committing\n"
	if got := w.String(); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// The follow's progress line says what an operator needs.
func TestFollowLine(t *testing.T) {
	for _, c := range []struct {
		st   export.FollowStatus
		want string
	}{
		{export.FollowStatus{Waiting: true}, "follow: waiting for the session's journal"},
		{export.FollowStatus{SessionTime: 12_340_000_000, Episodes: 3, Encoded: 2, Pending: 1, Open: 1, Speed: 3.5, Behind: 1_500_000_000},
			"follow: session at 12.3 s; 2 episodes encoded, 1 pending, 1 attempts open; encoder 3.5× real time; 1.5 s behind"},
		{export.FollowStatus{SessionTime: 60_000_000_000, Episodes: 8, Encoded: 8, Ended: true, Speed: 12},
			"follow: session at 60.0 s; 8 episodes encoded, 0 pending, 0 attempts open; encoder 12× real time; session ended, committing"},
	} {
		if got := FollowLine(c.st); got != c.want {
			t.Errorf("FollowLine(%+v)\n got %q\nwant %q", c.st, got, c.want)
		}
	}
}

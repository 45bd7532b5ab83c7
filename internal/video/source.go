package video

import (
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"sync"

	"github.com/asticode/go-astiav"

	"github.com/ceres-robotics/ceres-export/internal/input"
)

// maxTrailingBytes is how many bytes may follow the last packet of a
// complete file (block headers, end elements) before the file counts as cut.
const maxTrailingBytes = 64

// heldFrame is a decoded source frame kept for selection.
type heldFrame struct {
	frame *astiav.Frame // own reference
	t     *big.Rat      // journal time, ns
	ref   SourceRef
	seq   int // decode order over all sources
	// colour is what the frame's samples mean (sourceColour).
	colour Colour
}

func (h *heldFrame) free() {
	if h != nil && h.frame != nil {
		h.frame.Free()
		h.frame = nil
	}
}

// sourceCursor yields the frames of a camera's files in order, with
// strictly increasing journal times.
type sourceCursor struct {
	sources []Source
	threads int
	reports []SourceReport
	cur     int
	dec     *decoder
	seq     int
	last    *big.Rat
	tbNs    *big.Rat // current file's time base × 1e9
	start   *big.Rat
	// stop ends waits for a growing file (the prefetcher's stop).
	stop <-chan struct{}
	// more, when set, returns the camera's files so far (sources is a
	// prefix of them) and whether that list is final (ExportOptions.MoreSources).
	more func() ([]Source, bool)
	// prints identify the bytes read of every file that might still change
	// (a Source with Final), in order; curPrint is the current file's when
	// it was read whole.
	prints   []ReadPrint
	curPrint *ReadPrint
}

func newSourceCursor(sources []Source, threads int) *sourceCursor {
	c := &sourceCursor{sources: sources, threads: threads, reports: make([]SourceReport, len(sources))}
	for i, s := range sources {
		c.reports[i] = SourceReport{Path: s.Path, NotDecoded: true}
		if st, err := os.Stat(s.Path); err == nil {
			c.reports[i].Size = st.Size()
		}
	}
	return c
}

// next returns the next source frame, or io.EOF after the last file.
func (c *sourceCursor) next() (*heldFrame, error) {
	for {
		if c.cur >= len(c.sources) {
			more, err := c.refill()
			if err != nil {
				return nil, err
			}
			if !more {
				return nil, io.EOF
			}
			continue
		}
		if c.dec == nil {
			src := c.sources[c.cur]
			var grow *growingFile
			if src.Final != nil {
				var err error
				if grow, err = awaitSource(src.Path, src.Final, c.stop); err != nil {
					return nil, fmt.Errorf("source %d: %s: %w", c.cur, src.Path, err)
				}
				if grow == nil {
					// Complete: FFmpeg reads it itself; what it reads is the
					// file as it is now.
					p, err := printFile(src.Path)
					if err != nil {
						return nil, fmt.Errorf("source %d: %w", c.cur, err)
					}
					c.curPrint = &p
				}
			}
			d, err := openGrowingDecoder(src.Path, grow, c.threads)
			if err != nil {
				return nil, fmt.Errorf("source %d: %w", c.cur, err)
			}
			c.dec = d
			rep := &c.reports[c.cur]
			rep.NotDecoded = false
			rep.TimeBase = rationalOf(d.tb)
			c.tbNs = new(big.Rat).SetFrac64(int64(d.tb.Num())*1e9, int64(d.tb.Den()))
			c.start = new(big.Rat).SetInt64(c.sources[c.cur].StartT)
		}
		f, pts, err := c.dec.next()
		rep := &c.reports[c.cur]
		if errors.Is(err, io.EOF) {
			c.finishFile()
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("source %d: %w", c.cur, err)
		}
		t := new(big.Rat).SetInt64(pts)
		t.Mul(t, c.tbNs)
		t.Add(t, c.start)
		if c.last != nil && t.Cmp(c.last) <= 0 {
			rep.Dropped++
			continue
		}
		if rep.Frames == 0 {
			rep.FirstPTS = pts
		}
		rep.Frames++
		rep.LastPTS = pts
		c.last = t
		h := &heldFrame{frame: astiav.AllocFrame(), t: t, ref: SourceRef{Source: c.cur, PTS: pts}, seq: c.seq,
			colour: sourceColour(f, c.dec.stream.CodecParameters())}
		if err := h.frame.Ref(f); err != nil {
			h.free()
			return nil, fmt.Errorf("source %d: ref frame: %w", c.cur, err)
		}
		c.seq++
		return h, nil
	}
}

// refill waits, when the sources may still grow (more is set), until more
// holds another file or says the list is final; false: no more files.
func (c *sourceCursor) refill() (bool, error) {
	if c.more == nil {
		return false, nil
	}
	for {
		srcs, final := c.more()
		if len(srcs) > len(c.sources) {
			for _, s := range srcs[len(c.sources):] {
				c.sources = append(c.sources, s)
				c.reports = append(c.reports, SourceReport{Path: s.Path, NotDecoded: true})
			}
			return true, nil
		}
		if final {
			return false, nil
		}
		if err := wait(c.stop); err != nil {
			return false, err
		}
	}
}

func (c *sourceCursor) finishFile() {
	rep := &c.reports[c.cur]
	d := c.dec
	// A file that grew while it was read (a followed session's) is judged
	// at the size it ended with.
	if st, err := os.Stat(rep.Path); err == nil {
		rep.Size = st.Size()
	}
	rep.Packets = d.packets
	rep.BytesRead = d.bytesRead
	rep.Complete = true
	c.takePrint()
	switch {
	case d.readErr != nil:
		rep.Truncated, rep.Err = true, d.readErr.Error()
	case d.decodeErr != nil:
		rep.Truncated, rep.Err = true, d.decodeErr.Error()
	default:
		rep.Truncated, rep.Err = cutShort(rep.Path, rep.Size, rep.BytesRead)
	}
	d.close()
	c.dec = nil
	c.cur++
}

// takePrint keeps the ReadPrint of the current file, if it has one.
func (c *sourceCursor) takePrint() {
	switch {
	case c.dec != nil && c.dec.grow != nil:
		c.prints = append(c.prints, c.dec.grow.print())
	case c.curPrint != nil:
		c.prints = append(c.prints, *c.curPrint)
	}
	c.curPrint = nil
}

func (c *sourceCursor) close() {
	if c.dec != nil {
		c.takePrint()
		rep := &c.reports[c.cur]
		rep.Packets = c.dec.packets
		rep.BytesRead = c.dec.bytesRead
		c.dec.close()
		c.dec = nil
	}
}

// prefetcher runs a sourceCursor on its own goroutine, a few frames ahead,
// so that decoding overlaps encoding. At most depth frames wait in the
// channel.
type prefetcher struct {
	c    *sourceCursor
	ch   chan prefetched
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

type prefetched struct {
	h   *heldFrame
	err error
}

func startPrefetch(c *sourceCursor, depth int) *prefetcher {
	p := &prefetcher{c: c, ch: make(chan prefetched, depth), stop: make(chan struct{}), done: make(chan struct{})}
	c.stop = p.stop
	go func() {
		defer close(p.done)
		defer close(p.ch)
		for {
			h, err := c.next()
			select {
			case p.ch <- prefetched{h, err}:
			case <-p.stop:
				h.free()
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return p
}

// next returns the next source frame, or io.EOF after the last.
func (p *prefetcher) next() (*heldFrame, error) {
	r, ok := <-p.ch
	if !ok {
		return nil, io.EOF
	}
	return r.h, r.err
}

// close stops the goroutine, frees what it decoded ahead and closes the
// cursor; the cursor's reports are safe to read afterwards.
func (p *prefetcher) close() {
	p.once.Do(func() {
		close(p.stop)
		for r := range p.ch {
			r.h.free()
		}
		<-p.done
		p.c.close()
	})
}

// cutShort decides whether a file the demuxer read to a plain EOF is cut
// short. FFmpeg's Matroska demuxer ends a cut file with a plain EOF (it only
// logs "File ended prematurely"), so the container's own element sizes are
// the evidence; bytes after the last packet (Cues, a trailing moov) are not.
// Only where the structure cannot tell (an element of unknown size) do more
// than maxTrailingBytes after the last whole packet count as a cut.
func cutShort(path string, size, bytesRead int64) (bool, string) {
	if f, err := input.Open(path); err == nil {
		cut, known, why := containerCut(f, size)
		f.Close()
		if known {
			if cut {
				return true, fmt.Sprintf("%s: %s: file cut short", path, why)
			}
			return false, ""
		}
	}
	if size-bytesRead > maxTrailingBytes {
		return true, fmt.Sprintf("%s: %d bytes after the last whole packet (ends at byte %d): file cut short",
			path, size-bytesRead, bytesRead)
	}
	return false, ""
}

package verify

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/ceres-robotics/ceres-export/internal/profile"
)

// checker holds what one verification has read so far.
type checker struct {
	ctx  context.Context
	dir  string
	opts Options
	res  *Result
	// counts of findings per (code, file), and those left out by MaxPerCode.
	counts  map[string]int
	omitted []omission

	info     *shardInfo            // nil when info.json is unusable
	files    []string              // every regular file, shard-relative, slash-separated, sorted
	data     *dataSet              // nil when no data file could be read
	episodes *episodeSet           // nil when no episodes file could be read
	tasks    []string              // task strings by task_index; nil when unreadable
	specs    map[string][]byte     // stored specifications by hash (name)
	videos   map[string]*videoFile // by shard-relative path; nil when the video check did not run
	profile  *profile.Profile      // ceres/profile.json; nil when absent or unusable

	// ceresColumns are the ceres/* episode columns every dataset has and
	// their Arrow types, nullCeres those that may be null, and
	// sourceColumns a merged dataset's ceres/source/* columns: the layout's,
	// as it is when the check starts (ceresColumnTypes).
	ceresColumns, sourceColumns map[string]arrow.DataType
	nullCeres                   map[string]bool

	// journalRows are the episodes compared with Options.Journal (in a
	// merged dataset those of that session) and journalReport the export
	// report holding their feature mappings.
	journalRows   []*episodeRow
	journalReport string
}

type omission struct {
	code, severity, file string
	n                    int
}

// loc locates a finding.
type loc struct {
	episode, row, frame *int64
}

func ep(e int64) loc               { return loc{episode: &e} }
func epRow(e, r int64) loc         { return loc{episode: &e, row: &r} }
func row(r int64) loc              { return loc{row: &r} }
func epFrame(e int64, f int64) loc { return loc{episode: &e, frame: &f} }
func frameLoc(f int64) loc         { return loc{frame: &f} }

// add records a finding, unless MaxPerCode findings of its code were already
// listed for its file.
func (c *checker) add(sev, code, file string, l loc, format string, args ...any) {
	key := code + "\x00" + file
	c.counts[key]++
	if c.counts[key] > c.opts.MaxPerCode {
		if c.counts[key] == c.opts.MaxPerCode+1 {
			c.omitted = append(c.omitted, omission{code: code, severity: sev, file: file})
		}
		c.omitted[c.omissionIndex(code, file)].n++
		return
	}
	c.res.Findings = append(c.res.Findings, Finding{
		Code: code, Severity: sev, File: file,
		Episode: l.episode, Row: l.row, Frame: l.frame,
		Message: fmt.Sprintf(format, args...),
	})
}

func (c *checker) omissionIndex(code, file string) int {
	for i := range c.omitted {
		if c.omitted[i].code == code && c.omitted[i].file == file {
			return i
		}
	}
	return -1
}

func (c *checker) errorf(code, file string, l loc, format string, args ...any) {
	c.add(SeverityError, code, file, l, format, args...)
}

func (c *checker) warnf(code, file string, l loc, format string, args ...any) {
	c.add(SeverityWarning, code, file, l, format, args...)
}

func (c *checker) notef(code, file string, l loc, format string, args ...any) {
	c.add(SeverityNote, code, file, l, format, args...)
}

// flushCounts appends one finding per code and file that MaxPerCode cut.
func (c *checker) flushCounts() {
	for _, o := range c.omitted {
		c.res.Findings = append(c.res.Findings, Finding{
			Code: o.code, Severity: o.severity, File: o.file,
			Message: fmt.Sprintf("%d more findings of this code in this file not listed", o.n),
		})
	}
}

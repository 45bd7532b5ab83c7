package verify

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

var cardMergedRe = regexp.MustCompile(`merged by ceres-export \S* ?from (\d+) shards of (\d+) sessions: (\d+) episodes, (\d+) frames at (\d+) fps, (\d+) tasks\.`)

// cardTable returns the rows of the markdown table whose header row is
// header (cells as written, unescaped), or nil and false when the card has
// no such table.
func cardTable(body, header string) ([][]string, bool) {
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		if l != header {
			continue
		}
		var rows [][]string
		for _, r := range lines[min(i+2, len(lines)):] {
			if !strings.HasPrefix(r, "|") {
				break
			}
			rows = append(rows, tableCells(r))
		}
		return rows, true
	}
	return nil, false
}

// tableCells splits a markdown table row on its unescaped pipes and drops
// each escaping backslash (shard.MarkdownCell's inverse).
func tableCells(row string) []string {
	var cells []string
	var cur strings.Builder
	escaped := false
	for _, r := range strings.TrimSpace(row) {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\':
			escaped = true
		case r == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteRune(r)
		}
	}
	// The row starts and ends with a pipe: drop the empty ends.
	if len(cells) > 0 {
		cells = cells[1:]
	}
	return cells
}

// checkMergedCard checks a merged dataset's card against its episodes, its
// tasks and its stored specifications (not against the merge report alone:
// the card must say what the dataset holds).
func (c *checker) checkMergedCard(body string) {
	bad := func(l loc, format string, args ...any) { c.errorf("card.provenance", cardPath, l, format, args...) }
	if m := cardMergedRe.FindStringSubmatch(body); m == nil {
		bad(loc{}, "the card does not say what the dataset was merged from (\"merged by ceres-export ... from N shards of S sessions: E episodes, F frames at R fps, T tasks.\")")
	} else if c.info != nil {
		n := func(i int) int64 { v, _ := strconv.ParseInt(m[i], 10, 64); return v }
		if n(3) != c.info.TotalEpisodes || n(4) != c.info.TotalFrames || n(5) != int64(c.info.FPS) || (c.tasks != nil && n(6) != int64(len(c.tasks))) {
			bad(loc{}, "the card says %s episodes, %s frames at %s fps, %s tasks; info.json says %d, %d at %d, %d",
				m[3], m[4], m[5], m[6], c.info.TotalEpisodes, c.info.TotalFrames, c.info.FPS, c.info.TotalTasks)
		}
	}
	if c.episodes == nil {
		return
	}
	rows := c.episodes.Rows
	sources, ok := cardTable(body, "| source | session | episodes | frames | campaign task | merge run |")
	if !ok {
		bad(loc{}, "the card has no table of sources")
	}
	next := int64(0)
	sessions := map[string]bool{}
	for i, s := range sources {
		if len(s) != 6 {
			bad(loc{}, "source row %d has %d cells, want 6", i, len(s))
			continue
		}
		first, last, ok := strings.Cut(s[2], "-")
		f, err1 := strconv.ParseInt(first, 10, 64)
		l, err2 := strconv.ParseInt(last, 10, 64)
		if !ok || err1 != nil || err2 != nil || f != next || l < f || l >= int64(len(rows)) {
			bad(loc{}, "source %q: episodes %q, want %d-N within the dataset's %d episodes", s[0], s[2], next, len(rows))
			return
		}
		var frames int64
		foreign := strings.HasPrefix(s[1], "foreign: ")
		for _, er := range rows[f : l+1] {
			frames += er.Length
			switch got, _ := er.Ceres[layout.ColSessionID].(string); {
			case foreign != c.isForeignRow(er):
				bad(ep(er.EpisodeIndex), "the card gives the episode to source %q (%q); the episode is foreign: %v", s[0], s[1], c.isForeignRow(er))
			case !foreign && got != s[1]:
				bad(ep(er.EpisodeIndex), "the card gives the episode to source %q of session %q; the episode's session is %q", s[0], s[1], got)
			}
		}
		if strconv.FormatInt(frames, 10) != s[3] {
			bad(loc{}, "source %q: the card says %s frames, its episodes hold %d", s[0], s[3], frames)
		}
		if !foreign {
			sessions[s[1]] = true
		}
		next = l + 1
	}
	if ok && next != int64(len(rows)) {
		bad(loc{}, "the card's sources hold episodes 0-%d, the dataset %d episodes", next-1, len(rows))
	}
	if m := cardMergedRe.FindStringSubmatch(body); m != nil && ok &&
		(m[1] != strconv.Itoa(len(sources)) || m[2] != strconv.Itoa(len(sessions))) {
		bad(loc{}, "the card says %s shards of %s sessions; its table lists %d of %d", m[1], m[2], len(sources), len(sessions))
	}

	specRows, ok := cardTable(body, "| sha256 | file |")
	if !ok {
		bad(loc{}, "the card has no table of task specifications")
	}
	var specs []string
	for _, s := range specRows {
		h := strings.Trim(s[0], "`")
		specs = append(specs, h)
		if c.specs[h] == nil && !slices.Contains(c.files, layout.RedactedSpecPath(h)) {
			bad(loc{}, "the card names specification %s, which the dataset does not store", h)
		}
	}
	for _, er := range rows {
		for _, col := range []string{layout.ColSpecHash, layout.ColRecordedSpecHash} {
			if h, _ := er.Ceres[col].(string); h != "" && !slices.Contains(specs, h) {
				bad(ep(er.EpisodeIndex), "the episode's %s %s is not in the card", col, h)
			}
		}
	}

	if c.tasks == nil {
		return
	}
	taskRows, ok := cardTable(body, "| task_index | task | episodes |")
	if !ok {
		bad(loc{}, "the card has no table of tasks")
		return
	}
	perTask := map[string]int{}
	for _, er := range rows {
		if len(er.Tasks) > 0 {
			perTask[er.Tasks[0]]++
		}
	}
	var got []string
	for _, t := range taskRows {
		if len(t) != 3 {
			bad(loc{}, "task row %v has %d cells, want 3", t, len(t))
			continue
		}
		got = append(got, t[1])
		if n := strconv.Itoa(perTask[t[1]]); n != t[2] {
			bad(loc{}, "task %q: the card says %s episodes, the dataset has %s", t[1], t[2], n)
		}
	}
	if !slices.Equal(got, c.tasks) {
		bad(loc{}, "the card's tasks %s differ from meta/tasks.parquet's %s", quoteAll(got), quoteAll(c.tasks))
	}
}

func quoteAll(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = strconv.Quote(v)
	}
	return fmt.Sprintf("[%s]", strings.Join(q, " "))
}

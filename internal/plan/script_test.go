package plan

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/journal"
)

var update = flag.Bool("update", false, "rewrite the plan section of testdata/*.txt scripts")

// A script (testdata/*.txt) is a plan test: events in, the plan out.
//
//	# comment lines
//	fps 10
//	tasks wave=timed inspect=open rest=pause
//	-- events --
//	{"t":1000000000,"kind":"attempt_start",...}   one journal EVENT per line
//	-- plan --
//	the rendering of the plan (golden; rewritten with -update)
type script struct {
	header string // everything before the first section, kept verbatim
	fps    int
	tasks  map[string]string
	events []journal.Event
	plan   string
}

const (
	sectionEvents = "-- events --"
	sectionPlan   = "-- plan --"
)

func parseScript(data []byte) (*script, error) {
	s := &script{fps: 10, tasks: map[string]string{}}
	text := string(data)
	ei := strings.Index(text, sectionEvents+"\n")
	pi := strings.Index(text, sectionPlan+"\n")
	if ei < 0 || pi < ei {
		return nil, fmt.Errorf("want %q then %q sections", sectionEvents, sectionPlan)
	}
	s.header = text[:ei]
	for n, line := range strings.Split(s.header, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch fields[0] {
		case "fps":
			if len(fields) != 2 {
				return nil, fmt.Errorf("line %d: fps N", n+1)
			}
			v, err := strconv.Atoi(fields[1])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n+1, err)
			}
			s.fps = v
		case "tasks":
			for _, f := range fields[1:] {
				id, typ, ok := strings.Cut(f, "=")
				if !ok {
					return nil, fmt.Errorf("line %d: task %q is not id=type", n+1, f)
				}
				s.tasks[id] = typ
			}
		default:
			return nil, fmt.Errorf("line %d: unknown directive %q", n+1, fields[0])
		}
	}
	body := text[ei+len(sectionEvents)+1 : pi]
	for n, line := range strings.Split(body, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var ev journal.Event
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ev); err != nil {
			return nil, fmt.Errorf("events line %d: %w", n+1, err)
		}
		s.events = append(s.events, ev)
	}
	s.plan = text[pi+len(sectionPlan)+1:]
	return s, nil
}

func (s *script) format(plan string) []byte {
	return []byte(s.header + sectionEvents + "\n" + s.eventsText() + sectionPlan + "\n" + plan)
}

func (s *script) eventsText() string {
	var b strings.Builder
	for _, ev := range s.events {
		line, err := json.Marshal(ev)
		if err != nil {
			panic(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// ts renders a journal time readably and exactly (8s, 1.05s, 976.563µs).
func ts(t int64) string { return time.Duration(t).String() }

// renderPlan is the golden rendering of a plan: every field that tests
// assert, one line per item.
func renderPlan(p *Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "fps %d\n", p.FPS)
	fmt.Fprintf(&b, "attempts:\n")
	for _, a := range p.Attempts {
		fmt.Fprintf(&b, "  c%d %s r%d a%d type=%s", a.Cycle, a.Task, a.Repetition, a.Attempt, orDash(a.TaskType))
		if a.HasStart {
			fmt.Fprintf(&b, " start=%s", ts(a.Start))
		} else {
			b.WriteString(" start=-")
		}
		if a.HasEnd {
			fmt.Fprintf(&b, " end=%s cause=%s", ts(a.End), orDash(a.Cause))
		} else {
			b.WriteString(" end=-")
		}
		fmt.Fprintf(&b, " length=%d outcome=%s -> %s", a.Length, orDash(a.Outcome), a.Fate)
		if a.Episode >= 0 {
			fmt.Fprintf(&b, " episode %d", a.Episode)
		}
		if a.Reason != "" {
			fmt.Fprintf(&b, " (%s)", a.Reason)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "episodes:\n")
	for _, e := range p.Episodes {
		fmt.Fprintf(&b, "  %d: c%d %s r%d a%d type=%s [%s, %s) length=%d outcome=%s\n",
			e.Index, e.Cycle, e.Task, e.Repetition, e.Attempt, e.TaskType, ts(e.Start), ts(e.End), e.Length, orDash(e.Outcome))
	}
	for _, group := range []struct {
		name string
		list []Interval
	}{{"pauses", p.Pauses}, {"resets", p.Resets}} {
		fmt.Fprintf(&b, "%s:\n", group.name)
		for _, in := range group.list {
			fmt.Fprintf(&b, "  c%d %s", in.Cycle, in.Task)
			if in.Kind == KindReset {
				fmt.Fprintf(&b, " r%d a%d", in.Repetition, in.Attempt)
			}
			if in.Open {
				fmt.Fprintf(&b, " [%s, open)\n", ts(in.Start))
			} else {
				fmt.Fprintf(&b, " [%s, %s)\n", ts(in.Start), ts(in.End))
			}
		}
	}
	fmt.Fprintf(&b, "diagnostics:\n")
	for _, d := range p.Diagnostics {
		fmt.Fprintf(&b, "  %s\n", d)
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func TestScripts(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no testdata/*.txt scripts")
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s, err := parseScript(data)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			p, err := Build(s.events, MapTypes(s.tasks), s.fps)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			checkInvariants(t, p, s.events)
			got := renderPlan(p)
			if *update {
				if err := os.WriteFile(path, s.format(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != s.plan {
				t.Errorf("%s: plan differs (run go test ./plan -run TestScripts -update to accept)\n--- got\n%s--- want\n%s", path, got, s.plan)
			}
			// Build is deterministic: a second run renders identically.
			p2, err := Build(s.events, MapTypes(s.tasks), s.fps)
			if err != nil {
				t.Fatal(err)
			}
			if again := renderPlan(p2); again != got {
				t.Errorf("second Build differs:\n%s", again)
			}
			js1, _ := json.Marshal(p)
			js2, _ := json.Marshal(p2)
			if !bytes.Equal(js1, js2) {
				t.Errorf("JSON of two Builds differs")
			}
		})
	}
}

// checkInvariants asserts what holds for every plan, whatever the events.
func checkInvariants(t *testing.T, p *Plan, events []journal.Event) {
	t.Helper()
	episodes := 0
	seenOrphan := false
	for j, a := range p.Attempts {
		if !a.HasStart {
			seenOrphan = true
		} else if seenOrphan {
			t.Errorf("attempt %d (%v) started but follows an orphan", j, a.Key)
		}
		if j > 0 && a.HasStart && p.Attempts[j-1].HasStart && a.Start < p.Attempts[j-1].Start {
			t.Errorf("attempt %d starts before attempt %d", j, j-1)
		}
		switch a.Fate {
		case Accepted:
			if a.Episode != episodes {
				t.Errorf("attempt %v: episode %d, want %d", a.Key, a.Episode, episodes)
			}
			if a.Episode >= 0 && a.Episode < len(p.Episodes) && p.Episodes[a.Episode].Key != a.Key {
				t.Errorf("episode %d is %v, want %v", a.Episode, p.Episodes[a.Episode].Key, a.Key)
			}
			episodes++
			if !a.HasStart || !a.HasEnd || a.Length < 1 || a.Reason != "" {
				t.Errorf("accepted attempt %+v lacks a window, a length or has a reason", a)
			}
			if a.TaskType != TypeTimed && a.TaskType != TypeOpen {
				t.Errorf("accepted attempt %v of type %q", a.Key, a.TaskType)
			}
		case Retried, Incomplete, Anomalous, Empty:
			if a.Episode != -1 {
				t.Errorf("%s attempt %v has episode %d", a.Fate, a.Key, a.Episode)
			}
			if (a.Fate == Anomalous || a.Fate == Empty) && a.Reason == "" {
				t.Errorf("%s attempt %v without a reason", a.Fate, a.Key)
			}
			if a.Fate == Incomplete && a.HasEnd {
				t.Errorf("incomplete attempt %v has an end", a.Key)
			}
		default:
			t.Errorf("attempt %v: unknown fate %q", a.Key, a.Fate)
		}
		retried := false
		for _, ev := range events {
			if ev.Kind == journal.EventRetry && (Key{ev.Cycle, ev.Task, ev.Repetition, ev.Attempt}) == a.Key {
				retried = true
			}
		}
		if retried && a.Fate == Accepted {
			t.Errorf("retried attempt %v accepted", a.Key)
		}
	}
	if episodes != len(p.Episodes) {
		t.Errorf("%d accepted attempts, %d episodes", episodes, len(p.Episodes))
	}
	for i, e := range p.Episodes {
		if e.Index != i {
			t.Errorf("episode %d has index %d", i, e.Index)
		}
		if i > 0 && e.Start < p.Episodes[i-1].Start {
			t.Errorf("episode %d starts before episode %d", i, i-1)
		}
		if e.Length != lerobot.Length(e.Start, e.End, p.FPS) || e.Length < 1 {
			t.Errorf("episode %d: length %d of [%d, %d)", i, e.Length, e.Start, e.End)
		}
	}
}

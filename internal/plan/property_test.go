package plan

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/journal"
)

// session is a generated journal and the attempts' windows, for oracle
// checks. Attempts never overlap in time: the recorder runs one at a time.
type session struct {
	tasks  map[string]string
	events []journal.Event
}

// genSession writes a plausible journal from rng: cycles over timed, open
// and pause tasks, attempts retried before their end, after it, after the
// reset or even after the next attempt started, now and then a second
// complete attempt without a retry (a double accept), annotations, and
// possibly a crash that cuts the journal anywhere.
func genSession(rng *rand.Rand) session {
	tasks := map[string]string{"wave": TypeTimed, "inspect": TypeOpen, "rest": TypePause}
	order := []string{"wave", "inspect", "rest"}
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	var evs []journal.Event
	t := int64(0)
	tick := func(max int64) int64 { t += rng.Int64N(max + 1); return t }
	att := func(kind string, k Key) journal.Event {
		return journal.Event{T: t, Kind: kind, Task: k.Task, Cycle: k.Cycle, Repetition: k.Repetition, Attempt: k.Attempt}
	}
	var delayed []journal.Event // retries to be written later than usual
	flushSome := func() {
		for len(delayed) > 0 && rng.IntN(2) == 0 {
			ev := delayed[0]
			ev.T = t
			evs = append(evs, ev)
			delayed = delayed[1:]
		}
	}
	evs = append(evs, journal.Event{T: t, Kind: journal.EventRunStart})
	cycles := 1 + rng.IntN(3)
	for c := 1; c <= cycles; c++ {
		evs = append(evs, journal.Event{T: tick(1e8), Kind: journal.EventCycleStart, Cycle: c})
		for _, task := range order {
			if tasks[task] == TypePause {
				evs = append(evs, journal.Event{T: tick(1e8), Kind: journal.EventPauseStart, Task: task, Cycle: c})
				evs = append(evs, journal.Event{T: tick(2e9), Kind: journal.EventPauseEnd, Task: task, Cycle: c})
				continue
			}
			reps := 1 + rng.IntN(3)
			for r := 1; r <= reps; r++ {
				for a := 1; ; a++ {
					k := Key{Cycle: c, Task: task, Repetition: r, Attempt: a}
					tick(1e8)
					evs = append(evs, att(journal.EventAttemptStart, k))
					flushSome()
					tick(3e9)
					again := false
					switch rng.IntN(8) {
					case 0: // retry while recording, no attempt_end
						evs = append(evs, att(journal.EventRetry, k))
						again = true
					case 1: // retry while recording, attempt_end follows
						evs = append(evs, att(journal.EventRetry, k))
						tick(1e6)
						evs = append(evs, att(journal.EventAttemptEnd, k))
						again = true
					case 2: // retry after the end, now or much later
						evs = append(evs, att(journal.EventAttemptEnd, k))
						if rng.IntN(2) == 0 {
							tick(1e9)
							evs = append(evs, att(journal.EventRetry, k))
						} else {
							delayed = append(delayed, att(journal.EventRetry, k))
						}
						again = true
					case 3: // a second complete attempt without a retry
						evs = append(evs, att(journal.EventAttemptEnd, k))
						again = true
					default:
						e := att(journal.EventAttemptEnd, k)
						e.Cause = []string{"duration", "next", "stop"}[rng.IntN(3)]
						evs = append(evs, e)
					}
					if rng.IntN(3) == 0 {
						a := att(journal.EventAnnotate, k)
						a.Outcome = []string{"pass", "fail", "clear"}[rng.IntN(3)]
						evs = append(evs, a)
					}
					tick(1e8)
					evs = append(evs, att(journal.EventResetStart, k))
					tick(5e9)
					evs = append(evs, att(journal.EventResetEnd, k))
					flushSome()
					if !again || a >= 4 {
						break
					}
				}
			}
		}
		evs = append(evs, journal.Event{T: tick(1e8), Kind: journal.EventCycleEnd, Cycle: c})
	}
	for _, ev := range delayed {
		ev.T = t
		evs = append(evs, ev)
	}
	evs = append(evs, journal.Event{T: tick(1e8), Kind: journal.EventRunEnd})
	if rng.IntN(4) == 0 { // crash: the journal ends anywhere
		evs = evs[:rng.IntN(len(evs)+1)]
	}
	for i := range evs { // fill causes the generator left empty
		if evs[i].Kind == journal.EventAttemptEnd && evs[i].Cause == "" {
			evs[i].Cause = "duration"
		}
	}
	return session{tasks: tasks, events: evs}
}

// oracle computes the fates of a generated journal by the definitions of
// docs/journal-format.md, independently of Build: a generated journal has no
// structural anomalies, so only retried, incomplete, superseded, empty and
// accepted occur.
func oracle(s session, fps int) map[Key]Fate {
	type facts struct {
		start, end     int64
		started, ended bool
		retried        bool
		startIndex     int
	}
	all := map[Key]*facts{}
	get := func(ev journal.Event) *facts {
		k := Key{ev.Cycle, ev.Task, ev.Repetition, ev.Attempt}
		if all[k] == nil {
			all[k] = &facts{}
		}
		return all[k]
	}
	for i, ev := range s.events {
		switch ev.Kind {
		case journal.EventAttemptStart:
			f := get(ev)
			f.started, f.start, f.startIndex = true, ev.T, i
		case journal.EventAttemptEnd:
			f := get(ev)
			f.ended, f.end = true, ev.T
		case journal.EventRetry:
			get(ev).retried = true
		}
	}
	fates := map[Key]Fate{}
	latest := map[[3]any]Key{}
	for k, f := range all {
		switch {
		case !f.started:
			fates[k] = Anomalous // a delayed retry survived a crash that cut its attempt_start: impossible here, but be exact
		case f.retried:
			fates[k] = Retried
		case !f.ended:
			fates[k] = Incomplete
		default:
			rep := [3]any{k.Cycle, k.Task, k.Repetition}
			if w, ok := latest[rep]; !ok || all[w].start < f.start || all[w].start == f.start && all[w].startIndex < f.startIndex {
				latest[rep] = k
			}
			fates[k] = Accepted
		}
	}
	for k, fate := range fates {
		if fate != Accepted {
			continue
		}
		f := all[k]
		switch {
		case latest[[3]any{k.Cycle, k.Task, k.Repetition}] != k:
			fates[k] = Anomalous
		case lerobot.Length(f.start, f.end, fps) == 0:
			fates[k] = Empty
		}
	}
	return fates
}

// TestPlanProperties checks Build against the oracle on seeded random
// journals, plus the properties the brief names: a retried or incomplete
// attempt is never accepted, every accepted attempt is one episode exactly
// once, episodes are in start order, and no episode window overlaps a
// retried attempt's recording.
func TestPlanProperties(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(20261129, 3))
	seen := map[Fate]int{}
	defer func() {
		// The generator must reach every fate, or the oracle proves little.
		for _, f := range []Fate{Accepted, Retried, Incomplete, Anomalous, Empty} {
			if seen[f] == 0 {
				t.Errorf("no generated attempt was %s", f)
			}
		}
		t.Logf("fates: %v", seen)
	}()
	for i := 0; i < 2000; i++ {
		s := genSession(rng)
		fps := []int{1, 10, 29, 30}[rng.IntN(4)]
		p, err := Build(s.events, MapTypes(s.tasks), fps)
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		ok := t.Run(fmt.Sprintf("session%d", i), func(t *testing.T) {
			checkInvariants(t, p, s.events)
			want := oracle(s, fps)
			if len(p.Attempts) != len(want) {
				t.Errorf("%d attempts, oracle has %d", len(p.Attempts), len(want))
			}
			inEpisodes := map[Key]int{}
			for _, e := range p.Episodes {
				inEpisodes[e.Key]++
			}
			for _, a := range p.Attempts {
				seen[a.Fate]++
				if want[a.Key] != a.Fate {
					t.Errorf("%v: fate %s (%s), oracle %s", a.Key, a.Fate, a.Reason, want[a.Key])
				}
				n := inEpisodes[a.Key]
				if a.Fate == Accepted && n != 1 || a.Fate != Accepted && n != 0 {
					t.Errorf("%s attempt %v is in %d episodes", a.Fate, a.Key, n)
				}
			}
			// Recording windows of retried attempts: [start, end), or up to
			// the next attempt_start when the attempt never ended.
			for j, a := range p.Attempts {
				if a.Fate != Retried {
					continue
				}
				end := a.End
				if !a.HasEnd {
					end = int64(1) << 62
					if j+1 < len(p.Attempts) && p.Attempts[j+1].HasStart {
						end = p.Attempts[j+1].Start
					}
				}
				for _, e := range p.Episodes {
					if e.Start < end && a.Start < e.End {
						t.Errorf("episode %d [%d, %d) overlaps retried %v [%d, %d)", e.Index, e.Start, e.End, a.Key, a.Start, end)
					}
				}
			}
		})
		if !ok {
			dumpSession(t, s)
			break
		}
	}
}

func dumpSession(t *testing.T, s session) {
	var b strings.Builder
	for _, ev := range s.events {
		line, _ := json.Marshal(ev)
		b.Write(line)
		b.WriteByte('\n')
	}
	t.Logf("failing session:\n%s", b.String())
}

// FuzzBuild feeds Build arbitrary events (one JSON event per line; lines
// that do not decode are skipped): it must not panic and every plan must
// keep the invariants. The seed corpus is the events of every script.
func FuzzBuild(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		s, err := parseScript(data)
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(s.eventsText()))
	}
	tasks := MapTypes(map[string]string{"wave": TypeTimed, "inspect": TypeOpen, "pick": TypeOpen, "rest": TypePause})
	f.Fuzz(func(t *testing.T, data []byte) {
		var events []journal.Event
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		for sc.Scan() {
			var ev journal.Event
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				events = append(events, ev)
			}
		}
		for _, fps := range []int{1, 30, lerobot.MaxFPS} {
			p, err := Build(events, tasks, fps)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, p, events)
		}
	})
}

// BenchmarkBuild plans a long generated session and reports the cost per
// event, so a super-linear Build shows as a rising figure when the session
// grows.
func BenchmarkBuild(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 7))
	var events []journal.Event
	tasks := map[string]string{}
	for len(events) < 100_000 {
		s := genSession(rng)
		// Shift each generated session after the previous one and give its
		// tasks distinct ids so attempts stay distinct.
		offset := int64(0)
		if len(events) > 0 {
			offset = events[len(events)-1].T
		}
		suffix := fmt.Sprint(len(events))
		for id, typ := range s.tasks {
			tasks[id+suffix] = typ
		}
		for _, ev := range s.events {
			ev.T += offset
			if ev.Task != "" {
				ev.Task += suffix
			}
			events = append(events, ev)
		}
	}
	types := MapTypes(tasks)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(events, types, 30); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(events)), "ns/event")
}

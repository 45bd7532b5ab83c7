//go:build cgo

package export

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/internal/synth"
	"github.com/ceres-robotics/ceres-export/internal/verify"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// TestVerifyCatchesWrongPlan exports a session with a deliberately wrong
// plan (a retried take leaked as an episode; a window shifted by one frame)
// and checks that verify --journal, which computes fates and windows from
// the journal by its own reading of docs/export-semantics.md, reports the
// episode the bug produced. The unaltered export is the control: verify
// finds nothing there, so the findings come from the bug alone.
func TestVerifyCatchesWrongPlan(t *testing.T) {
	ctx := context.Background()
	session := smallSession(t, synth.Options{Seed: 21, Cameras: 1})

	cases := []struct {
		name string
		// alter rewrites the plan and returns the episode_index of the
		// episode it made wrong (-1 for the control) and what verify must
		// say about it.
		alter    func(t *testing.T, p *plan.Plan) int
		code     string
		contains string
	}{
		{name: "control", alter: func(*testing.T, *plan.Plan) int { return -1 }},
		{name: "retried take leaked", alter: leakRetriedTake, code: "journal.attempt", contains: "is retried in the session"},
		{name: "window shifted by one frame", alter: shiftWindow, code: "journal.window", contains: "but attempt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wrong := -1
			opts := Options{Video: VideoOptions{Codec: "h264"}, alterPlanForTesting: func(p *plan.Plan) { wrong = tc.alter(t, p) }}
			dest := filepath.Join(t.TempDir(), "shard")
			if _, err := exportWithVideo(ctx, session, dest, opts); err != nil {
				t.Fatal(err)
			}
			res, err := verify.Shard(ctx, dest, verify.Options{Journal: session, Video: video.Files{}})
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, f := range res.Findings {
				lines = append(lines, f.Code+" "+f.Severity+" "+f.Message)
			}
			if testing.Verbose() {
				t.Logf("findings:\n%s", strings.Join(lines, "\n"))
			}
			if wrong < 0 {
				if !res.Sound {
					t.Fatalf("the control export is not sound:\n%s", strings.Join(lines, "\n"))
				}
				return
			}
			if res.Sound {
				t.Errorf("a shard exported from a wrong plan is sound")
			}
			named := slices.ContainsFunc(res.Findings, func(f verify.Finding) bool {
				return f.Code == tc.code && f.Severity == verify.SeverityError &&
					f.Episode != nil && *f.Episode == int64(wrong) && strings.Contains(f.Message, tc.contains)
			})
			if !named {
				t.Errorf("no %s error naming episode %d (%q); findings:\n%s", tc.code, wrong, tc.contains, strings.Join(lines, "\n"))
			}
		})
	}
}

// leakRetriedTake makes the first retried attempt that has a whole window
// an episode, as an exporter that ignored retries would, and returns its
// episode_index.
func leakRetriedTake(t *testing.T, p *plan.Plan) int {
	i := slices.IndexFunc(p.Attempts, func(a plan.Attempt) bool {
		return a.Fate == plan.Retried && a.HasStart && a.HasEnd && a.End > a.Start
	})
	if i < 0 {
		t.Fatal("the session has no retried attempt with a window")
	}
	a := &p.Attempts[i]
	length := int((a.End - a.Start) * int64(p.FPS) / 1e9)
	if length < 1 {
		t.Fatalf("retried attempt %v holds no frame", a.Key)
	}
	a.Fate, a.Length = plan.Accepted, length
	leaked := plan.Episode{Key: a.Key, TaskType: a.TaskType, Start: a.Start, End: a.End, Length: length, Outcome: a.Outcome}
	at, _ := slices.BinarySearchFunc(p.Episodes, leaked, func(e, x plan.Episode) int {
		if e.Start < x.Start {
			return -1
		}
		return 1
	})
	p.Episodes = slices.Insert(p.Episodes, at, leaked)
	for k := range p.Episodes {
		p.Episodes[k].Index = k
	}
	for k := range p.Attempts {
		if p.Attempts[k].Fate == plan.Accepted {
			p.Attempts[k].Episode = slices.IndexFunc(p.Episodes, func(e plan.Episode) bool { return e.Key == p.Attempts[k].Key })
		}
	}
	return at
}

// shiftWindow moves the window of the second episode one frame later, as an
// off-by-one in the frame clock would, and returns its episode_index.
func shiftWindow(t *testing.T, p *plan.Plan) int {
	if len(p.Episodes) < 2 {
		t.Fatal("the session has fewer than two episodes")
	}
	frame := (int64(1e9) + int64(p.FPS)/2) / int64(p.FPS)
	e := &p.Episodes[1]
	e.Start += frame
	e.End += frame
	for k := range p.Attempts {
		if p.Attempts[k].Key == e.Key {
			p.Attempts[k].Start, p.Attempts[k].End = e.Start, e.End
		}
	}
	return e.Index
}

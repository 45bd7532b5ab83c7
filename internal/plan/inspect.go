package plan

import (
	"fmt"
	"github.com/ceres-robotics/ceres-export/internal/textout"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ceres-robotics/ceres-export/journal"
)

// Inspection is what `ceres-export journal inspect` shows of a session
// (its --json document): the journal's session, specification, media, end
// and report, and the plan an export at FPS would follow.
type Inspection struct {
	Session journal.Session `json:"session"`
	Spec    *SpecSummary    `json:"spec"` // null when the journal has no SPEC
	Media   []journal.Media `json:"media"`
	End     *journal.End    `json:"end"` // null for an unterminated session
	Report  journal.Report  `json:"report"`
	// FPSSource says where FPS came from: "--fps", "video stream X" or
	// "sensor stream X".
	FPSSource string `json:"fps_source"`
	Plan      *Plan  `json:"plan"`
}

// SpecSummary is the part of the applied specification inspect shows.
type SpecSummary struct {
	Hash       string        `json:"hash"`
	RunTitle   string        `json:"run_title"`
	CycleCount int64         `json:"cycle_count"`
	Tasks      []TaskSummary `json:"tasks"`
}

// TaskSummary is one task of a SpecSummary.
type TaskSummary struct {
	ID    string `json:"id"`
	Type  string `json:"type"`
	Label string `json:"label"`
}

// Inspect is the inspection of the journal j with its plan at fps; source
// says where fps came from ("--fps", or DefaultFPS's source).
func Inspect(j *journal.Journal, fps int, source string) (*Inspection, error) {
	types := MapTypes(nil)
	var spec *SpecSummary
	if j.Spec != nil {
		types = SpecTypes(j.Spec)
		spec = &SpecSummary{RunTitle: j.Spec.RunTitle, CycleCount: j.Spec.CycleCount, Tasks: []TaskSummary{}}
		if j.SpecRecord != nil {
			spec.Hash = j.SpecRecord.Hash
		}
		for _, t := range j.Spec.Tasks {
			spec.Tasks = append(spec.Tasks, TaskSummary{ID: t.ID, Type: t.Type, Label: t.Label})
		}
	}
	p, err := Build(j.Events, types, fps)
	if err != nil {
		return nil, err
	}
	in := &Inspection{
		Session: j.Info, Spec: spec, Media: j.Media, End: j.End, Report: j.Report,
		FPSSource: source, Plan: p,
	}
	if in.Media == nil {
		in.Media = []journal.Media{}
	}
	return in, nil
}

// seconds renders a journal time exactly and readably: 8s, 1.05s, 10h0m5s.
func seconds(t int64) string { return time.Duration(t).String() }

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteText writes the inspection as text: the form `journal inspect`
// prints without --json.
func (in *Inspection) WriteText(w io.Writer) error {
	ew := textout.New(w)
	for _, section := range []func(*textout.Writer, *Inspection){writeSessionHead, writeStreams, writeRecords, writeAttempts} {
		section(ew, in)
	}
	return ew.Err()
}

// writeSessionHead is the session, its recorder, specification and end.
func writeSessionHead(ew *textout.Writer, in *Inspection) {
	p := ew.Printf
	info := in.Session
	p("session   %s\n", info.SessionID)
	p("started   %s\n", info.StartedAt)
	p("robot     %s\n", orNone(info.RobotType))
	if info.Recorder != nil {
		p("recorder  %s %s\n", info.Recorder.Name, info.Recorder.Version)
	} else {
		p("recorder  -\n")
	}
	if in.Spec != nil {
		p("spec      %q, %d cycle(s), hash %s\n", in.Spec.RunTitle, in.Spec.CycleCount, in.Spec.Hash)
		for _, t := range in.Spec.Tasks {
			p("  task    %s (%s) %q\n", t.ID, t.Type, t.Label)
		}
	} else {
		p("spec      none\n")
	}
	if in.End != nil {
		p("end       %s at %s\n", in.End.Reason, seconds(in.End.T))
	} else {
		p("end       none: unterminated (the recorder did not close the session)\n")
	}
}

// writeStreams is a line per stream: its kind, rate, fields and samples.
func writeStreams(ew *textout.Writer, in *Inspection) {
	ew.Printf("\nstreams:\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	for _, st := range in.Session.Streams {
		switch st.Kind {
		case journal.KindSensor:
			fields := make([]string, len(st.Fields))
			for i, f := range st.Fields {
				fields[i] = f.Name + " " + string(f.Dtype)
				if len(f.Shape) > 0 {
					fields[i] += fmt.Sprint(f.Shape)
				}
			}
			stats := in.Report.Samples[st.ID]
			span := "no samples"
			if stats.Samples > 0 {
				span = fmt.Sprintf("%d samples in %d batches, t %s … %s", stats.Samples, stats.Batches, seconds(stats.FirstT), seconds(stats.LastT))
			}
			fmt.Fprintf(tw, "  %s\tsensor\t%g Hz\t%s\t%s\n", st.ID, st.RateHz, strings.Join(fields, ", "), span)
		case journal.KindVideo:
			files := 0
			for _, m := range in.Media {
				if m.Stream == st.ID {
					files++
				}
			}
			fmt.Fprintf(tw, "  %s\tvideo\t%g fps\t%dx%d\t%d media file(s)\n", st.ID, st.FPS, st.Width, st.Height, files)
		default:
			fmt.Fprintf(tw, "  %s\t%s\t\t\t\n", st.ID, st.Kind)
		}
	}
	flushTo(tw)
}

// writeRecords is the record counts, segments and what was torn, skipped,
// unknown or missing.
func writeRecords(ew *textout.Writer, in *Inspection) {
	p := ew.Printf
	r := in.Report
	counts := make([]string, 0, len(r.RecordCounts))
	for _, name := range []string{"SESSION", "SPEC", "EVENT", "SAMPLES", "MEDIA", "END"} {
		if n, ok := r.RecordCounts[name]; ok {
			counts = append(counts, fmt.Sprintf("%s %d", name, n))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.RecordCounts)) {
		if !slices.Contains([]string{"SESSION", "SPEC", "EVENT", "SAMPLES", "MEDIA", "END"}, name) {
			counts = append(counts, fmt.Sprintf("%s %d", name, r.RecordCounts[name]))
		}
	}
	p("\nrecords:  %s\n", strings.Join(counts, ", "))
	p("segments:\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	for _, sg := range r.Segments {
		fmt.Fprintf(tw, "  %s\t%d bytes\t%d records\tsha256 %s\n", sg.Name, sg.Size, sg.Records, sg.SHA256)
	}
	flushTo(tw)
	if r.Torn != nil {
		p("torn tail: %s@%d, %d bytes dropped\n", r.Torn.Segment, r.Torn.Offset, r.Torn.Bytes)
	} else {
		p("torn tail: none\n")
	}
	for _, rs := range r.Restarts {
		if rs.Torn != nil {
			p("restart:   recorder restarted in %s; torn range %s@%d, %d bytes dropped\n", rs.Segment, rs.Torn.Segment, rs.Torn.Offset, rs.Torn.Length)
		} else {
			p("restart:   recorder restarted in %s\n", rs.Segment)
		}
	}
	if len(r.Skipped) > 0 {
		p("skipped (salvage):\n")
		for _, b := range r.Skipped {
			p("  %s@%d, %d bytes\n", b.Segment, b.Offset, b.Length)
		}
	} else {
		p("skipped:   none\n")
	}
	writeUnknowns(ew, r)
}

// writeUnknowns is what the journal held that this reader does not know,
// and the media files it names that are missing.
func writeUnknowns(ew *textout.Writer, r journal.Report) {
	p := ew.Printf
	if len(r.UnknownRecordTypes) > 0 {
		types := make([]string, 0, len(r.UnknownRecordTypes))
		for _, typ := range slices.Sorted(maps.Keys(r.UnknownRecordTypes)) {
			types = append(types, fmt.Sprintf("type %d ×%d", typ, r.UnknownRecordTypes[typ]))
		}
		p("unknown record types: %s\n", strings.Join(types, ", "))
	}
	if len(r.UnknownEventKinds) > 0 {
		kinds := make([]string, 0, len(r.UnknownEventKinds))
		for _, k := range slices.Sorted(maps.Keys(r.UnknownEventKinds)) {
			kinds = append(kinds, fmt.Sprintf("%s ×%d", k, r.UnknownEventKinds[k]))
		}
		p("unknown event kinds: %s\n", strings.Join(kinds, ", "))
	}
	if r.Unterminated {
		p("unterminated: yes (no END record)\n")
	}
	for _, m := range r.MissingMedia {
		p("missing media: %s\n", m)
	}
}

// writeAttempts is every attempt with its window and fate, then the fates,
// pauses, resets and diagnostics.
func writeAttempts(ew *textout.Writer, in *Inspection) {
	p := ew.Printf
	pl := in.Plan
	frames := 0
	for _, e := range pl.Episodes {
		frames += e.Length
	}
	p("\nattempts at %d fps (%s): %d episode(s), %d frame(s)\n", pl.FPS, in.FPSSource, len(pl.Episodes), frames)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  CYCLE\tTASK\tREP\tATTEMPT\tWINDOW\tFRAMES\tFATE\tOUTCOME\tCAUSE\n")
	for _, a := range pl.Attempts {
		window := "-"
		switch {
		case a.HasStart && a.HasEnd:
			window = fmt.Sprintf("[%s, %s)", seconds(a.Start), seconds(a.End))
		case a.HasStart:
			window = fmt.Sprintf("[%s, -)", seconds(a.Start))
		}
		fate := string(a.Fate)
		if a.Fate == Accepted {
			fate = fmt.Sprintf("episode %d", a.Episode)
		}
		if a.Reason != "" {
			fate += ": " + a.Reason
		}
		fmt.Fprintf(tw, "  %d\t%s\t%d\t%d\t%s\t%d\t%s\t%s\t%s\n", a.Cycle, a.Task, a.Repetition, a.Attempt, window, a.Length, fate, orNone(a.Outcome), orNone(a.Cause))
	}
	flushTo(tw)
	writeIntervals(ew, pl)
}

// writeIntervals is the plan's fates, pauses, resets and diagnostics.
func writeIntervals(ew *textout.Writer, pl *Plan) {
	p := ew.Printf
	fates := []string{}
	for _, f := range []Fate{Accepted, Retried, Incomplete, Empty, Anomalous} {
		if n := pl.Count(f); n > 0 {
			fates = append(fates, fmt.Sprintf("%s %d", f, n))
		}
	}
	if len(fates) > 0 {
		p("  fates: %s\n", strings.Join(fates, ", "))
	}
	for _, group := range []struct {
		name string
		list []Interval
	}{{"pauses", pl.Pauses}, {"resets", pl.Resets}} {
		var total int64
		open := 0
		for _, iv := range group.list {
			if iv.Open {
				open++
			} else {
				total += iv.End - iv.Start
			}
		}
		p("%s: %d, %s in all", group.name, len(group.list), seconds(total))
		if open > 0 {
			p(", %d never ended", open)
		}
		p("\n")
	}
	if len(pl.Diagnostics) > 0 {
		p("diagnostics:\n")
		for _, d := range pl.Diagnostics {
			p("  %s\n", d)
		}
	}
}

// flushTo flushes tw, which writes into a textout.Writer: a failed flush
// is a failed write of that writer's, which it keeps.
func flushTo(tw *tabwriter.Writer) { _ = tw.Flush() }

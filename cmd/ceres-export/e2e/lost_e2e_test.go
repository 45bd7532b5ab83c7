package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/journal"
)

// copySessionTree copies a session directory tree to a fresh directory.
func copySessionTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "session")
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// partnerKind is the event that closes what each kind opens.
var partnerKind = map[string]string{
	journal.EventAttemptStart: journal.EventAttemptEnd,
	journal.EventResetStart:   journal.EventResetEnd,
	journal.EventPauseStart:   journal.EventPauseEnd,
	journal.EventCycleStart:   journal.EventCycleEnd,
}

// TestE2ELostRecordsRefused: a non-last segment cut at a frame boundary
// (whole records removed from its end) loses records no frame check can
// see. Wherever the cut removes an event whose partner survives in a later
// segment, the export refuses with exit 3 naming the segment and offset of
// the first unpaired event, and --salvage exports what is left and says so.
func TestE2ELostRecordsRefused(t *testing.T) {
	session := synthSession(t, "--cameras", "0", "--seed", "5", "--segment-size", "16384")
	j, err := journal.Open(context.Background(), session, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	segments := len(j.Report.Segments)
	if segments < 3 {
		t.Fatalf("%d segments; the test needs a middle one", segments)
	}
	if len(j.EventPlaces) != len(j.Events) {
		t.Fatalf("%d places for %d events", len(j.EventPlaces), len(j.Events))
	}
	type cut struct {
		segment string
		offset  int64
		kind    string
	}
	var cuts []cut
	seen := map[string]bool{}
	for i, ev := range j.Events {
		at := j.EventPlaces[i]
		want, ok := partnerKind[ev.Kind]
		if !ok || at.Segment == j.Report.Segments[segments-1].Name || seen[at.Segment+ev.Kind] {
			continue
		}
		for k := i + 1; k < len(j.Events); k++ {
			e := j.Events[k]
			if e.Kind == want && e.Task == ev.Task && e.Cycle == ev.Cycle && e.Repetition == ev.Repetition && e.Attempt == ev.Attempt {
				if j.EventPlaces[k].Segment != at.Segment {
					cuts = append(cuts, cut{at.Segment, at.Offset, ev.Kind})
					seen[at.Segment+ev.Kind] = true
				}
				break
			}
		}
	}
	if len(cuts) < 3 {
		t.Fatalf("only %d cuts whose loss the journal shows: %+v", len(cuts), cuts)
	}
	intact := mustRun(t, "export", session, "-o", filepath.Join(t.TempDir(), "shard"))
	if strings.Contains(intact, "records were lost") {
		t.Fatalf("intact session reported lost records:\n%s", intact)
	}
	for _, c := range cuts {
		t.Run(fmt.Sprintf("%s@%d-%s", c.segment, c.offset, c.kind), func(t *testing.T) {
			dir := copySessionTree(t, session)
			if err := os.Truncate(filepath.Join(dir, "journal", c.segment), c.offset); err != nil {
				t.Fatal(err)
			}
			_, errOut, code := run(t, "export", dir, "-o", filepath.Join(t.TempDir(), "shard"))
			if code != exitCorrupt || !strings.Contains(errOut, "records were lost") || !strings.Contains(errOut, "segment 0000") {
				t.Fatalf("exit %d, want %d naming the lost records:\n%s", code, exitCorrupt, errOut)
			}
			dest := filepath.Join(t.TempDir(), "shard")
			out, errOut, code := run(t, "export", dir, "-o", dest, "--salvage")
			if code != exitOK || !strings.Contains(out, "note: salvage: segment 0000") || !strings.Contains(out, "records were lost") {
				t.Fatalf("--salvage: exit %d\n%s\n%s", code, out, errOut)
			}
			if _, err := os.Stat(filepath.Join(dest, filepath.FromSlash(layout.InfoPath))); err != nil {
				t.Fatalf("--salvage wrote no shard: %v", err)
			}
		})
	}
	t.Run("deleted middle segment", func(t *testing.T) {
		dir := copySessionTree(t, session)
		if err := os.Remove(filepath.Join(dir, "journal", "000002.cjl")); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := run(t, "export", dir, "-o", filepath.Join(t.TempDir(), "shard"))
		if code != exitCorrupt || !strings.Contains(errOut, "000002.cjl") {
			t.Fatalf("exit %d, want %d naming the segment:\n%s", code, exitCorrupt, errOut)
		}
	})
	t.Run("missing last segment says unterminated", func(t *testing.T) {
		// What is left is a prefix of the journal, as a crash at a record
		// boundary leaves it: no lifecycle evidence of loss, but the
		// summary says the session was never closed.
		dir := copySessionTree(t, session)
		if err := os.Remove(filepath.Join(dir, "journal", j.Report.Segments[segments-1].Name)); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := run(t, "export", dir, "-o", filepath.Join(t.TempDir(), "shard"))
		if code != exitOK || !strings.Contains(out, "journal: unterminated session (no END record)") {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
	})
}

// TestE2ECrashNotLost: a crash ends the journal with an attempt open and a
// torn record; that is an unterminated session, not lost records.
func TestE2ECrashNotLost(t *testing.T) {
	for _, seed := range []string{"6", "7"} {
		session := synthSession(t, "--cameras", "0", "--seed", seed, "--fault", "crash", "--segment-size", "16384")
		out, errOut, code := run(t, "export", session, "-o", filepath.Join(t.TempDir(), "shard"))
		if code != exitOK || strings.Contains(out, "records were lost") || !strings.Contains(out, "journal: unterminated session (no END record)") {
			t.Fatalf("seed %s: exit %d\n%s\n%s", seed, code, out, errOut)
		}
	}
	session := synthSession(t, "--cameras", "0", "--seed", "6")
	out := mustRun(t, "export", session, "-o", filepath.Join(t.TempDir(), "shard"))
	if strings.Contains(out, "unterminated") {
		t.Fatalf("a closed session called unterminated:\n%s", out)
	}
}

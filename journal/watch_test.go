package journal

import (
	"os"
	"path/filepath"
	"testing"
)

// A watcher sees the records appended since it last looked, across
// segments, a frame not yet whole only once it is, and END.
func TestWatcherSeesAppendedRecords(t *testing.T) {
	dir := t.TempDir()
	w := NewWatcher(dir)
	if a, err := w.Poll(); err != nil || a.Records != 0 {
		t.Fatalf("before the journal exists: %+v, %v", a, err)
	}
	jw, err := NewWriter(dir, WriterOptions{SegmentSize: 400})
	if err != nil {
		t.Fatal(err)
	}
	if err := jw.WriteSession(testSession()); err != nil {
		t.Fatal(err)
	}
	if err := jw.WriteSpec(testSpecRecord(t)); err != nil {
		t.Fatal(err)
	}
	if err := jw.Sync(); err != nil {
		t.Fatal(err)
	}
	a, err := w.Poll()
	if err != nil || a.Records != 2 || a.Events != 0 || a.End {
		t.Fatalf("after SESSION and SPEC: %+v, %v", a, err)
	}
	for i := range 20 {
		if err := jw.WriteEvent(Event{T: int64(i + 1), Kind: EventPrompt, Text: "a prompt long enough to fill segments"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := jw.Sync(); err != nil {
		t.Fatal(err)
	}
	segments, _ := filepath.Glob(filepath.Join(dir, "journal", "*.cjl"))
	if len(segments) < 2 {
		t.Fatalf("%d segments, want several", len(segments))
	}
	// Half of a frame appended by hand: not yet a record.
	last := segments[len(segments)-1]
	before, _ := os.ReadFile(last)
	a, err = w.Poll()
	if err != nil || a.Records != 20 || a.Events != 20 {
		t.Fatalf("after 20 events over %d segments: %+v, %v", len(segments), a, err)
	}
	if err := jw.WriteEnd(End{T: 100, Reason: "completed"}); err != nil {
		t.Fatal(err)
	}
	if err := jw.Close(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(last)
	if len(after) <= len(before) {
		t.Fatalf("END did not grow the last segment")
	}
	whole := append([]byte(nil), after...)
	if err := os.WriteFile(last, whole[:len(before)+5], 0o644); err != nil {
		t.Fatal(err)
	}
	if a, err := w.Poll(); err != nil || a.Records != 0 || a.End {
		t.Fatalf("with END half written: %+v, %v", a, err)
	}
	if err := os.WriteFile(last, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	if a, err := w.Poll(); err != nil || a.Records != 1 || !a.End {
		t.Fatalf("with END whole: %+v, %v", a, err)
	}
	if a, err := w.Poll(); err != nil || a.Records != 0 {
		t.Fatalf("nothing new: %+v, %v", a, err)
	}
	j, err := Open(t.Context(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := j.LatestTime(); got != 100 {
		t.Errorf("LatestTime %d, want END's 100", got)
	}
}

package journal

import (
	"errors"
	"testing"
)

// A restarted recorder starts a new segment with the session's SESSION
// record; the segment before it may end torn. That signature, and zeroed
// preallocated space at a segment's end, are read without error; every
// other damage of a segment that is not the last stays corruption.
func TestRestartSignature(t *testing.T) {
	t.Parallel()
	event := func(tNs int64) []byte {
		return jsonFrame(t, TypeEvent, Event{T: tNs, Kind: EventRunStart})
	}
	torn := event(1)[:20]
	session := jsonFrame(t, TypeSession, testSession())
	other := testSession()
	other.SessionID = "test-2"
	otherSession := jsonFrame(t, TypeSession, other)
	zeros := make([]byte, 4096)
	for _, c := range []struct {
		name     string
		segs     [][]byte
		want     error // nil: opens
		restarts int
		tornAt   int64 // offset of the torn range before the first restart; 0: none
		torn     bool  // a torn tail at the end of the last segment
	}{
		{name: "torn, then restart", segs: [][]byte{cat(prefix(t), event(1), torn), cat(segHeader(2), session, event(2))},
			restarts: 1, tornAt: int64(len(prefix(t)) + len(event(1)))},
		{name: "clean restart", segs: [][]byte{cat(prefix(t), event(1)), cat(segHeader(2), session, event(2))}, restarts: 1},
		{name: "torn preallocated, then restart", segs: [][]byte{cat(prefix(t), event(1), torn, zeros), cat(segHeader(2), session, event(2), zeros)},
			restarts: 1, tornAt: int64(len(prefix(t)) + len(event(1)))},
		{name: "preallocated segments", segs: [][]byte{cat(prefix(t), event(1), zeros), cat(segHeader(2), event(2), zeros)}},
		{name: "preallocated, torn at the end", segs: [][]byte{cat(prefix(t), event(1), zeros), cat(segHeader(2), event(2), torn, zeros)}, torn: true},
		{name: "torn middle, no restart", segs: [][]byte{cat(prefix(t), event(1), torn), cat(segHeader(2), event(2))}, want: ErrCorrupt},
		{name: "damage before the torn end of a restart", segs: [][]byte{cat(prefix(t), torn, event(1), torn), cat(segHeader(2), session, event(2))}, want: ErrCorrupt},
		{name: "SESSION not first in the next segment", segs: [][]byte{cat(prefix(t), event(1), torn), cat(segHeader(2), event(2), session)}, want: ErrCorrupt},
		{name: "restart of another session", segs: [][]byte{cat(prefix(t), event(1), torn), cat(segHeader(2), otherSession, event(2))}, want: ErrInvalid},
		{name: "SESSION twice in segment 1", segs: [][]byte{cat(prefix(t), session, event(1))}, want: ErrInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, err := open(t, writeSegments(t, c.segs...), Options{})
			if c.want != nil {
				if !errors.Is(err, c.want) {
					t.Fatalf("Open: %v, want %v", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if got := len(j.Report.Restarts); got != c.restarts {
				t.Fatalf("%d restarts reported, want %d: %+v", got, c.restarts, j.Report.Restarts)
			}
			if c.restarts > 0 {
				r := j.Report.Restarts[0]
				if r.Segment != "000002.cjl" {
					t.Errorf("restart in %s, want 000002.cjl", r.Segment)
				}
				switch {
				case c.tornAt == 0 && r.Torn != nil:
					t.Errorf("a clean restart reports a torn range %+v", r.Torn)
				case c.tornAt != 0 && (r.Torn == nil || r.Torn.Segment != "000001.cjl" || r.Torn.Offset != c.tornAt):
					t.Errorf("torn range %+v, want 000001.cjl at %d", r.Torn, c.tornAt)
				}
			}
			if (j.Report.Torn != nil) != c.torn {
				t.Errorf("torn tail %+v, want one: %v", j.Report.Torn, c.torn)
			}
			if len(j.Events) != 2 {
				t.Errorf("%d events read, want 2", len(j.Events))
			}
		})
	}
}

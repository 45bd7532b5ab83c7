package export

import (
	"fmt"
	"github.com/ceres-robotics/ceres-export/internal/textout"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
)

// WriteText writes the report as the text export prints without --json,
// for the shard dir.
func (r *Report) WriteText(w io.Writer, dir string) error {
	ew := textout.New(w)
	fmt.Fprintf(ew, "shard %s\n", dir)
	fmt.Fprintf(ew, "  session %s, %d fps (%s)\n", r.SessionID, r.FPS, r.FPSSource)
	fmt.Fprintf(ew, "  %d episodes, %d frames; attempts:", r.Episodes, r.Frames)
	fates := make([]string, 0, len(r.Fates))
	for f, n := range r.Fates {
		fates = append(fates, fmt.Sprintf(" %d %s", n, f))
	}
	sort.Strings(fates)
	fmt.Fprintln(ew, strings.Join(fates, ","))
	fmt.Fprintf(ew, "  features: %s\n", strings.Join(r.Features, ", "))
	for _, id := range slices.Sorted(maps.Keys(r.Cameras)) {
		c := r.Cameras[id]
		fmt.Fprintf(ew, "  camera %s: %dx%d, %d frames, %d in gaps, %s\n", id, c.Width, c.Height, c.Frames, c.Gaps, strings.Join(c.Files, ", "))
	}
	for _, id := range slices.Sorted(maps.Keys(r.Sensors)) {
		c := r.Sensors[id]
		fmt.Fprintf(ew, "  stream %s: %d frames back-filled, %d stale\n", id, c.BackFilled, c.Stale)
	}
	fmt.Fprintf(ew, "  task specification %s", r.Spec.Hash)
	if r.Spec.RecordedHash != r.Spec.Hash {
		fmt.Fprintf(ew, " (recorded %s, %d differences)", r.Spec.RecordedHash, len(r.Spec.Differences))
	}
	fmt.Fprintln(ew)
	if t := r.Journal.Torn; t != nil {
		fmt.Fprintf(ew, "  journal: torn tail in %s at offset %d, %d bytes dropped\n", t.Segment, t.Offset, t.Bytes)
	}
	for _, rs := range r.Journal.Restarts {
		if rs.Torn != nil {
			fmt.Fprintf(ew, "  journal: recorder restarted in %s; torn range of %s at offset %d, %d bytes dropped\n", rs.Segment, rs.Torn.Segment, rs.Torn.Offset, rs.Torn.Length)
		} else {
			fmt.Fprintf(ew, "  journal: recorder restarted in %s\n", rs.Segment)
		}
	}
	if r.Journal.Unterminated {
		fmt.Fprintf(ew, "  journal: unterminated session (no END record): the recorder never closed it, so its last attempt may be incomplete\n")
	}
	for _, sk := range r.Journal.Skipped {
		fmt.Fprintf(ew, "  journal: salvage skipped %s offset %d, %d bytes\n", sk.Segment, sk.Offset, sk.Length)
	}
	for _, d := range r.Spec.Differences {
		fmt.Fprintf(ew, "  spec change %s: %s -> %s\n", d.Path, orNone(d.Old), orNone(d.New))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(ew, "  note: %s\n", n)
	}
	return ew.Err()
}

// orNone is "-" for an empty value.
func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

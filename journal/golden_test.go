package journal

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestReportGolden compares the JSON Report of a few journals with golden
// files (refresh with go test ./journal -run ReportGolden -update).
func TestReportGolden(t *testing.T) {
	t.Parallel()
	okEv := evFrame(t, `{"t":1,"kind":"run_start"}`)
	cases := []struct {
		name string
		dir  func(t *testing.T) string
		opts Options
	}{
		{"tiny", func(*testing.T) string { return "testdata/tiny-session" }, Options{}},
		{"standard-3-segments", func(t *testing.T) string {
			return writeSession(t, WriterOptions{SegmentSize: 700}, standardSteps(t))
		}, Options{}},
		{"torn-unterminated", func(t *testing.T) string {
			src := writeSession(t, WriterOptions{}, standardSteps(t))
			seg := readSegment(t, src, 1)
			return writeSegments(t, seg[:len(seg)-10])
		}, Options{}},
		{"salvaged-unknowns", func(t *testing.T) string {
			bad := cat(okEv)
			bad[20] ^= 0x40
			return writeSegments(t,
				cat(prefix(t), okEv, bad, []byte{0, 0, 0}, frame(77, []byte("future")),
					evFrame(t, `{"t":2,"kind":"future_kind"}`)),
				cat(segHeader(2), samplesFrame(samplesPayload(0, 0, 0, 2, rawImuBody(0, 2))), bytes.Repeat([]byte{0xff}, 100)))
		}, Options{Salvage: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j, err := Open(t.Context(), c.dir(t), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(j.Report, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "golden", c.name+".json")
			if *update {
				must(t, os.MkdirAll(filepath.Dir(path), 0o755))
				must(t, os.WriteFile(path, got, 0o644))
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("report differs from %s (run with -update to accept):\n%s", path, got)
			}
		})
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/plan"
)

// tinySession is the example journal an independent implementation wrote
// (journal/testdata/tiny-session; its README lists what it holds).
var tinySession = filepath.Join("..", "..", "journal", "testdata", "tiny-session")

func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

// tinyAttempts is the attempts table of journal/testdata/tiny-session/README.md.
var tinyAttempts = []struct {
	cycle, rep, attempt int
	task                string
	start, end          int64
	fate                plan.Fate
	outcome             string
}{
	{1, 1, 1, "wave", 1e9, 2e9, plan.Retried, ""},
	{1, 1, 2, "wave", 8e9, 9e9, plan.Accepted, "pass"},
	{1, 2, 1, "wave", 15e9, 16e9, plan.Accepted, ""},
}

func TestJournalInspectTinySessionText(t *testing.T) {
	code, out, errOut := runMain(t, "journal", "inspect", tinySession)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, want := range []string{
		"session   tiny-1\n",
		"imu  sensor  10 Hz  seq int32, accel float32[3]  220 samples in 2 batches",
		"records:  SESSION 1, SPEC 1, EVENT 18, SAMPLES 2, END 1\n",
		"000001.cjl  6336 bytes  23 records",
		"end       completed at 22s\n",
		"torn tail: none\n",
		"attempts at 10 fps (sensor stream imu): 2 episode(s), 20 frame(s)\n",
		"fates: accepted 2, retried 1\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The attempts table, row by row: cycle, task, rep, attempt, window,
	// frames, fate, outcome.
	row := regexp.MustCompile(`(?m)^  (\d+) +(\S+) +(\d+) +(\d+) +(\[.*?\)) +(\d+) +(retried|episode \d+) +(\S+) +\S+$`)
	rows := row.FindAllStringSubmatch(out, -1)
	want := [][]string{
		{"1", "wave", "1", "1", "[1s, 2s)", "10", "retried", "-"},
		{"1", "wave", "1", "2", "[8s, 9s)", "10", "episode 0", "pass"},
		{"1", "wave", "2", "1", "[15s, 16s)", "10", "episode 1", "-"},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d attempt rows, want %d:\n%s", len(rows), len(want), out)
	}
	for i, r := range rows {
		for j, w := range want[i] {
			if r[j+1] != w {
				t.Errorf("row %d column %d = %q, want %q (row %q)", i, j, r[j+1], w, r[0])
			}
		}
	}
}

func TestJournalInspectTinySessionJSON(t *testing.T) {
	code, out, errOut := runMain(t, "journal", "inspect", "--json", tinySession)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var got struct {
		MessageType string `json:"message_type"`
		plan.Inspection
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("decode: %v\n%s", err, out)
	}
	if got.MessageType != "journal_inspect" {
		t.Errorf("message_type %q, want journal_inspect", got.MessageType)
	}
	if dec.More() {
		t.Error("more than one JSON document")
	}
	if got.Session.SessionID != "tiny-1" || got.End == nil || got.End.Reason != "completed" || got.Report.Unterminated {
		t.Errorf("session %+v end %+v unterminated %v", got.Session, got.End, got.Report.Unterminated)
	}
	if got.Spec == nil || got.Spec.Hash != "aee59fc5d374ceabbde2329a52ced8b16ad6f318cac5cb619e4b4a824187a502" {
		t.Errorf("spec %+v", got.Spec)
	}
	if got.Plan.FPS != 10 || got.FPSSource != "sensor stream imu" {
		t.Errorf("fps %d from %q, want 10 from sensor stream imu", got.Plan.FPS, got.FPSSource)
	}
	if len(got.Plan.Attempts) != len(tinyAttempts) {
		t.Fatalf("%d attempts, want %d", len(got.Plan.Attempts), len(tinyAttempts))
	}
	episode := 0
	for i, w := range tinyAttempts {
		a := got.Plan.Attempts[i]
		wantKey := plan.Key{Cycle: w.cycle, Task: w.task, Repetition: w.rep, Attempt: w.attempt}
		if a.Key != wantKey || a.Start != w.start || a.End != w.end || !a.HasEnd || a.Fate != w.fate || a.Outcome != w.outcome || a.Length != 10 {
			t.Errorf("attempt %d = %+v, want %+v", i, a, w)
		}
		if w.fate == plan.Accepted {
			if a.Episode != episode {
				t.Errorf("attempt %d: episode %d, want %d", i, a.Episode, episode)
			}
			episode++
		}
	}
	if len(got.Plan.Episodes) != 2 || got.Plan.Episodes[0].Start != 8e9 || got.Plan.Episodes[1].Start != 15e9 {
		t.Errorf("episodes %+v", got.Plan.Episodes)
	}
}

func TestJournalInspectFPSFlag(t *testing.T) {
	code, out, _ := runMain(t, "journal", "inspect", "--fps", "30", tinySession)
	if code != exitOK || !strings.Contains(out, "attempts at 30 fps (--fps): 2 episode(s), 60 frame(s)") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// frame is one record of a segment, for tests that damage journals.
type frame struct {
	typ     byte
	payload []byte
}

func readFrames(t *testing.T, seg []byte) (header []byte, frames []frame) {
	t.Helper()
	off := 16
	for off < len(seg) {
		n := int(binary.LittleEndian.Uint32(seg[off:]))
		frames = append(frames, frame{typ: seg[off+8], payload: seg[off+9 : off+9+n]})
		off += 9 + n
	}
	return seg[:16], frames
}

func writeFrames(header []byte, frames []frame) []byte {
	out := append([]byte(nil), header...)
	for _, f := range frames {
		var h [9]byte
		binary.LittleEndian.PutUint32(h[0:], uint32(len(f.payload)))
		crc := crc32.Update(0, crc32.MakeTable(crc32.Castagnoli), []byte{f.typ})
		binary.LittleEndian.PutUint32(h[4:], crc32.Update(crc, crc32.MakeTable(crc32.Castagnoli), f.payload))
		h[8] = f.typ
		out = append(append(out, h[:]...), f.payload...)
	}
	return out
}

// copySession copies the tiny session into a temporary directory after
// passing its segment through damage, and returns the copy's path.
func copySession(t *testing.T, damage func(seg []byte) []byte) string {
	t.Helper()
	seg, err := os.ReadFile(filepath.Join(tinySession, "journal", "000001.cjl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "journal"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "journal", "000001.cjl"), damage(bytes.Clone(seg)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// firstOfType returns the byte offset of the first frame of type typ.
func firstOfType(t *testing.T, seg []byte, typ byte) int {
	t.Helper()
	off := 16
	for off < len(seg) {
		if seg[off+8] == typ {
			return off
		}
		off += 9 + int(binary.LittleEndian.Uint32(seg[off:]))
	}
	t.Fatalf("no record of type %d", typ)
	return 0
}

func TestJournalInspectExitCodes(t *testing.T) {
	flipSamples := func(seg []byte) []byte {
		off := firstOfType(t, seg, 4)
		seg[off+9+100] ^= 0xff // inside the first SAMPLES payload: a bad CRC with valid frames after it
		return seg
	}
	tests := []struct {
		name     string
		args     func(t *testing.T) []string
		code     int
		stdout   []string // substrings of stdout
		stderr   string   // substring of stderr
		noStdout bool
	}{
		{
			name: "missing directory",
			args: func(t *testing.T) []string {
				return []string{"journal", "inspect", filepath.Join(t.TempDir(), "absent")}
			},
			code: exitUsage, stderr: "no such file", noStdout: true,
		},
		{
			name: "no argument",
			args: func(*testing.T) []string { return []string{"journal", "inspect"} },
			code: exitUsage, stderr: "accepts 1 arg", noStdout: true,
		},
		{
			name: "negative fps",
			args: func(*testing.T) []string { return []string{"journal", "inspect", "--fps", "-3", tinySession} },
			code: exitUsage, stderr: "--fps -3", noStdout: true,
		},
		{
			name: "corrupt mid-segment",
			args: func(t *testing.T) []string {
				return []string{"journal", "inspect", copySession(t, flipSamples)}
			},
			code: exitCorrupt, stderr: "000001.cjl@1579", noStdout: true,
		},
		{
			name: "corrupt mid-segment, salvaged",
			args: func(t *testing.T) []string {
				return []string{"journal", "inspect", "--salvage", copySession(t, flipSamples)}
			},
			code:   exitOK,
			stdout: []string{"skipped (salvage):\n  000001.cjl@1579,", "fates: accepted 2, retried 1", "records:  SESSION 1, SPEC 1, EVENT 18, SAMPLES 1, END 1"},
		},
		{
			name: "segment gap",
			args: func(t *testing.T) []string {
				dir := copySession(t, func(seg []byte) []byte { return seg })
				if err := os.Rename(filepath.Join(dir, "journal", "000001.cjl"), filepath.Join(dir, "journal", "000002.cjl")); err != nil {
					t.Fatal(err)
				}
				return []string{"journal", "inspect", dir}
			},
			code: exitCorrupt, stderr: "000001.cjl", noStdout: true,
		},
		{
			name: "bad magic",
			args: func(t *testing.T) []string {
				return []string{"journal", "inspect", copySession(t, func(seg []byte) []byte { seg[0] = 'X'; return seg })}
			},
			code: exitCorrupt, noStdout: true,
		},
		{
			name: "crash: torn tail inside the last attempt_end",
			args: func(t *testing.T) []string {
				return []string{"journal", "inspect", copySession(t, func(seg []byte) []byte { return seg[:4432+20] })}
			},
			code: exitOK,
			stdout: []string{
				"torn tail: 000001.cjl@4432, 20 bytes dropped\n",
				"unterminated: yes (no END record)\n",
				"end       none: unterminated",
				"incomplete",
				"fates: accepted 1, retried 1, incomplete 1\n",
			},
		},
		{
			name: "specification hash mismatch",
			args: func(t *testing.T) []string {
				return []string{"journal", "inspect", copySession(t, func(seg []byte) []byte {
					header, frames := readFrames(t, seg)
					for i := range frames {
						if frames[i].typ == 2 {
							frames[i].payload = bytes.Replace(frames[i].payload, []byte(`"hash":"aee5`), []byte(`"hash":"bee5`), 1)
						}
					}
					return writeFrames(header, frames)
				})}
			},
			code: exitFindings, noStdout: true,
		},
		{
			name: "event time going backwards",
			args: func(t *testing.T) []string {
				return []string{"journal", "inspect", copySession(t, func(seg []byte) []byte {
					header, frames := readFrames(t, seg)
					for i := range frames {
						if frames[i].typ == 3 && bytes.Contains(frames[i].payload, []byte(`"kind":"run_end"`)) {
							frames[i].payload = []byte(`{"t":5,"kind":"run_end"}`)
						}
					}
					return writeFrames(header, frames)
				})}
			},
			code: exitFindings, noStdout: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, tt.args(t)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tt.code, errOut)
			}
			if tt.noStdout && out != "" {
				t.Errorf("stdout not empty:\n%s", out)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if !strings.Contains(errOut, tt.stderr) {
				t.Errorf("stderr %q lacks %q", errOut, tt.stderr)
			}
		})
	}
}

// TestJournalInspectFlags checks flag parsing alone, through runF.
func TestJournalInspectFlags(t *testing.T) {
	tests := []struct {
		args []string
		want JournalInspectOptions
	}{
		{[]string{"d"}, JournalInspectOptions{Dir: "d"}},
		{[]string{"--json", "--salvage", "--fps", "25", "d"}, JournalInspectOptions{Dir: "d", JSON: true, Salvage: true, FPS: 25}},
	}
	for _, tt := range tests {
		var got JournalInspectOptions
		cmd := newJournalInspectCmd(streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}, func(_ context.Context, o JournalInspectOptions, _ streams) error {
			got = o
			return nil
		})
		cmd.SetArgs(tt.args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if got != tt.want {
			t.Errorf("%v: options %+v, want %+v", tt.args, got, tt.want)
		}
	}
}

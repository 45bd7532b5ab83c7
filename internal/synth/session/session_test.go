package session

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/journal"
)

// small are options for quick sessions: the example specification at a
// tenth of its durations, one camera planned (its file is package synth's
// to encode).
func small(seed uint64) Options {
	return Options{Seed: seed, TimeScale: 0.1, Cameras: 1, Width: 64, Height: 48}
}

func taskTypes(j *journal.Journal) func(string) (string, bool) {
	return func(id string) (string, bool) {
		t, ok := j.Spec.Task(id)
		return t.Type, ok
	}
}

func TestWriteReadsBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	res, _, err := Write(dir, small(7))
	if err != nil {
		t.Fatal(err)
	}
	j, err := journal.Open(ctx, dir, journal.Options{})
	if err != nil {
		t.Fatalf("reading the synthetic journal: %v", err)
	}
	if j.Info.SessionID != res.SessionID || j.Spec.Hash() != res.SpecHash {
		t.Errorf("session %q spec %s, want %q %s", j.Info.SessionID, j.Spec.Hash(), res.SessionID, res.SpecHash)
	}
	if j.End == nil || j.End.Reason != "completed" {
		t.Errorf("END = %+v, want completed", j.End)
	}
	if len(j.Events) != res.Events {
		t.Errorf("read %d events, wrote %d", len(j.Events), res.Events)
	}
	if len(j.Media) != 1 || j.Media[0].Stream != "front" {
		t.Errorf("media = %+v", j.Media)
	}
	// Sample values reveal their index: accel.x of sample i is i.
	c, err := j.Samples("imu")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n, prev := 0, int64(-1)
	for c.Next() {
		b := c.Batch()
		for i := 0; i < b.Len(); i++ {
			if got := b.Float64At(0, 3*i); got != float64(n) {
				t.Fatalf("imu sample %d: accel.x = %v", n, got)
			}
			if b.Times[i] <= prev {
				t.Fatalf("imu sample %d at %d after %d", n, b.Times[i], prev)
			}
			prev = b.Times[i]
			n++
		}
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	if n != res.Samples["imu"] {
		t.Errorf("read %d imu samples, wrote %d", n, res.Samples["imu"])
	}

	p, err := plan.Build(j.Events, taskTypes(j), 30)
	if err != nil {
		t.Fatal(err)
	}
	fates := map[plan.Fate]int{}
	for _, a := range p.Attempts {
		fates[a.Fate]++
	}
	// The example runs 2 cycles of 3 timed and 1 open attempts; the first
	// two attempts are retried, once while recording and once after it.
	if fates[plan.Accepted] != 8 || fates[plan.Retried] < 2 {
		t.Errorf("fates = %v, want 8 accepted and at least 2 retried", fates)
	}
	var whileRecording, afterEnd bool
	for _, a := range p.Attempts {
		if a.Fate == plan.Retried {
			whileRecording = whileRecording || !a.HasEnd
			afterEnd = afterEnd || a.HasEnd
		}
	}
	if !whileRecording || !afterEnd {
		t.Errorf("retries while recording %v, after the end %v; want both", whileRecording, afterEnd)
	}
}

// TestAllDtypes: the probe stream holds a field of every dtype the other
// streams lack, and its values reveal their sample index exactly.
func TestAllDtypes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	opts := small(3)
	opts.AllDtypes = true
	res, _, err := Write(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	j, err := journal.Open(ctx, dir, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var probe *journal.Stream
	for i := range j.Info.Streams {
		if j.Info.Streams[i].ID == "probe" {
			probe = &j.Info.Streams[i]
		}
	}
	if probe == nil {
		t.Fatalf("no probe stream in %+v", j.Info.Streams)
	}
	want := []string{"count int64", "pair int32", "bytes uint8", "flags bool", "level float64"}
	for i, f := range probe.Fields {
		if got := f.Name + " " + string(f.Dtype); i >= len(want) || got != want[i] {
			t.Errorf("probe field %d = %s, want %v", i, got, want)
		}
	}
	c, err := j.Samples("probe")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n := 0
	for c.Next() {
		b := c.Batch()
		for i := 0; i < b.Len(); i++ {
			count := int64(binary.LittleEndian.Uint64(b.Fields[0][8*i:]))
			got := []float64{b.Float64At(1, 2*i), b.Float64At(1, 2*i+1), b.Float64At(2, 2*i), b.Float64At(3, 2*i),
				b.Float64At(4, 2*i)}
			wantV := []float64{float64(-n), float64(1000 * n), float64(n % 256), float64(n % 2), 1e9 + float64(n)/3}
			if count != 1<<60+int64(n) || !slices.Equal(got, wantV) {
				t.Fatalf("probe sample %d: count %d, values %v; want %d, %v", n, count, got, int64(1)<<60+int64(n), wantV)
			}
			n++
		}
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 || n != res.Samples["probe"] {
		t.Errorf("read %d probe samples, wrote %d", n, res.Samples["probe"])
	}
}

func TestJournalFaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("crash", func(t *testing.T) {
		dir := t.TempDir()
		o := small(5)
		o.Faults.Crash = true
		if _, _, err := Write(dir, o); err != nil {
			t.Fatal(err)
		}
		j, err := journal.Open(ctx, dir, journal.Options{})
		if err != nil {
			t.Fatalf("a crashed session must stay readable: %v", err)
		}
		if j.End != nil || j.Report.Torn == nil {
			t.Errorf("END %+v torn %+v; want no END and a torn tail", j.End, j.Report.Torn)
		}
		p, err := plan.Build(j.Events, taskTypes(j), 30)
		if err != nil {
			t.Fatal(err)
		}
		incomplete := 0
		for _, a := range p.Attempts {
			if a.Fate == plan.Incomplete {
				incomplete++
			}
		}
		if incomplete != 1 {
			t.Errorf("%d incomplete attempts, want the one the crash cut", incomplete)
		}
	})
	t.Run("corrupt", func(t *testing.T) {
		dir := t.TempDir()
		o := small(5)
		o.Faults.Corrupt = true
		o.Cameras = 0
		if _, _, err := Write(dir, o); err != nil {
			t.Fatal(err)
		}
		if _, err := journal.Open(ctx, dir, journal.Options{}); !errors.Is(err, journal.ErrCorrupt) {
			t.Fatalf("open = %v, want corruption", err)
		}
		j, err := journal.Open(ctx, dir, journal.Options{Salvage: true})
		if err != nil {
			t.Fatalf("salvage: %v", err)
		}
		if len(j.Report.Skipped) != 1 {
			t.Errorf("salvage skipped %+v, want one range", j.Report.Skipped)
		}
	})
}

// TestJournalDeterministic: the same seed and options give the same journal
// bytes and the same camera plan.
func TestJournalDeterministic(t *testing.T) {
	t.Parallel()
	a, b := t.TempDir(), t.TempDir()
	var plans [2][]CameraFile
	for i, d := range []string{a, b} {
		_, cams, err := Write(d, small(3))
		if err != nil {
			t.Fatal(err)
		}
		plans[i] = cams
	}
	x, err := os.ReadFile(filepath.Join(a, "journal", "000001.cjl"))
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(filepath.Join(b, "journal", "000001.cjl"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x, y) || len(plans[0]) != 1 || !slices.Equal(plans[0][0].PTS, plans[1][0].PTS) {
		t.Error("two runs with the same seed differ")
	}
}

// synth's text names the session, its hash, what it holds and each fault.
func TestResultText(t *testing.T) {
	r := &Result{Dir: "/s", SessionID: "id", SpecHash: "h", Events: 3, Samples: map[string]int{"imu": 10},
		Frames: map[string]int{"front": 5}, End: 1_500_000_000, Faults: []string{"crash"}}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "session id written to /s\n  task specification h\n  3 events, samples map[imu:10], camera frames map[front:5], 1.5 s\n  fault: crash\n"
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
}

package export

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/output"
	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/internal/profile"
	synthsession "github.com/ceres-robotics/ceres-export/internal/synth/session"
	"github.com/ceres-robotics/ceres-export/internal/testtree"
	"github.com/ceres-robotics/ceres-export/journal"
)

// smallSession writes a short synthetic session (the example specification
// at a tenth of its durations) and returns its directory.
func smallSession(t testing.TB, o synthsession.Options) string {
	t.Helper()
	if o.TimeScale == 0 {
		o.TimeScale = 0.1
	}
	if o.Width == 0 {
		o.Width, o.Height = 64, 48
	}
	dir := filepath.Join(t.TempDir(), "session")
	writeSession(t, dir, o)
	return dir
}

// exportWithVideo is Export with FFmpeg where the build has it (testVideo)
// unless opts names its own Video.
func exportWithVideo(ctx context.Context, sessionDir, shardDir string, opts Options) (*Report, error) {
	if opts.VideoFiles == nil {
		opts.VideoFiles = testVideo()
	}
	return Export(ctx, sessionDir, shardDir, opts)
}

// table is a Parquet file read back through arrow-go, an implementation
// independent of the parquet-go writer.
type table struct {
	arrow.Table
}

func readTable(t testing.TB, path string) table {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tbl, err := pqarrow.ReadTable(context.Background(), f, nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	t.Cleanup(tbl.Release)
	return table{tbl}
}

// column returns the values of column name as float64 rows of its width.
func (tb table) column(t testing.TB, name string) [][]float64 {
	t.Helper()
	idx := tb.Schema().FieldIndices(name)
	if len(idx) != 1 {
		t.Fatalf("column %q: found %d times in %s", name, len(idx), tb.Schema())
	}
	var rows [][]float64
	for _, chunk := range tb.Column(idx[0]).Data().Chunks() {
		switch a := chunk.(type) {
		case *array.FixedSizeList:
			n := int(a.DataType().(*arrow.FixedSizeListType).Len())
			vals := a.ListValues()
			for i := 0; i < a.Len(); i++ {
				row := make([]float64, n)
				for e := range row {
					row[e] = scalar(t, vals, i*n+e)
				}
				rows = append(rows, row)
			}
		default:
			for i := 0; i < a.Len(); i++ {
				rows = append(rows, []float64{scalar(t, a, i)})
			}
		}
	}
	return rows
}

func (tb table) ints(t testing.TB, name string) []int64 {
	var out []int64
	for _, r := range tb.column(t, name) {
		out = append(out, int64(r[0]))
	}
	return out
}

func scalar(t testing.TB, a arrow.Array, i int) float64 {
	switch v := a.(type) {
	case *array.Float32:
		return float64(v.Value(i))
	case *array.Float64:
		return v.Value(i)
	case *array.Int32:
		return float64(v.Value(i))
	case *array.Int64:
		return float64(v.Value(i))
	case *array.Uint8:
		return float64(v.Value(i))
	case *array.Boolean:
		if v.Value(i) {
			return 1
		}
		return 0
	}
	t.Fatalf("unexpected array type %s", a.DataType())
	return 0
}

// sampleIDs reads every sample of a stream straight from the journal: its
// time and the sample number its values reveal (element elem of field).
// Salvaged journals lack some samples, so positions are not numbers.
func sampleIDs(t testing.TB, j *journal.Journal, stream string, field, elem int) (times []int64, ids []float64) {
	c, err := j.Samples(stream)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for c.Next() {
		b := c.Batch()
		times = append(times, b.Times...)
		for i := 0; i < b.Len(); i++ {
			ids = append(ids, b.Float64At(field, i*b.FieldElems(field)+elem))
		}
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	return times, ids
}

// heldIndex is the index of the latest time ≤ at, or 0 (back-fill) when
// every sample is later.
func heldIndex(times []int64, at int64) int {
	i := sort.Search(len(times), func(i int) bool { return times[i] > at })
	return max(i-1, 0)
}

// checkShard proves, row by row, that the shard at dir holds exactly the
// accepted attempts of the session at sessionDir, with every sensor value the
// latest sample at or before its frame's time.
func checkShard(t *testing.T, sessionDir, dir string, rep *Report) {
	t.Helper()
	ctx := context.Background()
	j, err := journal.Open(ctx, sessionDir, journal.Options{Salvage: rep.Exporter.Options.Salvage})
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(j.Events, plan.SpecTypes(j.Spec), rep.FPS)
	if err != nil {
		t.Fatal(err)
	}
	data := readTable(t, filepath.Join(dir, filepath.FromSlash(layout.DataPath(0, 0))))
	eps := readTable(t, filepath.Join(dir, filepath.FromSlash(layout.EpisodesPath(0, 0))))
	fps := rep.FPS

	index, epIdx, frame := data.ints(t, "index"), data.ints(t, "episode_index"), data.ints(t, "frame_index")
	ts := data.column(t, "timestamp")
	accel := data.column(t, "observation.imu.accel")
	counter := data.ints(t, "observation.gripper.counter")
	force := data.column(t, "observation.gripper.force")
	imuTimes, imuIDs := sampleIDs(t, j, "imu", 0, 0)
	gripTimes, gripIDs := sampleIDs(t, j, "gripper", 1, 0)

	starts, ends := eps.ints(t, layout.ColStartNS), eps.ints(t, layout.ColEndNS)
	lengths, from := eps.ints(t, "length"), eps.ints(t, "dataset_from_index")
	if len(starts) != len(p.Episodes) {
		t.Fatalf("%d episodes in the shard, the plan has %d accepted", len(starts), len(p.Episodes))
	}
	// The windows no row may come from: retried attempts (up to their
	// attempt_end, or to the retry when it came while recording) and
	// incomplete ones (to the end of the journal).
	type window struct {
		key        plan.Key
		fate       plan.Fate
		start, end int64
	}
	var excluded []window
	for _, a := range p.Attempts {
		if a.Fate != plan.Retried && a.Fate != plan.Incomplete {
			continue
		}
		w := window{key: a.Key, fate: a.Fate, start: a.Start, end: a.End}
		if !a.HasEnd {
			w.end = 1 << 62
			for _, e := range j.Events {
				if e.Kind == journal.EventRetry && e.Task == a.Task && e.Cycle == a.Cycle && e.Repetition == a.Repetition && e.Attempt == a.Attempt {
					w.end = e.T
				}
			}
		}
		excluded = append(excluded, w)
	}
	if len(excluded) == 0 {
		t.Fatal("the session has no retried or incomplete attempt to leave out; the test proves nothing")
	}
	total := 0
	for e, ep := range p.Episodes {
		if starts[e] != ep.Start || ends[e] != ep.End || int(lengths[e]) != ep.Length || int(from[e]) != total {
			t.Errorf("episode %d: window [%d,%d) length %d from %d; plan [%d,%d) length %d from %d",
				e, starts[e], ends[e], lengths[e], from[e], ep.Start, ep.End, ep.Length, total)
		}
		total += ep.Length
	}
	if len(index) != total || rep.Frames != total {
		t.Fatalf("%d rows, report %d frames, plan %d", len(index), rep.Frames, total)
	}
	row := 0
	for e, ep := range p.Episodes {
		for k := 0; k < ep.Length; k++ {
			at := lerobot.FrameTime(ep.Start, k, fps)
			if index[row] != int64(row) || epIdx[row] != int64(e) || frame[row] != int64(k) {
				t.Fatalf("row %d: index %d episode %d frame %d, want %d %d %d", row, index[row], epIdx[row], frame[row], row, e, k)
			}
			if want := float32(float64(k) / float64(fps)); float32(ts[row][0]) != want {
				t.Fatalf("row %d: timestamp %v, want %v", row, ts[row][0], want)
			}
			for _, w := range excluded {
				if at >= w.start && at < w.end {
					t.Fatalf("row %d at %d lies in %s attempt %+v", row, at, w.fate, w.key)
				}
			}
			if want := imuIDs[heldIndex(imuTimes, at)]; accel[row][0] != want {
				t.Fatalf("row %d (episode %d frame %d at %d): imu sample %v, want %v", row, e, k, at, accel[row][0], want)
			}
			wantGrip := gripIDs[heldIndex(gripTimes, at)]
			if float64(counter[row]) != wantGrip || force[row][0] != float64(float32(wantGrip+0.25)) {
				t.Fatalf("row %d: gripper counter %d force %v, want sample %v", row, counter[row], force[row][0], wantGrip)
			}
			row++
		}
	}
}

func TestExportRowByRow(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		synth synthsession.Options
		opts  Options
	}{
		{"retries-and-camera", synthsession.Options{Seed: 11, Cameras: 1}, Options{Video: VideoOptions{Codec: "h264"}}},
		{"crash", synthsession.Options{Seed: 12, Faults: synthsession.Faults{Crash: true}}, Options{}},
		{"sensor-rate-fps", synthsession.Options{Seed: 13}, Options{FPS: 10}},
		{"corrupt-salvaged", synthsession.Options{Seed: 14, Faults: synthsession.Faults{Corrupt: true}}, Options{Salvage: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			session := smallSession(t, tc.synth)
			dest := filepath.Join(t.TempDir(), "shard")
			rep, err := exportWithVideo(ctx, session, dest, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			checkShard(t, session, dest, rep)
			if tc.synth.Faults.Crash && (rep.Journal.Torn == nil || rep.Fates[plan.Incomplete] != 1) {
				t.Errorf("crash: torn %+v, fates %v; want a torn tail and one incomplete attempt", rep.Journal.Torn, rep.Fates)
			}
			if tc.synth.Faults.Corrupt && len(rep.Journal.Skipped) == 0 {
				t.Errorf("salvage skipped nothing")
			}
			var stored map[string]any
			b, err := os.ReadFile(filepath.Join(dest, filepath.FromSlash(layout.ExportReportPath)))
			if err != nil || json.Unmarshal(b, &stored) != nil {
				t.Fatalf("export report: %v", err)
			}
		})
	}
}

// sameFiles reports, naming the comparison what, every file in one of a
// and b only or with other bytes.
func sameFiles(t *testing.T, what string, a, b map[string][]byte) {
	t.Helper()
	for _, name := range testtree.Differing(a, b) {
		t.Errorf("%s: %s differs", what, name)
	}
}

func TestExportDeterministic(t *testing.T) {
	ctx := context.Background()
	session := smallSession(t, synthsession.Options{Seed: 21})
	var runs []map[string][]byte
	for i := 0; i < 2; i++ {
		dest := filepath.Join(t.TempDir(), "shard")
		if _, err := exportWithVideo(ctx, session, dest, Options{}); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, testtree.Files(t, dest))
	}
	if len(runs[0]) < 7 {
		t.Fatalf("shard has only %d files", len(runs[0]))
	}
	sameFiles(t, "two exports of the same session", runs[0], runs[1])
}

func TestExportAtomic(t *testing.T) {
	ctx := context.Background()
	session := smallSession(t, synthsession.Options{Seed: 31, Cameras: 1, Faults: synthsession.Faults{CutCamera: true}})
	dest := filepath.Join(t.TempDir(), "shard")
	h264 := VideoOptions{Codec: "h264"}
	if _, err := exportWithVideo(ctx, session, dest, Options{Video: h264}); err != nil {
		t.Fatal(err)
	}
	before := testtree.Files(t, dest)

	if _, err := exportWithVideo(ctx, session, dest, Options{FPS: 10}); !errors.Is(err, output.ErrDestinationExists) {
		t.Errorf("export over an existing shard without Replace: %v, want ErrDestinationExists", err)
	}
	// A failing export with Replace leaves the old shard as it was: this
	// one fails at the very end, on the frames the cut camera file lacks.
	_, err := exportWithVideo(ctx, session, dest, Options{Replace: true, Strict: Strictness{Gaps: true}, Video: h264, FPS: 10})
	if !errors.Is(err, ErrStrict) {
		t.Fatalf("strict export of a cut camera: %v, want ErrStrict", err)
	}
	sameFiles(t, "the shard before and after a failed export", before, testtree.Files(t, dest))
	entries, err := os.ReadDir(filepath.Dir(dest))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "shard" {
			t.Errorf("left behind %s beside the shard", e.Name())
		}
	}
	// With Replace a good export swaps the shard in.
	rep, err := exportWithVideo(ctx, session, dest, Options{Replace: true, FPS: 10, Video: h264})
	if err != nil {
		t.Fatal(err)
	}
	checkShard(t, session, dest, rep)
}

func TestExportRefusals(t *testing.T) {
	ctx := context.Background()
	session := smallSession(t, synthsession.Options{Seed: 41, Cameras: 1, Faults: synthsession.Faults{CutCamera: true}})
	cases := []struct {
		name string
		opts Options
		want error
	}{
		{"strict-gaps", Options{Strict: Strictness{Gaps: true}, Video: VideoOptions{Codec: "h264"}}, ErrStrict},
		{"spec-missing-task", Options{TaskSpec: []byte(`{"schema":"ceres-task-specification","version":1,"runTitle":"x","cycleCount":1,
			"tasks":[{"id":"other","type":"timed","label":"l","instructions":"i","durationS":1,"repeatCount":1,"resetTimeS":5}]}`)}, ErrSpecMismatch},
		{"bad-codec", Options{Video: VideoOptions{Codec: "mjpeg"}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "shard")
			_, err := exportWithVideo(ctx, session, dest, tc.opts)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if _, err := os.Stat(dest); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused export created %s", dest)
			}
		})
	}
}

func TestFeatureMapping(t *testing.T) {
	session := smallSession(t, synthsession.Options{Seed: 51})
	dest := filepath.Join(t.TempDir(), "shard")
	state, _ := profile.ParseMapping("observation.state=imu.accel,imu.gyro")
	action, _ := profile.ParseMapping("action=gripper.force,gripper.closed")
	prof, err := profile.WithMappings(nil, []profile.Feature{state, action})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := exportWithVideo(context.Background(), session, dest, Options{Profile: prof})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"observation.state", "action", "observation.gripper.counter", "observation.gripper.mode"}
	if !slices.Equal(rep.Features, want) {
		t.Errorf("features %v, want %v", rep.Features, want)
	}
	data := readTable(t, filepath.Join(dest, filepath.FromSlash(layout.DataPath(0, 0))))
	st := data.column(t, "observation.state")
	if len(st) == 0 || len(st[0]) != 6 {
		t.Fatalf("observation.state rows %d width %d, want width 6", len(st), len(st[0]))
	}
	act := data.column(t, "action")
	counter := data.ints(t, "observation.gripper.counter")
	for i := range act {
		if act[i][0] != float64(counter[i])+0.25 {
			t.Fatalf("row %d: action[0] %v, want gripper sample %d's force", i, act[i][0], counter[i])
		}
	}
	for _, bad := range []string{"x", "=imu.accel", "a=imu.nope"} {
		m, err := profile.ParseMapping(bad)
		if err == nil {
			var p *profile.Profile
			if p, err = profile.WithMappings(nil, []profile.Feature{m}); err == nil {
				_, err = profile.Resolve(p, mustJournal(t, session).Info)
			}
		}
		if err == nil {
			t.Errorf("mapping %q accepted", bad)
		}
	}
}

func mustJournal(t *testing.T, dir string) *journal.Journal {
	j, err := journal.Open(context.Background(), dir, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

package export

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ceres-robotics/ceres-export/journal"
	"github.com/ceres-robotics/ceres-export/plan"
	"github.com/ceres-robotics/ceres-export/shard"
	"github.com/ceres-robotics/ceres-export/synth"
)

// synthRow is one data row of a synthetic session's shard (no cameras, no
// mappings): the sensor features in SESSION order, then LeRobot's defaults.
// It is the reference writer's row type: parquet-go's GenericWriter writes
// it through its compiled struct path, its fastest.
type synthRow struct {
	Accel        []float32 `parquet:"observation.imu.accel,list"`
	Gyro         []float32 `parquet:"observation.imu.gyro,list"`
	Closed       bool      `parquet:"observation.gripper.closed"`
	Counter      int32     `parquet:"observation.gripper.counter"`
	Force        float32   `parquet:"observation.gripper.force"`
	Mode         uint8     `parquet:"observation.gripper.mode"`
	Timestamp    float32   `parquet:"timestamp"`
	FrameIndex   int64     `parquet:"frame_index"`
	EpisodeIndex int64     `parquet:"episode_index"`
	Index        int64     `parquet:"index"`
	TaskIndex    int64     `parquet:"task_index"`
}

// rowsStageInput is a synthetic session opened and planned: what the rows
// stage starts from.
type rowsStageInput struct {
	j        *journal.Journal
	p        *plan.Plan
	features []rowFeature
	shard    []shard.Feature
}

func openRowsStageInput(tb testing.TB, dir string, o synth.Options) *rowsStageInput {
	tb.Helper()
	ctx := context.Background()
	session := filepath.Join(dir, "session")
	if _, err := synth.Write(ctx, session, o); err != nil {
		tb.Fatal(err)
	}
	j, err := journal.Open(ctx, session, journal.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	applied, _, err := appliedSpec(j, nil)
	if err != nil {
		tb.Fatal(err)
	}
	fps, _, err := plan.DefaultFPS(j.Info.Streams)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := plan.Build(j.Events, plan.SpecTypes(applied), fps)
	if err != nil {
		tb.Fatal(err)
	}
	features, err := sensorFeatures(j.Info, nil, false)
	if err != nil {
		tb.Fatal(err)
	}
	in := &rowsStageInput{j: j, p: p, features: features}
	for _, f := range features {
		in.shard = append(in.shard, f.Feature)
	}
	return in
}

// runRowsStage is the export's rows stage: every episode's rows assembled
// from the journal's sensor streams on the frame clock and written to
// finished Parquet data files (footer written, fsynced, read back) under dir.
func runRowsStage(tb testing.TB, in *rowsStageInput, dir string) {
	tb.Helper()
	ra, err := newRowAssembler(in.j, in.features)
	if err != nil {
		tb.Fatal(err)
	}
	defer ra.close()
	w, err := shard.NewDataWriter(dir, in.shard, shard.DataWriterOptions{FPS: in.p.FPS})
	if err != nil {
		tb.Fatal(err)
	}
	maxLen := 0
	for _, ep := range in.p.Episodes {
		maxLen = max(maxLen, ep.Length)
	}
	batch := shard.NewEpisodeBatch(in.shard, maxLen)
	for i, ep := range in.p.Episodes {
		if err := ra.episode(ep, in.p.FPS, batch); err != nil {
			tb.Fatal(err)
		}
		if _, err := w.WriteEpisode(int64(i), 0, batch); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	if got := w.Files(); len(got) != 1 {
		tb.Fatalf("rows stage wrote %d data files, want 1", len(got))
	}
}

// referenceRows reads the data file back: its rows per row group, the
// writer options that reproduce its layout (schema, snappy, v1 pages,
// created_by, key-value metadata), and checks that synthRow's schema is the
// file's, so that the reference writes the same columns.
type referenceRows struct {
	groups [][]synthRow
	opts   []parquet.WriterOption
}

// createdBy sets the footer's created_by verbatim, as the DataWriter does.
type createdBy string

func (c createdBy) ConfigureWriter(w *parquet.WriterConfig) { w.CreatedBy = string(c) }

func readReferenceRows(tb testing.TB, path string) *referenceRows {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		tb.Fatal(err)
	}
	schema := parquet.SchemaOf(synthRow{})
	if !parquet.EqualNodes(schema, pf.Schema()) {
		tb.Fatalf("reference row type does not match the data file:\nfile: %s\nref:  %s", pf.Schema(), schema)
	}
	ref := &referenceRows{opts: []parquet.WriterOption{
		schema,
		parquet.Compression(&parquet.Snappy),
		parquet.DataPageVersion(1),
		createdBy(pf.Metadata().CreatedBy),
	}}
	for _, kv := range pf.Metadata().KeyValueMetadata {
		ref.opts = append(ref.opts, parquet.KeyValueMetadata(kv.Key, kv.Value))
	}
	for _, rg := range pf.RowGroups() {
		rows := make([]synthRow, rg.NumRows())
		r := parquet.NewGenericRowGroupReader[synthRow](rg)
		n, err := r.Read(rows)
		if err != nil && err != io.EOF {
			tb.Fatal(err)
		}
		if n != len(rows) {
			tb.Fatalf("read %d of %d rows back", n, len(rows))
		}
		if err := r.Close(); err != nil {
			tb.Fatal(err)
		}
		ref.groups = append(ref.groups, rows)
	}
	return ref
}

// writeReferenceRows writes the rows with parquet-go's GenericWriter, one
// row group per episode, then fsyncs, as the DataWriter does.
func writeReferenceRows(tb testing.TB, path string, ref *referenceRows) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := parquet.NewGenericWriter[synthRow](f, ref.opts...)
	for _, rows := range ref.groups {
		if _, err := w.Write(rows); err != nil {
			tb.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// rowsStageRounds is how many times each side runs per benchmark iteration,
// alternating, so that one iteration (make bench runs -benchtime 1x) already
// averages over the machine's load.
const rowsStageRounds = 5

// BenchmarkExportRowsStage measures the export's rows stage as the goal
// defines it, journal samples to finished Parquet: the row assembler
// holding each sensor stream's latest sample per frame, and the DataWriter,
// on a synthetic session of 10 cycles without cameras. The reference is
// parquet-go's GenericWriter writing the identical rows (read back from our
// file beforehand, outside the timer) with the same schema, row groups,
// compression and metadata, in the same run and alternating with ours.
// ratio_vs_parquet_go = reference time / our time (goal: >= 0.8).
func BenchmarkExportRowsStage(b *testing.B) {
	dir := b.TempDir()
	in := openRowsStageInput(b, dir, synth.Options{Seed: 1, Cycles: 10})
	first := filepath.Join(dir, "first")
	runRowsStage(b, in, first)
	ref := readReferenceRows(b, filepath.Join(first, fmt.Sprintf("data/chunk-%03d/file-%03d.parquet", 0, 0)))
	var rows int64
	for _, g := range ref.groups {
		rows += int64(len(g))
	}
	var ours, theirs time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for r := 0; r < rowsStageRounds; r++ {
			t0 := time.Now()
			runRowsStage(b, in, filepath.Join(dir, fmt.Sprintf("ours-%d-%d", i, r)))
			t1 := time.Now()
			writeReferenceRows(b, filepath.Join(dir, fmt.Sprintf("ref-%d-%d.parquet", i, r)), ref)
			t2 := time.Now()
			ours += t1.Sub(t0)
			theirs += t2.Sub(t1)
		}
	}
	total := float64(rows) * float64(b.N*rowsStageRounds)
	b.ReportMetric(total/ours.Seconds(), "rows/s")
	b.ReportMetric(total/theirs.Seconds(), "ref_rows/s")
	b.ReportMetric(theirs.Seconds()/ours.Seconds(), "ratio_vs_parquet_go")
}

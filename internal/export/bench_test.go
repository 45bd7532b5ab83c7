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

	"github.com/ceres-robotics/ceres-export/internal/benchround"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/internal/profile"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	synthsession "github.com/ceres-robotics/ceres-export/internal/synth/session"
	"github.com/ceres-robotics/ceres-export/journal"
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
	resolved *profile.Resolved
	features []rowFeature
	shard    []shard.Feature
}

func openRowsStageInput(tb testing.TB, session string) *rowsStageInput {
	tb.Helper()
	ctx := context.Background()
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
	resolved, err := profile.Resolve(nil, j.Info)
	if err != nil {
		tb.Fatal(err)
	}
	features := sensorFeatures(resolved, false)
	in := &rowsStageInput{j: j, p: p, resolved: resolved, features: features}
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
	newRows := func() *shard.EpisodeRows { return shard.NewEpisodeRows(in.shard, maxLen) }
	err = ra.assembleEpisodes(context.Background(), in.p.Episodes, in.p.FPS, newRows, func(i int, b *shard.EpisodeRows) error {
		_, err := w.WriteEpisode(int64(i), 0, b)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	if got := w.Files(); len(got) != 1 {
		tb.Fatalf("rows stage wrote %d data files, want 1", len(got))
	}
}

// runBuilderStage is the rows stage as Export runs it, through the
// Builder: the same assembly, the data file, per-episode statistics, and
// Finish's metadata files.
func runBuilderStage(tb testing.TB, in *rowsStageInput, dir string) {
	tb.Helper()
	ra, err := newRowAssembler(in.j, in.features)
	if err != nil {
		tb.Fatal(err)
	}
	defer ra.close()
	sb, err := shard.NewBuilder(dir, in.shard, shard.Options{FPS: in.p.FPS})
	if err != nil {
		tb.Fatal(err)
	}
	maxLen := 0
	for _, ep := range in.p.Episodes {
		maxLen = max(maxLen, ep.Length)
	}
	newRows := func() *shard.EpisodeRows { return sb.NewRows(maxLen) }
	err = ra.assembleEpisodes(context.Background(), in.p.Episodes, in.p.FPS, newRows, func(i int, b *shard.EpisodeRows) error {
		return sb.WriteEpisode(shard.EpisodeMeta{Task: in.p.Episodes[i].Task}, b)
	})
	if err != nil {
		tb.Fatal(err)
	}
	if err := sb.Finish(nil); err != nil {
		tb.Fatal(err)
	}
}

// assembleAll assembles every episode's rows into batches of their own.
func assembleAll(tb testing.TB, in *rowsStageInput) []*shard.EpisodeRows {
	tb.Helper()
	ra, err := newRowAssembler(in.j, in.features)
	if err != nil {
		tb.Fatal(err)
	}
	defer ra.close()
	var out []*shard.EpisodeRows
	for _, ep := range in.p.Episodes {
		b := shard.NewEpisodeRows(in.shard, ep.Length)
		if err := ra.episode(ep, in.p.FPS, b); err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// writeBatches is the rows stage's writing half alone: the DataWriter on
// rows already assembled.
func writeBatches(tb testing.TB, in *rowsStageInput, batches []*shard.EpisodeRows, dir string) {
	tb.Helper()
	w, err := shard.NewDataWriter(dir, in.shard, shard.DataWriterOptions{FPS: in.p.FPS})
	if err != nil {
		tb.Fatal(err)
	}
	for i, b := range batches {
		if _, err := w.WriteEpisode(int64(i), 0, b); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
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

// rowsStageRounds is how many times each side runs per benchmark
// iteration, alternating, so that one iteration (make bench runs
// -benchtime 1x) already spreads over the machine's changing load.
const rowsStageRounds = 15

// BenchmarkExportRowsStage measures the export's rows stage, journal
// samples to finished Parquet (a diagnostic: the goal is the whole export
// against its video stage, BenchmarkExportVsVideoStage): the row assembler
// holding each sensor stream's latest sample per frame (reading and
// decoding the journal's sample batches), and the DataWriter, on a
// synthetic session of 10 cycles without cameras. The reference is
// parquet-go's GenericWriter writing the identical rows (read back from our
// file beforehand, outside the timer) with the same schema, row groups,
// compression and metadata, in the same run and alternating with ours.
//
// ratio_vs_parquet_go = reference time / our time, each
// side's time being its fastest round (on a shared machine the others
// measure mostly the neighbours' load); mean_ratio_vs_parquet_go uses the
// total times, cpu_ratio_vs_parquet_go the CPU time the process spent.
// journal_ms is the CPU time of reading and decoding every sample batch of
// the streams once, a cost no writer can save (the holders skip the batches
// that lie wholly between episodes, about half of them here; fastest round;
// ref_ms is the reference's time). writer_ratio_vs_parquet_go times the DataWriter
// alone on the same rows already assembled, builder_ratio_vs_parquet_go the
// stage as Export runs it, through the Builder (statistics and metadata
// files too); fastest rounds.
func BenchmarkExportRowsStage(b *testing.B) {
	dir := b.TempDir()
	session := filepath.Join(dir, "session")
	writeSession(b, session, synthsession.Options{Seed: 1, Cycles: 10})
	in := openRowsStageInput(b, session)
	first := filepath.Join(dir, "first")
	runRowsStage(b, in, first)
	ref := readReferenceRows(b, filepath.Join(first, filepath.FromSlash(layout.DataPath(0, 0))))
	var rows int64
	for _, g := range ref.groups {
		rows += int64(len(g))
	}
	batches := assembleAll(b, in)
	var ours, theirs, writer, builder, journalRead benchround.Times
	var oursCPU, theirsCPU time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for r := 0; r < rowsStageRounds; r++ {
			t0, c0 := time.Now(), benchround.ProcessCPU(b)
			runRowsStage(b, in, filepath.Join(dir, fmt.Sprintf("ours-%d-%d", i, r)))
			t1, c1 := time.Now(), benchround.ProcessCPU(b)
			benchround.WriteParquetGo(b, filepath.Join(dir, fmt.Sprintf("ref-%d-%d.parquet", i, r)), ref.groups, ref.opts...)
			t2, c2 := time.Now(), benchround.ProcessCPU(b)
			readAllSamples(b, in)
			t3, c3 := time.Now(), benchround.ProcessCPU(b)
			journalRead.Add(c3 - c2)
			writeBatches(b, in, batches, filepath.Join(dir, fmt.Sprintf("writer-%d-%d", i, r)))
			t4 := time.Now()
			writer.Add(t4.Sub(t3))
			runBuilderStage(b, in, filepath.Join(dir, fmt.Sprintf("builder-%d-%d", i, r)))
			builder.Add(time.Since(t4))
			ours.Add(t1.Sub(t0))
			theirs.Add(t2.Sub(t1))
			oursCPU += c1 - c0
			theirsCPU += c2 - c1
		}
	}
	b.ReportMetric(float64(rows)/ours.Min.Seconds(), "rows/s")
	b.ReportMetric(float64(rows)/theirs.Min.Seconds(), "ref_rows/s")
	b.ReportMetric(theirs.Min.Seconds()/ours.Min.Seconds(), "ratio_vs_parquet_go")
	b.ReportMetric(theirs.Total.Seconds()/ours.Total.Seconds(), "mean_ratio_vs_parquet_go")
	b.ReportMetric(theirsCPU.Seconds()/oursCPU.Seconds(), "cpu_ratio_vs_parquet_go")
	b.ReportMetric(theirs.Min.Seconds()/writer.Min.Seconds(), "writer_ratio_vs_parquet_go")
	b.ReportMetric(theirs.Min.Seconds()/builder.Min.Seconds(), "builder_ratio_vs_parquet_go")
	b.ReportMetric(float64(journalRead.Min.Microseconds())/1e3, "journal_ms")
	b.ReportMetric(float64(theirs.Min.Microseconds())/1e3, "ref_ms")
}

// readAllSamples reads every sample batch of the streams the features use,
// as the row assembler's holders do, and nothing else.
func readAllSamples(tb testing.TB, in *rowsStageInput) {
	tb.Helper()
	seen := map[int]bool{}
	for _, f := range in.features {
		for _, p := range f.parts {
			if seen[p.stream] {
				continue
			}
			seen[p.stream] = true
			c, err := in.j.Samples(in.j.Info.Streams[p.stream].ID)
			if err != nil {
				tb.Fatal(err)
			}
			for c.Next() {
			}
			if err := c.Err(); err != nil {
				tb.Fatal(err)
			}
			if err := c.Close(); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

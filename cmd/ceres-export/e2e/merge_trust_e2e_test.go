package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/testenv"
	"github.com/ceres-robotics/ceres-export/internal/testtree"
)

// trustFixture is two small shards, a dataset merged from them, and a
// third shard to append.
type trustFixture struct{ a, b, c, merged string }

func newTrustFixture(t *testing.T) trustFixture {
	t.Helper()
	f := trustFixture{
		a: exportShard(t, "a", "--seed", "21", "--cameras", "1"),
		b: exportShard(t, "b", "--seed", "22", "--cameras", "1"),
		c: exportShard(t, "c", "--seed", "23", "--cameras", "1"),
	}
	f.merged = filepath.Join(t.TempDir(), "merged")
	mustRun(t, "merge", f.a, f.b, "-o", f.merged)
	return f
}

// regularFiles lists dir's regular files, relative and slash-separated.
func regularFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// flipByte flips the lowest bit of the byte in the middle of file p.
func flipByte(t *testing.T, p string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A byte flipped in any file of a shard or of a merged dataset makes a
// full verify say NOT SOUND, naming the file; an append to the merged
// dataset refuses it and leaves it as it was, and a merge of it refuses
// it as a source.
func TestE2EFlippedByteInAnyFile(t *testing.T) {
	f := newTrustFixture(t)
	for _, ds := range []struct {
		name, dir string
		merged    bool
	}{{"shard", f.a, false}, {"merged", f.merged, true}} {
		for _, rel := range regularFiles(t, ds.dir) {
			t.Run(ds.name+"/"+rel, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), ds.name)
				copyTree(t, ds.dir, dir)
				flipByte(t, filepath.Join(dir, filepath.FromSlash(rel)))
				out, errOut, code := run(t, "verify", dir)
				if code != exitFindings || !strings.Contains(out, "NOT SOUND") || !strings.Contains(out, rel) {
					t.Fatalf("verify: exit %d; want %d, NOT SOUND naming %s:\n%s%s", code, exitFindings, rel, out, errOut)
				}
				if !ds.merged {
					return
				}
				before := testtree.Files(t, dir)
				_, errOut, code = run(t, "merge", "--into", dir, f.c)
				if code == 0 {
					t.Fatalf("merge --into a dataset with %s damaged: exit 0\n%s", rel, errOut)
				}
				if !sameFiles(before, testtree.Files(t, dir)) {
					t.Fatal("the refused append changed the dataset")
				}
				// Nor does a merge of it pass the damage on.
				merged := filepath.Join(t.TempDir(), "out")
				if _, errOut, code := run(t, "merge", dir, f.c, "-o", merged); code == 0 {
					t.Fatalf("merge of a dataset with %s damaged: exit 0\n%s", rel, errOut)
				}
				if _, err := os.Lstat(merged); err == nil {
					t.Fatal("the refused merge wrote its output")
				}
			})
		}
	}
}

// editStatsValue moves the first mean of feature in dir's meta/stats.json
// half way to its max: a value its rows do not give, which a quick verify
// (shapes, finiteness, min <= mean <= max) passes.
func editStatsValue(t *testing.T, dir, feature string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(layout.StatsPath))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var stats map[string]map[string]any
	if err := json.Unmarshal(b, &stats); err != nil {
		t.Fatal(err)
	}
	mean, ok1 := stats[feature]["mean"].([]any)
	hi, ok2 := stats[feature]["max"].([]any)
	if !ok1 || !ok2 || len(mean) == 0 || len(hi) == 0 || hi[0].(float64) <= mean[0].(float64) {
		t.Fatalf("%s has no mean below its max of %s", p, feature)
	}
	mean[0] = (mean[0].(float64) + hi[0].(float64)) / 2
	out, err := json.MarshalIndent(stats, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// An append to a dataset whose seal does not hold (changed since its
// merge, or sealed before seals covered every byte) verifies it in full:
// a changed statistic, which a quick verify does not recompute, is
// refused.
func TestE2EMergeIntoVerifiesChangedDatasetInFull(t *testing.T) {
	f := newTrustFixture(t)
	seal := filepath.FromSlash(layout.SealPath)
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string)
		text   string
	}{
		{"stats edited, seal kept", func(t *testing.T, dir string) {
			editStatsValue(t, dir, "observation.imu.accel")
		}, layout.StatsPath},
		{"stats edited, no seal", func(t *testing.T, dir string) {
			editStatsValue(t, dir, "observation.imu.accel")
			if err := os.Remove(filepath.Join(dir, seal)); err != nil {
				t.Fatal(err)
			}
		}, "stats.mismatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "merged")
			copyTree(t, f.merged, dir)
			tc.change(t, dir)
			before := testtree.Files(t, dir)
			_, errOut, code := run(t, "merge", "--into", dir, f.c)
			if code != exitFindings || !strings.Contains(errOut, tc.text) {
				t.Fatalf("exit %d, want %d naming %s:\n%s", code, exitFindings, tc.text, errOut)
			}
			if !sameFiles(before, testtree.Files(t, dir)) {
				t.Fatal("the refused append changed the dataset")
			}
		})
	}
	// A dataset left as its merge sealed it is appended to.
	dir := filepath.Join(t.TempDir(), "merged")
	copyTree(t, f.merged, dir)
	mustRun(t, "merge", "--into", dir, f.c)
	mustRun(t, "verify", dir)
}

// foreignCopy makes of shard a LeRobot dataset this tool did not write:
// without ceres/ and the card.
func foreignCopy(t *testing.T, shard string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "foreign-"+filepath.Base(shard))
	copyTree(t, shard, dir)
	for _, rel := range []string{layout.CeresDir, layout.CardPath} {
		if err := os.RemoveAll(filepath.Join(dir, rel)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// editInfo rewrites dir's meta/info.json through edit.
func editInfo(t *testing.T, dir string, edit func(string) string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(layout.InfoPath))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	changed := edit(string(b))
	if changed == string(b) {
		t.Fatalf("the edit changes nothing in %s", p)
	}
	if err := os.WriteFile(p, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A foreign source whose video is not what its info.json declares, or is
// no video at all, is refused before anything is written: exit 1, naming
// the file and what disagrees.
func TestE2EMergeForeignVideoContradictsInfo(t *testing.T) {
	f := newTrustFixture(t)
	front := layout.VideoPath("observation.images.front", 0, 0)
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string)
		text   []string
	}{
		{"codec", func(t *testing.T, dir string) {
			editInfo(t, dir, func(s string) string { return strings.Replace(s, `"video.codec": "h264"`, `"video.codec": "av1"`, 1) })
		}, []string{front, "video.codec"}},
		{"pixel format", func(t *testing.T, dir string) {
			editInfo(t, dir, func(s string) string {
				return strings.Replace(s, `"video.pix_fmt": "yuv420p"`, `"video.pix_fmt": "yuv444p"`, 1)
			})
		}, []string{front, "video.pix_fmt"}},
		{"not a video", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(front)), []byte("not a video\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{front}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			foreign := foreignCopy(t, f.b)
			tc.change(t, foreign)
			out := filepath.Join(t.TempDir(), "out")
			_, errOut, code := run(t, "merge", foreign, "-o", out)
			if code != exitFindings {
				t.Fatalf("exit %d, want %d:\n%s", code, exitFindings, errOut)
			}
			for _, s := range tc.text {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr does not name %s:\n%s", s, errOut)
				}
			}
			if _, err := os.Lstat(out); err == nil {
				t.Error("the refused merge wrote its output")
			}
		})
	}
}

// rewriteEpisodes rewrites dir's meta/episodes file through edit, which
// returns the column to write for each field (pyarrow's writer, as
// LeRobot's tools leave it).
func rewriteEpisodes(t *testing.T, dir string, edit func(arrow.Field, arrow.Column) arrow.Column) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(layout.EpisodesPath(0, 0)))
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := pqarrow.ReadTable(context.Background(), fh, parquet.NewReaderProperties(memory.DefaultAllocator), pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	fh.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	var fields []arrow.Field
	var cols []arrow.Column
	for i, fld := range tbl.Schema().Fields() {
		fields = append(fields, fld)
		cols = append(cols, edit(fld, *tbl.Column(i)))
	}
	out := array.NewTable(arrow.NewSchema(fields, nil), cols, tbl.NumRows())
	defer out.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithCreatedBy("parquet-cpp-arrow version 26.0.1"))
	if err := pqarrow.WriteTable(out, &buf, tbl.NumRows(), props, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// offsetList is the list<double> column col with add added to every value.
func offsetList(fld arrow.Field, col arrow.Column, add float64) arrow.Column {
	b := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Float64)
	defer b.Release()
	vb := b.ValueBuilder().(*array.Float64Builder)
	for _, chunk := range col.Data().Chunks() {
		l := chunk.(*array.List)
		vals := l.ListValues().(*array.Float64)
		for i := 0; i < l.Len(); i++ {
			b.Append(true)
			from, to := l.ValueOffsets(i)
			for j := from; j < to; j++ {
				vb.Append(vals.Value(int(j)) + add)
			}
		}
	}
	a := b.NewArray()
	defer a.Release()
	chunked := arrow.NewChunked(fld.Type, []arrow.Array{a})
	defer chunked.Release()
	return *arrow.NewColumn(fld, chunked)
}

// A foreign source whose own statistics its rows contradict is never
// merged into a dataset that its verify then finds unsound: the merge
// writes the statistics the rows give instead, and says so.
func TestE2EMergeForeignStatsContradictRows(t *testing.T) {
	f := newTrustFixture(t)
	foreign := foreignCopy(t, f.b)
	mean := layout.StatsColumn("observation.imu.accel", "mean")
	rewriteEpisodes(t, foreign, func(fld arrow.Field, col arrow.Column) arrow.Column {
		if fld.Name == mean {
			return offsetList(fld, col, 1000)
		}
		col.Retain()
		return col
	})
	out := filepath.Join(t.TempDir(), "out")
	_, errOut, code := run(t, "merge", f.a, foreign, "-o", out)
	if code != 0 || !strings.Contains(errOut, "recomputed") || !strings.Contains(errOut, "observation.imu.accel") || !strings.Contains(errOut, "mean") {
		t.Fatalf("exit %d, want 0 saying the mean of observation.imu.accel was recomputed from the rows:\n%s", code, errOut)
	}
	if stdout, _, vcode := run(t, "verify", out); vcode != 0 {
		t.Fatalf("verify of the merge: exit %d, want a sound dataset\n%s", vcode, stdout)
	}
}

// A source is told by its content: a foreign dataset and its copy, or a
// copy of a dataset already appended to, are the same source, refused.
func TestE2EMergeRecognisesCopiesByContent(t *testing.T) {
	f := newTrustFixture(t)
	foreign := foreignCopy(t, f.b)
	again := filepath.Join(t.TempDir(), "again")
	copyTree(t, foreign, again)
	work := t.TempDir()
	_, errOut, code := run(t, "merge", foreign, again, "-o", filepath.Join(work, "twice"))
	if code != exitUsage || !strings.Contains(errOut, "same") {
		t.Fatalf("a foreign dataset and its copy: exit %d, want %d:\n%s", code, exitUsage, errOut)
	}
	withForeign := filepath.Join(work, "with-foreign")
	mustRun(t, "merge", f.a, foreign, "-o", withForeign)
	_, errOut, code = run(t, "merge", "--into", withForeign, again)
	if code != exitUsage || !strings.Contains(errOut, "same") {
		t.Fatalf("--into a dataset that holds the foreign dataset, its copy: exit %d, want %d:\n%s", code, exitUsage, errOut)
	}
	// A copy of one of our shards is refused as before.
	shardCopy := filepath.Join(t.TempDir(), "a-copy")
	copyTree(t, f.a, shardCopy)
	if _, errOut, code := run(t, "merge", f.a, shardCopy, "-o", filepath.Join(work, "ours")); code != exitUsage || !strings.Contains(errOut, "same") {
		t.Fatalf("a shard and its copy: exit %d, want %d:\n%s", code, exitUsage, errOut)
	}
}

// unsealed removes dir's seal, as a dataset merged before seals is.
func unsealed(t *testing.T, dir string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(layout.SealPath))); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// editMergeReport rewrites dir's merge report through edit.
func editMergeReport(t *testing.T, dir string, edit func(r map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(layout.MergeReportPath))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	edit(r)
	out, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A merge report whose parts lists are malformed, or whose frame counts
// disagree with the episodes, is a bad input (exit 2) named by file, JSON
// path and what disagrees.
func TestE2EMergeReportPartsRefused(t *testing.T) {
	f := newTrustFixture(t)
	front := "observation.images.front"
	file := layout.VideoPath(front, 0, 0)
	parts := func(r map[string]any) []any {
		return r["videos"].(map[string]any)[front].(map[string]any)["parts"].(map[string]any)[file].([]any)
	}
	for _, tc := range []struct {
		name string
		edit func(r map[string]any)
		text []string
	}{
		{"malformed part", func(r map[string]any) {
			parts(r)[0].(map[string]any)["part"] = "no-index"
		}, []string{layout.MergeReportPath, "parts", "no-index"}},
		{"swapped frame counts", func(r map[string]any) {
			p := parts(r)
			a, b := p[0].(map[string]any), p[1].(map[string]any)
			a["frames"], b["frames"] = b["frames"], a["frames"]
		}, []string{layout.MergeReportPath, file, "frames"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "merged")
			copyTree(t, f.merged, dir)
			unsealed(t, dir)
			editMergeReport(t, dir, tc.edit)
			_, errOut, code := run(t, "merge", dir, f.c, "-o", filepath.Join(t.TempDir(), "out"))
			if code != exitUsage {
				t.Fatalf("exit %d, want %d:\n%s", code, exitUsage, errOut)
			}
			for _, s := range tc.text {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr does not name %s:\n%s", s, errOut)
				}
			}
			if strings.Contains(errOut, "not planned") {
				t.Errorf("stderr says only that frames are not planned:\n%s", errOut)
			}
		})
	}
}

// A FIFO where meta/stats.json belongs is named for what it is, not
// called missing.
func TestE2EVerifyNamesFIFOAtStats(t *testing.T) {
	f := newTrustFixture(t)
	dir := filepath.Join(t.TempDir(), "merged")
	copyTree(t, f.merged, dir)
	p := filepath.Join(dir, filepath.FromSlash(layout.StatsPath))
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "verify", dir, "--quick")
	all := out + errOut
	if code == 0 || !strings.Contains(all, layout.StatsPath) || strings.Contains(all, "missing") || !strings.Contains(all, "not a regular file") {
		t.Fatalf("exit %d, want a finding naming %s as not a regular file, not missing:\n%s", code, layout.StatsPath, all)
	}
}

// A command stopped by SIGTERM says it was interrupted, not "context
// canceled".
func TestE2ESIGTERMSaysInterrupted(t *testing.T) {
	// Large enough frames that each command runs a while.
	session := filepath.Join(t.TempDir(), "session")
	mustRun(t, "synth", "-o", session, "--seed", "25", "--time-scale", "0.3", "--width", "320", "--height", "240")
	shard := filepath.Join(t.TempDir(), "shard")
	mustRun(t, "export", session, "-o", shard, "--vcodec", "h264")
	work := t.TempDir()
	for _, tc := range []struct {
		name string
		args func(i int) []string
	}{
		{"export", func(i int) []string {
			return []string{"export", session, "-o", filepath.Join(work, "export-"+string(rune('a'+i))), "--vcodec", "h264"}
		}},
		{"merge", func(i int) []string {
			return []string{"merge", shard, "-o", filepath.Join(work, "merge-"+string(rune('a'+i)))}
		}},
		{"verify", func(int) []string { return []string{"verify", shard} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The signal must land while the command runs: shorter delays
			// until one does.
			for i, delay := range []time.Duration{200, 100, 50, 25, 12, 6} {
				delay *= time.Millisecond
				cmd := exec.Command(ceresBinary, tc.args(i)...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(delay)
				_ = cmd.Process.Signal(syscall.SIGTERM)
				_ = cmd.Wait()
				code := cmd.ProcessState.ExitCode()
				if code != exitSIGTERM {
					continue // finished first, or killed before its handler was set
				}
				if !strings.Contains(stderr.String(), "interrupted") || strings.Contains(stderr.String(), "context canceled") {
					t.Fatalf("after SIGTERM at %v: exit %d, stderr %q; want it to say interrupted", delay, code, stderr.String())
				}
				return
			}
			t.Fatal("no SIGTERM landed while the command ran")
		})
	}
}

// rewriteParquet rewrites the Parquet file at path through edit, which
// returns the column to write for each field, keeping the schema's
// metadata (pandas', for meta/tasks.parquet), zstd-compressed.
func rewriteParquet(t *testing.T, path string, edit func(arrow.Field, arrow.Column) arrow.Column) {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	// The file's schema carries its key-value metadata; the table's not.
	schema, err := fr.Schema()
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	pf.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	var cols []arrow.Column
	for i, fld := range tbl.Schema().Fields() {
		cols = append(cols, edit(fld, *tbl.Column(i)))
	}
	md := schema.Metadata()
	out := array.NewTable(arrow.NewSchema(tbl.Schema().Fields(), &md), cols, tbl.NumRows())
	defer out.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithCreatedBy("parquet-cpp-arrow version 26.0.1"))
	fw, err := pqarrow.NewFileWriter(out.Schema(), &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range md.Keys() {
		if k != "ARROW:schema" {
			if err := fw.AppendKeyValueMetadata(k, md.Values()[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := fw.WriteTable(out, tbl.NumRows()); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// replaceStrings is the string, or list<string>, column col with every
// value from replaced by to.
func replaceStrings(t *testing.T, fld arrow.Field, col arrow.Column, from, to string) arrow.Column {
	t.Helper()
	var a arrow.Array
	switch fld.Type.ID() {
	case arrow.STRING:
		b := array.NewStringBuilder(memory.DefaultAllocator)
		defer b.Release()
		for _, chunk := range col.Data().Chunks() {
			s := chunk.(*array.String)
			for i := 0; i < s.Len(); i++ {
				if v := s.Value(i); v == from {
					b.Append(to)
				} else {
					b.Append(v)
				}
			}
		}
		a = b.NewArray()
	case arrow.LIST:
		b := array.NewListBuilder(memory.DefaultAllocator, arrow.BinaryTypes.String)
		defer b.Release()
		vb := b.ValueBuilder().(*array.StringBuilder)
		for _, chunk := range col.Data().Chunks() {
			l := chunk.(*array.List)
			vals := l.ListValues().(*array.String)
			for i := 0; i < l.Len(); i++ {
				b.Append(true)
				lo, hi := l.ValueOffsets(i)
				for j := lo; j < hi; j++ {
					if v := vals.Value(int(j)); v == from {
						vb.Append(to)
					} else {
						vb.Append(v)
					}
				}
			}
		}
		a = b.NewArray()
	default:
		t.Fatalf("column %s is %s, not strings", fld.Name, fld.Type)
	}
	defer a.Release()
	chunked := arrow.NewChunked(fld.Type, []arrow.Array{a})
	defer chunked.Release()
	return *arrow.NewColumn(fld, chunked)
}

// A task string far beyond a sentence is refused with a clear error
// naming the file and the bound, before it is decoded: the merge's peak
// memory stays far below what decoding it takes.
func TestE2EMergeRefusesHugeTask(t *testing.T) {
	f := newTrustFixture(t)
	foreign := foreignCopy(t, f.b)
	tasks := filepath.Join(foreign, filepath.FromSlash(layout.TasksPath))
	fh, err := os.Open(tasks)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := pqarrow.ReadTable(context.Background(), fh, parquet.NewReaderProperties(memory.DefaultAllocator), pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	fh.Close()
	if err != nil {
		t.Fatal(err)
	}
	task := tbl.Column(tbl.Schema().FieldIndices(layout.TasksColTask)[0]).Data().Chunk(0).(*array.String).Value(0)
	tbl.Release()
	const size = 32 << 20
	huge := strings.Repeat(task+" ", size/(len(task)+1)+1)[:size]
	edit := func(fld arrow.Field, col arrow.Column) arrow.Column {
		if fld.Name == layout.TasksColTask || fld.Name == "tasks" {
			return replaceStrings(t, fld, col, task, huge)
		}
		col.Retain()
		return col
	}
	rewriteParquet(t, tasks, edit)
	rewriteParquet(t, filepath.Join(foreign, filepath.FromSlash(layout.EpisodesPath(0, 0))), edit)
	if st, err := os.Stat(tasks); err != nil || st.Size() > 1<<20 {
		t.Fatalf("%s: %v, %d bytes; want a small file holding a huge string", tasks, err, st.Size())
	}
	code, stderr, peak := runPeakRSS(t, "merge", foreign, "-o", filepath.Join(t.TempDir(), "out"))
	t.Logf("merge of a %d MiB task: exit %d, peak RSS %d MiB", size>>20, code, peak>>20)
	if code != exitUsage || !strings.Contains(stderr, layout.TasksPath) || !strings.Contains(stderr, "at most") {
		t.Fatalf("exit %d, want %d naming %s and the bound:\n%s", code, exitUsage, layout.TasksPath, stderr)
	}
	if peak > 4*size {
		t.Errorf("peak RSS %d MiB for a %d MiB string: memory follows what the source holds", peak>>20, size>>20)
	}
}

// runPeakRSS runs the binary with args under GNU time and returns its exit
// status, its standard error and its peak resident set. Under GNU time:
// the rusage of a child this process starts counts this process's own
// resident set (peakRSS).
func runPeakRSS(t *testing.T, args ...string) (code int, stderr string, peak int64) {
	t.Helper()
	gnuTime := testenv.Tool(t, "time", "", "GNU time: apt-get install time")
	rss := filepath.Join(t.TempDir(), "rss")
	cmd := exec.Command(gnuTime, append([]string{"-f", "%M", "-o", rss, ceresBinary}, args...)...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	_ = cmd.Run()
	b, rerr := os.ReadFile(rss)
	fields := strings.Fields(string(b)) // "Command exited with non-zero status 2" first
	kib, perr := int64(0), error(nil)
	if len(fields) > 0 {
		kib, perr = strconv.ParseInt(fields[len(fields)-1], 10, 64)
	}
	if rerr != nil || perr != nil || len(fields) == 0 || cmd.ProcessState == nil {
		t.Fatalf("GNU time's report %q: %v %v", b, rerr, perr)
	}
	return cmd.ProcessState.ExitCode(), errb.String(), kib << 10
}

// A source's metadata file is read whole, so it is bounded
// (input.MaxReadFile): a foreign dataset whose meta/info.json is 300 MiB
// (a valid document, then a sparse run of zeros) is refused, exit 2 naming
// the file and the bound, before its bytes are read.
func TestE2EMergeRefusesHugeMetadataFile(t *testing.T) {
	f := newTrustFixture(t)
	foreign := foreignCopy(t, f.b)
	info := filepath.Join(foreign, filepath.FromSlash(layout.InfoPath))
	if err := os.Truncate(info, 300<<20); err != nil {
		t.Fatal(err)
	}
	code, stderr, peak := runPeakRSS(t, "merge", foreign, "-o", filepath.Join(t.TempDir(), "out"))
	t.Logf("merge of a source with a 300 MiB info.json: exit %d, peak RSS %d MiB", code, peak>>20)
	if code != exitUsage || !strings.Contains(stderr, layout.InfoPath) || !strings.Contains(stderr, "at most") {
		t.Fatalf("exit %d, want %d naming %s and the bound:\n%s", code, exitUsage, layout.InfoPath, stderr)
	}
	if peak > 200<<20 {
		t.Errorf("peak RSS %d MiB: the file was read", peak>>20)
	}
}

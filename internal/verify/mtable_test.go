//go:build cgo

package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/video"
	"github.com/ceres-robotics/ceres-export/journal"
)

// mtable is a Parquet file held for mutation: its fields, columns and schema
// metadata (kept unless a mutation changes them).
type mtable struct {
	t      testing.TB
	fields []arrow.Field
	cols   []arrow.Array
	meta   arrow.Metadata
	// groups are the row group sizes to write; nil writes one per episode
	// (by the episode_index column) or a single one.
	groups []int64
}

func (m *mtable) idx(name string) int {
	for i, f := range m.fields {
		if f.Name == name {
			return i
		}
	}
	m.t.Fatalf("no column %q", name)
	return -1
}

func (m *mtable) rows() int { return m.cols[0].Len() }

func (m *mtable) set(name string, a arrow.Array) {
	i := m.idx(name)
	m.cols[i] = a
	m.fields[i].Type = a.DataType()
}

func (m *mtable) mapInt64(name string, fn func(i int, v int64) int64) {
	a := m.cols[m.idx(name)].(*array.Int64)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for i := 0; i < a.Len(); i++ {
		b.Append(fn(i, a.Value(i)))
	}
	m.set(name, b.NewArray())
}

func (m *mtable) mapFloat32(name string, fn func(i int, v float32) float32) {
	a := m.cols[m.idx(name)].(*array.Float32)
	b := array.NewFloat32Builder(memory.DefaultAllocator)
	for i := 0; i < a.Len(); i++ {
		b.Append(fn(i, a.Value(i)))
	}
	m.set(name, b.NewArray())
}

func (m *mtable) mapFloat64(name string, fn func(i int, v float64) float64) {
	a := m.cols[m.idx(name)].(*array.Float64)
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	for i := 0; i < a.Len(); i++ {
		b.Append(fn(i, a.Value(i)))
	}
	m.set(name, b.NewArray())
}

func (m *mtable) mapString(name string, fn func(i int, v string) string) {
	a := m.cols[m.idx(name)].(*array.String)
	b := array.NewStringBuilder(memory.DefaultAllocator)
	for i := 0; i < a.Len(); i++ {
		b.Append(fn(i, a.Value(i)))
	}
	m.set(name, b.NewArray())
}

// mapFixedFloat32 changes element e of row r of a fixed_size_list<float> column.
func (m *mtable) mapFixedFloat32(name string, fn func(r, e int, v float32) float32) {
	fl := m.cols[m.idx(name)].(*array.FixedSizeList)
	n := int(fl.DataType().(*arrow.FixedSizeListType).Len())
	vals := fl.ListValues().(*array.Float32)
	b := array.NewFixedSizeListBuilder(memory.DefaultAllocator, int32(n), arrow.PrimitiveTypes.Float32)
	vb := b.ValueBuilder().(*array.Float32Builder)
	for r := 0; r < fl.Len(); r++ {
		b.Append(true)
		for e := 0; e < n; e++ {
			vb.Append(fn(r, e, vals.Value((fl.Offset()+r)*n+e)))
		}
	}
	m.set(name, b.NewArray())
}

// take reorders (or drops) rows: row i of the result is row order[i].
func (m *mtable) take(order []int) {
	for ci, a := range m.cols {
		parts := make([]arrow.Array, len(order))
		for i, r := range order {
			parts[i] = array.NewSlice(a, int64(r), int64(r+1))
		}
		out, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			m.t.Fatal(err)
		}
		m.cols[ci] = out
	}
}

func (m *mtable) dropRow(r int) {
	var order []int
	for i := 0; i < m.rows(); i++ {
		if i != r {
			order = append(order, i)
		}
	}
	m.take(order)
}

func (m *mtable) remove(name string) {
	i := m.idx(name)
	m.fields = append(m.fields[:i:i], m.fields[i+1:]...)
	m.cols = append(m.cols[:i:i], m.cols[i+1:]...)
}

func (m *mtable) add(f arrow.Field, a arrow.Array) {
	f.Type = a.DataType()
	m.fields = append(m.fields, f)
	m.cols = append(m.cols, a)
}

// mutateParquet reads path with arrow-go, applies fn and writes it back
// with pqarrow, one row group per episode where the file has episode_index.
func mutateParquet(t testing.TB, path string, fn func(m *mtable), props ...parquet.WriterProperty) {
	t.Helper()
	tbl, err := readParquet(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	m := &mtable{t: t, meta: tbl.Schema.Metadata()}
	for _, f := range tbl.Schema.Fields() {
		m.fields = append(m.fields, f)
		m.cols = append(m.cols, tbl.col(f.Name))
	}
	fn(m)
	var keys, vals []string
	for i, k := range m.meta.Keys() {
		if k == "ARROW:schema" {
			continue // rewritten from the new schema
		}
		keys = append(keys, k)
		vals = append(vals, m.meta.Values()[i])
	}
	md := arrow.NewMetadata(keys, vals)
	schema := arrow.NewSchema(m.fields, &md)
	rec := array.NewRecordBatch(schema, m.cols, int64(m.rows()))
	groups := m.groups
	if groups == nil {
		groups = []int64{rec.NumRows()}
		for i, f := range m.fields {
			if f.Name != "episode_index" {
				continue
			}
			ep, ok := m.cols[i].(*array.Int64)
			if !ok {
				break
			}
			groups = nil
			var start int
			for r := 1; r <= ep.Len(); r++ {
				if r == ep.Len() || ep.Value(r) != ep.Value(r-1) {
					groups = append(groups, int64(r-start))
					start = r
				}
			}
		}
	}
	var buf bytes.Buffer
	wp := parquet.NewWriterProperties(append([]parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy)}, props...)...)
	w, err := pqarrow.NewFileWriter(schema, &buf, wp, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	var off int64
	for _, n := range groups {
		// Each row group from copies with offset 0: pqarrow does not honour
		// the offset of a sliced fixed_size_list.
		cols := make([]arrow.Array, len(m.cols))
		for i, a := range m.cols {
			c, err := array.Concatenate([]arrow.Array{array.NewSlice(a, off, off+n)}, memory.DefaultAllocator)
			if err != nil {
				t.Fatal(err)
			}
			cols[i] = c
		}
		if err := w.Write(array.NewRecordBatch(schema, cols, n)); err != nil {
			t.Fatal(err)
		}
		off += n
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// mutateJSON decodes a JSON file (numbers kept exact), applies fn and
// writes it back.
func mutateJSON(t testing.TB, path string, fn func(doc map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	fn(doc)
	out, err := json.MarshalIndent(doc, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// videoTimes is one episode's frame times for the encoder.
type videoTimes = video.EpisodeTimes

// episodeWindow is an episode's window and length as the fixture's
// episodes metadata states them.
type episodeWindow struct {
	start  int64
	length int
}

func shardWindows(t testing.TB, shard string) []episodeWindow {
	t.Helper()
	tbl, err := readParquet(context.Background(), filepath.Join(shard, "meta/episodes/chunk-000/file-000.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	starts, _ := tbl.int64Col("ceres/start_ns")
	lengths, _ := tbl.int64Col("length")
	var out []episodeWindow
	for i := 0; i < int(tbl.Rows); i++ {
		out = append(out, episodeWindow{start: starts.Value(i), length: int(lengths.Value(i))})
	}
	return out
}

// reencodeCamera writes the fixture camera's single video file again with
// the video package, for the given frame times and rate, over the shard's
// file-000.mp4.
func reencodeCamera(t testing.TB, shard string, fps int, times func(w []episodeWindow) []videoTimes) {
	t.Helper()
	f := goodShard(t)
	j, err := journal.Open(context.Background(), f.session, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sources []video.Source
	for _, m := range j.Media {
		if m.Stream == "front" {
			sources = append(sources, video.Source{Path: filepath.Join(f.session, filepath.FromSlash(m.Path)), StartT: m.StartT})
		}
	}
	out := filepath.Join(t.TempDir(), "out.mp4")
	_, err = video.ExportCamera(context.Background(), sources, times(shardWindows(t, shard)), video.ExportOptions{
		FPS: fps, SourceFPS: 30, Encoder: video.EncoderOptions{Codec: video.EncoderX264},
		FilePath: func(int, int) string { return out },
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shard, "videos/observation.images.front/chunk-000/file-000.mp4"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// frameTimes is the frame clock of every episode, optionally changed.
func frameTimes(w []episodeWindow, fps int, change func(e int, ts []int64) []int64) []videoTimes {
	var out []videoTimes
	for e, ew := range w {
		ts := make([]int64, ew.length)
		for k := range ts {
			ts[k] = lerobot.FrameTime(ew.start, k, fps)
		}
		if change != nil {
			ts = change(e, ts)
		}
		out = append(out, video.EpisodeTimes{Times: ts})
	}
	return out
}

// readParquet reads path whole, as a verify of its shard does.
func readParquet(ctx context.Context, path string) (*pqTable, error) {
	return (&checker{ctx: ctx}).readParquet(path)
}

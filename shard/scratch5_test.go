package shard

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

func f32bytes(v []float32) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*4) }
func i64bytes(v []int64) []byte   { return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*8) }

func writeArrowStage(tb testing.TB, path string, d *benchData) {
	cols := dataColumns(benchFeatures)
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrowField(c)
	}
	schema := arrow.NewSchema(fields, nil)
	f, _ := os.Create(path)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(parquet.DataPageV1), parquet.WithStats(true))
	fw, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		tb.Fatal(err)
	}
	var index int64
	ts := make([]float32, benchFrames)
	ints := make([]int64, benchFrames)
	for e, b := range d.batches {
		n := b.Len
		arrs := make([]arrow.Array, len(cols))
		for i := 0; i < 4; i++ {
			c := cols[i]
			switch c.Dtype {
			case DtypeFloat32:
				child := array.NewData(arrow.PrimitiveTypes.Float32, len(b.Columns[i].Float32), []*memory.Buffer{nil, memory.NewBufferBytes(f32bytes(b.Columns[i].Float32))}, nil, 0, 0)
				if c.isVector() {
					arrs[i] = array.MakeFromData(array.NewData(fields[i].Type, n, []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0))
				} else {
					arrs[i] = array.MakeFromData(child)
				}
			case DtypeBool:
				bm := make([]byte, bitutil.BytesForBits(int64(n)))
				for k, v := range b.Columns[i].Bool {
					if v {
						bitutil.SetBit(bm, k)
					}
				}
				arrs[i] = array.MakeFromData(array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{nil, memory.NewBufferBytes(bm)}, nil, 0, 0))
			}
		}
		for k := range ts {
			ts[k] = float32(float64(k) / benchFPS)
		}
		arrs[4] = array.MakeFromData(array.NewData(arrow.PrimitiveTypes.Float32, n, []*memory.Buffer{nil, memory.NewBufferBytes(f32bytes(ts))}, nil, 0, 0))
		for j := 0; j < 4; j++ {
			v := make([]int64, n)
			for k := range v {
				v[k] = []int64{int64(k), int64(e), index + int64(k), 0}[j]
			}
			_ = ints
			arrs[5+j] = array.MakeFromData(array.NewData(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{nil, memory.NewBufferBytes(i64bytes(v))}, nil, 0, 0))
		}
		index += int64(n)
		rec := array.NewRecordBatch(schema, arrs, int64(n))
		if err := fw.Write(rec); err != nil {
			tb.Fatal(err)
		}
	}
	if err := fw.Close(); err != nil {
		tb.Fatal(err)
	}
}

func BenchmarkArrowOnly(b *testing.B) {
	d := makeBenchData()
	dir := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		writeArrowStage(b, filepath.Join(dir, fmt.Sprintf("a-%d", i)), d)
	}
}

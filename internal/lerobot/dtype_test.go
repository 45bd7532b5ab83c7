package lerobot

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/ceres-robotics/ceres-export/journal"
	"github.com/parquet-go/parquet-go"
)

func TestDtype(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d                        Dtype
		size                     int
		numeric, integer, visual bool
	}{
		{Float32, 4, true, false, false},
		{Float64, 8, true, false, false},
		{Int32, 4, true, true, false},
		{Int64, 8, true, true, false},
		{Uint8, 1, true, true, false},
		{Bool, 1, true, false, false},
		{String, 0, false, false, false},
		{Video, 0, false, false, true},
		{Image, 0, false, false, true},
		{"float16", 0, false, false, false},
	}
	for _, tt := range tests {
		if got := tt.d.Size(); got != tt.size {
			t.Errorf("%s.Size() = %d, want %d", tt.d, got, tt.size)
		}
		if tt.d.Numeric() != tt.numeric || tt.d.Integer() != tt.integer || tt.d.Visual() != tt.visual {
			t.Errorf("%s: numeric %v integer %v visual %v, want %v %v %v", tt.d,
				tt.d.Numeric(), tt.d.Integer(), tt.d.Visual(), tt.numeric, tt.integer, tt.visual)
		}
	}
}

func TestDtypeFloat64(t *testing.T) {
	t.Parallel()
	le := binary.LittleEndian
	tests := []struct {
		d    Dtype
		raw  []byte
		e    int
		want float64
	}{
		{Float32, le.AppendUint32(le.AppendUint32(nil, 0), math.Float32bits(-1.5)), 1, -1.5},
		{Float64, le.AppendUint64(nil, math.Float64bits(math.Pi)), 0, math.Pi},
		{Int32, le.AppendUint32(nil, uint32(0xFFFFFFFE)), 0, -2},
		{Int64, le.AppendUint64(nil, 1<<40), 0, 1 << 40},
		{Uint8, []byte{3, 250}, 1, 250},
		{Bool, []byte{0, 7}, 1, 1},
		{Bool, []byte{0, 7}, 0, 0},
	}
	for _, tt := range tests {
		if got := tt.d.Float64(tt.raw, tt.e); got != tt.want {
			t.Errorf("%s.Float64(%v, %d) = %v, want %v", tt.d, tt.raw, tt.e, got, tt.want)
		}
	}
	if got := String.Float64([]byte{1}, 0); !math.IsNaN(got) {
		t.Errorf("String.Float64 = %v, want NaN", got)
	}
}

// TestDtypeTable checks every row of the table the same way, so that a
// dtype added to it is tested with no test to write: its column holds,
// decodes, converts and reads back values, its Arrow type and Parquet leaf
// agree, and its size is the bytes of its Go type.
func TestDtypeTable(t *testing.T) {
	t.Parallel()
	for _, row := range dtypes {
		d := row.dtype
		t.Run(string(d), func(t *testing.T) {
			vals := d.Values()
			if d.Visual() {
				if vals != nil || d.ArrowType() != nil || d.ParquetLeaf() != nil || d.Numeric() {
					t.Fatal("a visual dtype has no data column")
				}
				return
			}
			if vals == nil || d.ArrowType() == nil || d.ParquetLeaf() == nil || !d.Known() {
				t.Fatal("a data dtype needs Values, an Arrow type and a Parquet leaf")
			}
			v := vals.Resize(nil, 6)
			if vals.Len(v) != 6 {
				t.Fatalf("Len after Resize(6) = %d", vals.Len(v))
			}
			if d.Numeric() {
				// 1..6 set as numbers, seen as little-endian bytes, decoded
				// into another column and taken out again as float64.
				for i := range 6 {
					vals.SetFloat64(v, i, float64(i+1))
				}
				want := []float64{1, 2, 3, 4, 5, 6}
				raw := vals.Bytes(v)
				if d == Bool {
					raw, want = []byte{0, 1, 7, 0, 255, 1}, []float64{0, 1, 1, 0, 1, 1}
				} else if len(raw) != 6*d.Size() {
					t.Fatalf("Bytes: %d bytes, want %d", len(raw), 6*d.Size())
				}
				w := vals.Resize(nil, 6)
				vals.PutLittleEndian(w, 0, raw, 6)
				dim := make([]float64, 6)
				vals.Dimension(w, 0, 1, 6, dim)
				for i := range want {
					if dim[i] != want[i] || d.Float64(raw, i) != want[i] {
						t.Fatalf("decoded %v, Float64 of element %d %v, want %v", dim, i, d.Float64(raw, i), want)
					}
				}
				// Two dimensions of three rows.
				vals.Dimension(w, 1, 2, 3, dim)
				if dim[0] != want[1] || dim[2] != want[5] {
					t.Errorf("dimension 1 of 2: %v", dim[:3])
				}
			}
			pv := make([]parquet.Value, 6)
			vals.ParquetValues(pv, v, 0, 6)
			if kind := d.ParquetLeaf().Type().Kind(); pv[0].Kind() != kind {
				t.Errorf("Parquet value kind %v, leaf kind %v", pv[0].Kind(), kind)
			}
			// An Arrow array of the dtype's Arrow type reads back; one of
			// another type is refused.
			bld := array.NewBuilder(memory.DefaultAllocator, d.ArrowType())
			defer bld.Release()
			for range 3 {
				bld.AppendEmptyValue()
			}
			arr := bld.NewArray()
			defer arr.Release()
			got, ok := vals.ReadArrow(nil, arr, 1, 3)
			if !ok || vals.Len(got) != 2 {
				t.Errorf("ReadArrow of its own type: ok %v, %d values", ok, vals.Len(got))
			}
			other := Int64
			if d == Int64 {
				other = Float64
			}
			ob := array.NewBuilder(memory.DefaultAllocator, other.ArrowType())
			defer ob.Release()
			ob.AppendEmptyValue()
			oa := ob.NewArray()
			defer oa.Release()
			if _, ok := vals.ReadArrow(nil, oa, 0, 1); ok {
				t.Errorf("ReadArrow accepted a %s array", other)
			}
			c := vals.Clone(v)
			vals.SetFloat64(c, 5, 0)
			if d.Numeric() && vals.Len(c) != 6 {
				t.Error("Clone lost values")
			}
		})
	}
}

// TestFromJournal checks the boundary between the journal's field dtypes
// and the features': every journal dtype maps to a numeric feature dtype of
// the same name and size that decodes its bytes to the same value, and a
// dtype the journal does not define maps to none.
func TestFromJournal(t *testing.T) {
	raw := []byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0x3f}
	for _, jd := range journal.Dtypes() {
		d := FromJournal(jd)
		if string(d) != string(jd) || d.Size() != jd.Size() || !d.Numeric() {
			t.Errorf("FromJournal(%s) = %q of size %d, want %q of size %d", jd, d, d.Size(), jd, jd.Size())
		}
		if got, want := d.Float64(raw, 0), jd.Float64(raw, 0); got != want {
			t.Errorf("%s: feature decodes %v, journal %v", jd, got, want)
		}
	}
	for _, jd := range []journal.Dtype{"float16", "string", "video", ""} {
		if d := FromJournal(jd); d != "" {
			t.Errorf("FromJournal(%q) = %q, want none", jd, d)
		}
	}
}

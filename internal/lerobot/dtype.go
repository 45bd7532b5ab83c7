package lerobot

import (
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/ceres-robotics/ceres-export/journal"
	"github.com/parquet-go/parquet-go"
)

// Dtype is a feature's dtype as info.json states it: a numpy name for
// numeric features (the name pandas, datasets and LeRobot all use),
// "string", or "video"/"image" for visual features, whose frames live
// outside the data files.
type Dtype string

// The dtypes LeRobot features have. The numeric ones are the journal's
// field dtypes, under the same numpy names.
const (
	Float32 Dtype = Dtype(journal.DtypeFloat32)
	Float64 Dtype = Dtype(journal.DtypeFloat64)
	Int32   Dtype = Dtype(journal.DtypeInt32)
	Int64   Dtype = Dtype(journal.DtypeInt64)
	Uint8   Dtype = Dtype(journal.DtypeUint8)
	Bool    Dtype = Dtype(journal.DtypeBool)
	String  Dtype = "string"
	Video   Dtype = "video"
	Image   Dtype = "image"
)

// dtypeInfo is one row of the dtype table.
type dtypeInfo struct {
	dtype Dtype
	// journal is the journal dtype whose values this one holds unchanged,
	// the home of its element size and little-endian decoding; "" for
	// string and the visual dtypes.
	journal journal.Dtype
	// integer: statistics keep integer min and max; pandas calls it int64.
	integer bool
	// arrow is the Arrow type datasets.Value gives the dtype.
	arrow arrow.DataType
	// parquet is the Parquet leaf pyarrow writes for it.
	parquet func() parquet.Node
	// values are the column operations (nil for visual dtypes).
	values Values
}

// dtypes is the dtype table, the one place that says what each feature
// dtype is on the dataset side: its Arrow type, Parquet leaf, and how a
// column of it is held, written and read (Values). A numeric row names its
// journal dtype, whose table (journal/dtype.go) holds the element size and
// the little-endian decoding: a numeric dtype is a journal dtype first, so
// adding one adds a row there and one here; nothing else changes.
var dtypes = []dtypeInfo{
	{
		dtype: Float32, journal: journal.DtypeFloat32, arrow: arrow.PrimitiveTypes.Float32,
		parquet: func() parquet.Node { return parquet.Leaf(parquet.FloatType) },
		values: numericValues[float32]{toParquet: func(dst []parquet.Value, src []float32) {
			for i, x := range src {
				dst[i] = parquet.FloatValue(x)
			}
		}},
	},
	{
		dtype: Float64, journal: journal.DtypeFloat64, arrow: arrow.PrimitiveTypes.Float64,
		parquet: func() parquet.Node { return parquet.Leaf(parquet.DoubleType) },
		values: numericValues[float64]{toParquet: func(dst []parquet.Value, src []float64) {
			for i, x := range src {
				dst[i] = parquet.DoubleValue(x)
			}
		}},
	},
	{
		dtype: Int32, journal: journal.DtypeInt32, integer: true, arrow: arrow.PrimitiveTypes.Int32,
		parquet: func() parquet.Node { return parquet.Leaf(parquet.Int32Type) },
		values: numericValues[int32]{toParquet: func(dst []parquet.Value, src []int32) {
			for i, x := range src {
				dst[i] = parquet.Int32Value(x)
			}
		}},
	},
	{
		dtype: Int64, journal: journal.DtypeInt64, integer: true, arrow: arrow.PrimitiveTypes.Int64,
		parquet: func() parquet.Node { return parquet.Leaf(parquet.Int64Type) },
		values: numericValues[int64]{toParquet: func(dst []parquet.Value, src []int64) {
			for i, x := range src {
				dst[i] = parquet.Int64Value(x)
			}
		}},
	},
	{
		dtype: Uint8, journal: journal.DtypeUint8, integer: true, arrow: arrow.PrimitiveTypes.Uint8,
		parquet: func() parquet.Node { return parquet.Uint(8) },
		values: numericValues[uint8]{toParquet: func(dst []parquet.Value, src []uint8) {
			for i, x := range src {
				dst[i] = parquet.Int32Value(int32(x))
			}
		}},
	},
	{
		dtype: Bool, journal: journal.DtypeBool, arrow: arrow.FixedWidthTypes.Boolean,
		parquet: func() parquet.Node { return parquet.Leaf(parquet.BooleanType) },
		values:  boolValues{},
	},
	{
		dtype: String, arrow: arrow.BinaryTypes.String,
		parquet: func() parquet.Node { return parquet.String() },
		values:  stringValues{},
	},
	{dtype: Video},
	{dtype: Image},
}

// info returns d's row of the table (the zero row for an unknown dtype).
func (d Dtype) info() *dtypeInfo {
	for i := range dtypes {
		if dtypes[i].dtype == d {
			return &dtypes[i]
		}
	}
	return &dtypeInfo{}
}

// Known reports whether d is a dtype of the table.
func (d Dtype) Known() bool { return d.info().dtype != "" }

// Size returns the byte size of one element of a numeric dtype (bool
// included), 0 for string, video and image.
func (d Dtype) Size() int { return d.info().journal.Size() }

// Numeric reports whether d is one of the fixed-size numeric dtypes (bool
// included).
func (d Dtype) Numeric() bool { return d.Size() != 0 }

// Integer reports whether d is an integer dtype (int32, int64, uint8): its
// statistics keep integer min and max, and pandas metadata calls it int64.
func (d Dtype) Integer() bool { return d.info().integer }

// Visual reports whether d is video or image: such a feature has no data
// column.
func (d Dtype) Visual() bool { return d == Video || d == Image }

// ArrowType is the Arrow type of a data column of d; nil for visual or
// unknown dtypes.
func (d Dtype) ArrowType() arrow.DataType { return d.info().arrow }

// ParquetLeaf is the Parquet leaf of a data column of d as pyarrow writes
// it; nil for visual or unknown dtypes.
func (d Dtype) ParquetLeaf() parquet.Node {
	if p := d.info().parquet; p != nil {
		return p()
	}
	return nil
}

// Values returns the column operations of d; nil for visual or unknown
// dtypes.
func (d Dtype) Values() Values { return d.info().values }

// Float64 returns element e of little-endian values of numeric dtype d in
// raw, converted to float64 (bool as 0 or 1, any nonzero byte counting as
// true); NaN for other dtypes.
func (d Dtype) Float64(raw []byte, e int) float64 {
	if j := d.info().journal; j != "" {
		return j.Float64(raw, e)
	}
	return math.NaN()
}

// FromJournal returns the feature dtype that holds the values of a journal
// field of dtype d unchanged, of the same size and little-endian encoding;
// "" for a dtype the journal does not define.
func FromJournal(d journal.Dtype) Dtype {
	for i := range dtypes {
		if d != "" && dtypes[i].journal == d {
			return dtypes[i].dtype
		}
	}
	return ""
}

// Values are the operations on a column of one dtype: its values held
// row-major as a slice of the dtype's Go type ([]float32, []bool, []string,
// ...) in an any, nil for an empty column. Each operation loops over the
// typed slice itself, so that no call is made per element.
type Values interface {
	// Len is the number of values.
	Len(v any) int
	// Resize returns v made n long, reusing its storage when its capacity
	// suffices; new elements are zero.
	Resize(v any, n int) any
	// Bytes views the memory of a numeric column other than bool as bytes,
	// in the host's byte order; nil for the others.
	Bytes(v any) []byte
	// PutLittleEndian decodes n little-endian elements from raw into
	// [at, at+n); a bool is true for any nonzero byte.
	PutLittleEndian(v any, at int, raw []byte, n int)
	// SetFloat64 stores x at index i, converted to the dtype (Go's
	// conversion: truncation toward zero for integers; a bool is x != 0).
	SetFloat64(v any, i int, x float64)
	// Dimension stores, for rows rows of width n, element d of each row as
	// float64 in dst[:rows] (bool as 0 or 1): one dimension's values, for
	// its statistics.
	Dimension(v any, d, n, rows int, dst []float64)
	// ParquetValues converts values [lo, hi) into dst[:hi-lo].
	ParquetValues(dst []parquet.Value, v any, lo, hi int)
	// ReadArrow returns v holding values [lo, hi) of a flat Arrow array,
	// reusing v's storage; false when the array is not of the dtype.
	ReadArrow(v any, a arrow.Array, lo, hi int) (any, bool)
	// ShiftRows sets row k of dst (w elements a row) to row k+1 of src for
	// k < n-1, and row n-1 to src's row n-1.
	ShiftRows(dst, src any, n, w int)
	// Clone returns a copy of v that shares no storage with it.
	Clone(v any) any
}

// number is the Go type of a numeric dtype other than bool.
type number interface {
	~float32 | ~float64 | ~int32 | ~int64 | ~uint8
}

// hostLittleEndian says whether this machine stores numbers little-endian.
var hostLittleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

func resize[T any](v any, n int) []T {
	s, _ := v.([]T)
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func clone[T any](v any) any {
	s, _ := v.([]T)
	return append([]T(nil), s...)
}

func shiftRows[T any](dst, src any, n, w int) {
	d, s := dst.([]T), src.([]T)
	if n == 0 {
		return
	}
	copy(d[:(n-1)*w], s[w:n*w])
	copy(d[(n-1)*w:n*w], s[(n-1)*w:n*w])
}

// numericValues are the operations of a numeric dtype other than bool;
// toParquet is the one that depends on the dtype beyond its Go type.
type numericValues[T number] struct {
	toParquet func(dst []parquet.Value, src []T)
}

func (numericValues[T]) Len(v any) int           { s, _ := v.([]T); return len(s) }
func (numericValues[T]) Resize(v any, n int) any { return resize[T](v, n) }

func (numericValues[T]) Bytes(v any) []byte {
	s, _ := v.([]T)
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

func (o numericValues[T]) PutLittleEndian(v any, at int, raw []byte, n int) {
	dst := v.([]T)[at : at+n]
	if n == 0 {
		return
	}
	size := int(unsafe.Sizeof(dst[0]))
	b := unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), n*size)
	copy(b, raw[:n*size])
	if !hostLittleEndian {
		for e := 0; e < len(b); e += size {
			for i, j := e, e+size-1; i < j; i, j = i+1, j-1 {
				b[i], b[j] = b[j], b[i]
			}
		}
	}
}

func (numericValues[T]) SetFloat64(v any, i int, x float64) { v.([]T)[i] = T(x) }

func (numericValues[T]) Dimension(v any, d, n, rows int, dst []float64) {
	s := v.([]T)
	for k := range rows {
		dst[k] = float64(s[k*n+d])
	}
}

func (o numericValues[T]) ParquetValues(dst []parquet.Value, v any, lo, hi int) {
	o.toParquet(dst[:hi-lo], v.([]T)[lo:hi])
}

func (numericValues[T]) ReadArrow(v any, a arrow.Array, lo, hi int) (any, bool) {
	src, ok := a.(interface{ Values() []T })
	if !ok {
		return v, false
	}
	s, _ := v.([]T)
	return append(s[:0], src.Values()[lo:hi]...), true
}

func (numericValues[T]) ShiftRows(dst, src any, n, w int) { shiftRows[T](dst, src, n, w) }
func (numericValues[T]) Clone(v any) any                  { return clone[T](v) }

// boolValues are the operations of bool: one byte, 0 or 1, never viewed
// as raw bytes (any nonzero journal byte is true).
type boolValues struct{}

func (boolValues) Len(v any) int           { s, _ := v.([]bool); return len(s) }
func (boolValues) Resize(v any, n int) any { return resize[bool](v, n) }
func (boolValues) Bytes(any) []byte        { return nil }

func (boolValues) PutLittleEndian(v any, at int, raw []byte, n int) {
	dst := v.([]bool)[at : at+n]
	for e := range dst {
		dst[e] = raw[e] != 0
	}
}

func (boolValues) SetFloat64(v any, i int, x float64) { v.([]bool)[i] = x != 0 }

func (boolValues) Dimension(v any, d, n, rows int, dst []float64) {
	s := v.([]bool)
	for k := range rows {
		dst[k] = 0
		if s[k*n+d] {
			dst[k] = 1
		}
	}
}

func (boolValues) ParquetValues(dst []parquet.Value, v any, lo, hi int) {
	for i, x := range v.([]bool)[lo:hi] {
		dst[i] = parquet.BooleanValue(x)
	}
}

func (boolValues) ReadArrow(v any, a arrow.Array, lo, hi int) (any, bool) {
	src, ok := a.(*array.Boolean)
	if !ok {
		return v, false
	}
	s, _ := v.([]bool)
	s = s[:0]
	for j := lo; j < hi; j++ {
		s = append(s, src.Value(j))
	}
	return s, true
}

func (boolValues) ShiftRows(dst, src any, n, w int) { shiftRows[bool](dst, src, n, w) }
func (boolValues) Clone(v any) any                  { return clone[bool](v) }

// stringValues are the operations of string: no bytes, no numbers, no
// statistics.
type stringValues struct{}

func (stringValues) Len(v any) int                         { s, _ := v.([]string); return len(s) }
func (stringValues) Resize(v any, n int) any               { return resize[string](v, n) }
func (stringValues) Bytes(any) []byte                      { return nil }
func (stringValues) PutLittleEndian(any, int, []byte, int) {}
func (stringValues) SetFloat64(any, int, float64)          {}
func (stringValues) Dimension(any, int, int, int, []float64) {
	panic("lerobot: a string column has no numeric dimension")
}

func (stringValues) ParquetValues(dst []parquet.Value, v any, lo, hi int) {
	for i, x := range v.([]string)[lo:hi] {
		dst[i] = parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(x), len(x)))
	}
}

func (stringValues) ReadArrow(v any, a arrow.Array, lo, hi int) (any, bool) {
	src, ok := a.(*array.String)
	if !ok {
		return v, false
	}
	s, _ := v.([]string)
	s = s[:0]
	for j := lo; j < hi; j++ {
		s = append(s, src.Value(j))
	}
	return s, true
}

func (stringValues) ShiftRows(dst, src any, n, w int) { shiftRows[string](dst, src, n, w) }
func (stringValues) Clone(v any) any                  { return clone[string](v) }

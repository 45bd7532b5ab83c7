package journal

import (
	"encoding/binary"
	"math"
)

// Dtype is the element type of a sensor field (journal format v1, SESSION
// streams[].fields[].dtype): one of the Dtype constants, stored
// little-endian. The names are numpy's, so a LeRobot feature of the same
// dtype holds the same values.
type Dtype string

// Field dtypes.
const (
	DtypeFloat32 Dtype = "float32"
	DtypeFloat64 Dtype = "float64"
	DtypeInt32   Dtype = "int32"
	DtypeInt64   Dtype = "int64"
	DtypeUint8   Dtype = "uint8"
	DtypeBool    Dtype = "bool"
)

var le = binary.LittleEndian

// dtypes is the dtype table: the one place that says how big an element of
// each dtype is and how its little-endian bytes decode. The dataset side
// (internal/lerobot's feature dtypes) builds its Arrow and Parquet columns
// on these rows; adding a dtype adds a row here and one there, and is a new
// format version (docs/journal-format.md, Versioning).
var dtypes = []struct {
	dtype  Dtype
	size   int
	decode func(raw []byte, e int) float64
}{
	{DtypeFloat32, 4, func(raw []byte, e int) float64 { return float64(math.Float32frombits(le.Uint32(raw[4*e:]))) }},
	{DtypeFloat64, 8, func(raw []byte, e int) float64 { return math.Float64frombits(le.Uint64(raw[8*e:])) }},
	{DtypeInt32, 4, func(raw []byte, e int) float64 { return float64(int32(le.Uint32(raw[4*e:]))) }},
	{DtypeInt64, 8, func(raw []byte, e int) float64 { return float64(int64(le.Uint64(raw[8*e:]))) }},
	{DtypeUint8, 1, func(raw []byte, e int) float64 { return float64(raw[e]) }},
	{DtypeBool, 1, func(raw []byte, e int) float64 {
		if raw[e] != 0 {
			return 1
		}
		return 0
	}},
}

// Dtypes returns every dtype the format defines, in a fixed order.
func Dtypes() []Dtype {
	out := make([]Dtype, len(dtypes))
	for i, r := range dtypes {
		out[i] = r.dtype
	}
	return out
}

// Size returns the byte size of one element, or 0 for a dtype the format
// does not define.
func (d Dtype) Size() int {
	for _, r := range dtypes {
		if r.dtype == d {
			return r.size
		}
	}
	return 0
}

// Valid reports whether the format defines d.
func (d Dtype) Valid() bool { return d.Size() != 0 }

// Float64 returns element e of little-endian values of type d in raw,
// converted to float64; a bool is 0 or 1, any nonzero byte counting as
// true. It returns NaN for a dtype the format does not define.
func (d Dtype) Float64(raw []byte, e int) float64 {
	for _, r := range dtypes {
		if r.dtype == d {
			return r.decode(raw, e)
		}
	}
	return math.NaN()
}

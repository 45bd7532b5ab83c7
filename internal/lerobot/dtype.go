package lerobot

import (
	"encoding/binary"
	"math"
)

// Dtype is a feature's dtype as info.json states it: a numpy name for
// numeric features, "string", or "video"/"image" for visual features,
// whose frames live outside the data files.
type Dtype string

// The dtypes LeRobot features have.
const (
	Float32 Dtype = "float32"
	Float64 Dtype = "float64"
	Int32   Dtype = "int32"
	Int64   Dtype = "int64"
	Uint8   Dtype = "uint8"
	Bool    Dtype = "bool"
	String  Dtype = "string"
	Video   Dtype = "video"
	Image   Dtype = "image"
)

// dtypeInfo is one row of the dtype table.
type dtypeInfo struct {
	size    int  // bytes per element, little-endian; 0 for non-numeric
	integer bool // statistics keep integer min and max; pandas calls it int64
	// decode converts element e of little-endian raw to float64.
	decode func(raw []byte, e int) float64
}

var le = binary.LittleEndian

// dtypes is the dtype table: every numeric dtype, its size and its
// little-endian decoding.
var dtypes = map[Dtype]dtypeInfo{
	Float32: {size: 4, decode: func(raw []byte, e int) float64 { return float64(math.Float32frombits(le.Uint32(raw[4*e:]))) }},
	Float64: {size: 8, decode: func(raw []byte, e int) float64 { return math.Float64frombits(le.Uint64(raw[8*e:])) }},
	Int32:   {size: 4, integer: true, decode: func(raw []byte, e int) float64 { return float64(int32(le.Uint32(raw[4*e:]))) }},
	Int64:   {size: 8, integer: true, decode: func(raw []byte, e int) float64 { return float64(int64(le.Uint64(raw[8*e:]))) }},
	Uint8:   {size: 1, integer: true, decode: func(raw []byte, e int) float64 { return float64(raw[e]) }},
	Bool: {size: 1, decode: func(raw []byte, e int) float64 {
		if raw[e] != 0 {
			return 1
		}
		return 0
	}},
}

// Size returns the byte size of one element of a numeric dtype (bool
// included), 0 for string, video and image.
func (d Dtype) Size() int { return dtypes[d].size }

// Numeric reports whether d is one of the fixed-size numeric dtypes (bool
// included).
func (d Dtype) Numeric() bool { return d.Size() != 0 }

// Integer reports whether d is an integer dtype (int32, int64, uint8): its
// statistics keep integer min and max, and pandas metadata calls it int64.
func (d Dtype) Integer() bool { return dtypes[d].integer }

// Visual reports whether d is video or image: such a feature has no data
// column.
func (d Dtype) Visual() bool { return d == Video || d == Image }

// Float64 returns element e of little-endian values of numeric dtype d in
// raw, converted to float64 (bool as 0 or 1, any nonzero byte counting as
// true); NaN for other dtypes.
func (d Dtype) Float64(raw []byte, e int) float64 {
	if t, ok := dtypes[d]; ok {
		return t.decode(raw, e)
	}
	return math.NaN()
}

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

// Size returns the byte size of one element, or 0 for a dtype the format
// does not define.
func (d Dtype) Size() int {
	switch d {
	case DtypeFloat32, DtypeInt32:
		return 4
	case DtypeFloat64, DtypeInt64:
		return 8
	case DtypeUint8, DtypeBool:
		return 1
	}
	return 0
}

// Valid reports whether the format defines d.
func (d Dtype) Valid() bool { return d.Size() != 0 }

// Float64 returns element e of little-endian values of type d in raw,
// converted to float64; a bool is 0 or 1, any nonzero byte counting as
// true. It returns NaN for a dtype the format does not define.
func (d Dtype) Float64(raw []byte, e int) float64 {
	switch d {
	case DtypeFloat32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*e:])))
	case DtypeFloat64:
		return math.Float64frombits(binary.LittleEndian.Uint64(raw[8*e:]))
	case DtypeInt32:
		return float64(int32(binary.LittleEndian.Uint32(raw[4*e:])))
	case DtypeInt64:
		return float64(int64(binary.LittleEndian.Uint64(raw[8*e:])))
	case DtypeUint8:
		return float64(raw[e])
	case DtypeBool:
		if raw[e] != 0 {
			return 1
		}
		return 0
	}
	return math.NaN()
}

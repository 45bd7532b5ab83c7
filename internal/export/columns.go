package export

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/journal"
)

// hostLittleEndian reports whether this machine stores numbers
// little-endian, as the journal does.
func hostLittleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// columnBytes views the memory of c's slice for a numeric dtype other than
// bool as bytes (nil for the others).
func columnBytes(c *shard.ColumnData, dtype string) []byte {
	switch dtype {
	case shard.DtypeFloat32:
		return sliceBytes(c.Float32)
	case shard.DtypeFloat64:
		return sliceBytes(c.Float64)
	case shard.DtypeInt32:
		return sliceBytes(c.Int32)
	case shard.DtypeInt64:
		return sliceBytes(c.Int64)
	case shard.DtypeUint8:
		return c.Uint8
	}
	return nil
}

func sliceBytes[T float32 | float64 | int32 | int64](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// sizeColumn makes the slice of c for dtype n long (reusing its storage).
func sizeColumn(c *shard.ColumnData, dtype string, n int) {
	switch dtype {
	case shard.DtypeFloat32:
		c.Float32 = resize(c.Float32, n)
	case shard.DtypeFloat64:
		c.Float64 = resize(c.Float64, n)
	case shard.DtypeInt32:
		c.Int32 = resize(c.Int32, n)
	case shard.DtypeInt64:
		c.Int64 = resize(c.Int64, n)
	case shard.DtypeUint8:
		c.Uint8 = resize(c.Uint8, n)
	case shard.DtypeBool:
		c.Bool = resize(c.Bool, n)
	}
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// decodeValue converts one raw little-endian value of field p to the feature
// dtype and stores its elements in c from index at.
func decodeValue(c *shard.ColumnData, dtype string, at int, p fieldRef, raw []byte) {
	if dtype == p.dtype {
		// Same type: decode straight into the column.
		switch dtype {
		case shard.DtypeFloat32:
			dst := c.Float32[at : at+p.elems]
			for e := range dst {
				dst[e] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*e:]))
			}
			return
		case shard.DtypeFloat64:
			dst := c.Float64[at : at+p.elems]
			for e := range dst {
				dst[e] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*e:]))
			}
			return
		case shard.DtypeInt32:
			dst := c.Int32[at : at+p.elems]
			for e := range dst {
				dst[e] = int32(binary.LittleEndian.Uint32(raw[4*e:]))
			}
			return
		case shard.DtypeInt64:
			dst := c.Int64[at : at+p.elems]
			for e := range dst {
				dst[e] = int64(binary.LittleEndian.Uint64(raw[8*e:]))
			}
			return
		case shard.DtypeUint8:
			copy(c.Uint8[at:at+p.elems], raw[:p.elems])
			return
		case shard.DtypeBool:
			dst := c.Bool[at : at+p.elems]
			for e := range dst {
				dst[e] = raw[e] != 0
			}
			return
		}
	}
	for e := 0; e < p.elems; e++ {
		v := rawFloat64(p.dtype, raw, e)
		switch dtype {
		case shard.DtypeFloat32:
			c.Float32[at+e] = float32(v)
		case shard.DtypeFloat64:
			c.Float64[at+e] = v
		case shard.DtypeInt32:
			c.Int32[at+e] = int32(v)
		case shard.DtypeInt64:
			c.Int64[at+e] = int64(v)
		case shard.DtypeUint8:
			c.Uint8[at+e] = uint8(v)
		case shard.DtypeBool:
			c.Bool[at+e] = v != 0
		}
	}
}

// rawFloat64 reads element e of a raw value of dtype as float64.
func rawFloat64(dtype string, raw []byte, e int) float64 {
	switch dtype {
	case journal.DtypeFloat32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*e:])))
	case journal.DtypeFloat64:
		return math.Float64frombits(binary.LittleEndian.Uint64(raw[8*e:]))
	case journal.DtypeInt32:
		return float64(int32(binary.LittleEndian.Uint32(raw[4*e:])))
	case journal.DtypeInt64:
		return float64(int64(binary.LittleEndian.Uint64(raw[8*e:])))
	case journal.DtypeUint8:
		return float64(raw[e])
	case journal.DtypeBool:
		if raw[e] != 0 {
			return 1
		}
		return 0
	}
	return math.NaN()
}

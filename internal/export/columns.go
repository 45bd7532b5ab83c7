package export

import (
	"unsafe"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/shard"
)

// hostLittleEndian reports whether this machine stores numbers
// little-endian, as the journal does.
func hostLittleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// decodeValue converts one raw little-endian value of field p to the feature
// dtype and stores its elements in c from index at.
func decodeValue(c *shard.ColumnData, dtype lerobot.Dtype, at int, p fieldRef, raw []byte) {
	if dtype == lerobot.FromJournal(p.dtype) {
		c.PutLittleEndian(dtype, at, raw, p.elems)
		return
	}
	for e := range p.elems {
		c.SetFloat64(dtype, at+e, p.dtype.Float64(raw, e))
	}
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

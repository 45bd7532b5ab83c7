package journal

import (
	"math"
	"testing"
)

// TestDtypes checks the dtype table against values written by hand: the
// size of each dtype and the value its little-endian bytes decode to.
func TestDtypes(t *testing.T) {
	for _, tc := range []struct {
		dtype Dtype
		size  int
		raw   []byte // element 1 of raw is decoded
		want  float64
	}{
		{DtypeFloat32, 4, []byte{0, 0, 0, 0, 0, 0, 0xc0, 0x3f}, 1.5},
		{DtypeFloat64, 8, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf8, 0xbf}, -1.5},
		{DtypeInt32, 4, []byte{0, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff}, -2},
		{DtypeInt64, 8, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x01, 0, 0, 0, 0, 0, 0}, 256},
		{DtypeUint8, 1, []byte{0, 0xff}, 255},
		{DtypeBool, 1, []byte{0, 0x02}, 1},
	} {
		t.Run(string(tc.dtype), func(t *testing.T) {
			if got := tc.dtype.Size(); got != tc.size || !tc.dtype.Valid() {
				t.Errorf("Size() = %d, Valid() = %v, want %d, true", got, tc.dtype.Valid(), tc.size)
			}
			if got := tc.dtype.Float64(tc.raw, 1); got != tc.want {
				t.Errorf("Float64(% x, 1) = %v, want %v", tc.raw, got, tc.want)
			}
		})
	}
	if got := len(Dtypes()); got != 6 {
		t.Errorf("Dtypes() lists %d dtypes, want the format's 6", got)
	}
	if d := Dtype("float16"); d.Size() != 0 || d.Valid() || !math.IsNaN(d.Float64([]byte{0, 0}, 0)) {
		t.Errorf("float16: Size %d, Valid %v, Float64 %v; want 0, false, NaN", d.Size(), d.Valid(), d.Float64([]byte{0, 0}, 0))
	}
}

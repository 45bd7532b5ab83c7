package lerobot

import (
	"encoding/binary"
	"math"
	"testing"
)

func TestDtype(t *testing.T) {
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

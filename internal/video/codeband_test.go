package video

import (
	"testing"
)

// drawnLuma returns a w×h luma plane (stride w+pad) with code drawn on a
// mid-grey background.
func drawnLuma(w, h, pad int, code uint32) []byte {
	ls := w + pad
	y := make([]byte, ls*h)
	for i := range y {
		y[i] = 128
	}
	cls := (w + 1) / 2
	u := make([]byte, cls*((h+1)/2))
	v := make([]byte, len(u))
	drawCode(y, ls, u, v, cls, w, h, code)
	return y
}

func TestCodeBandRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		w, h int
		code uint32
	}{
		{40, 24, 0}, {40, 24, 0xFFFFFFFF}, {160, 120, 12345}, {320, 240, 0xDEADBEEF}, {1280, 720, 1 << 31}, {162, 98, 0x00010001},
	} {
		y := drawnLuma(tc.w, tc.h, 7, tc.code)
		got, ok := ReadCodeLuma(y, tc.w+7, tc.w, tc.h)
		if !ok || got != tc.code {
			t.Errorf("%dx%d: read %d ok=%v, want %d", tc.w, tc.h, got, ok, tc.code)
		}
	}
	// A flipped data block breaks the parity.
	y := drawnLuma(160, 120, 0, 12345)
	x0, y0, x1, y1 := codeBlockRect(160, 120, 1, 5, false)
	for yy := y0; yy < y1; yy++ {
		for xx := x0; xx < x1; xx++ {
			y[yy*160+xx] = 255 - y[yy*160+xx]
		}
	}
	if code, ok := ReadCodeLuma(y, 160, 160, 120); ok {
		t.Errorf("damaged band read as %d", code)
	}
	// No band at all.
	if _, ok := ReadCodeLuma(make([]byte, 160*120), 160, 160, 120); ok {
		t.Error("blank picture read as a code")
	}
}

func FuzzReadCodeLuma(f *testing.F) {
	f.Add(uint32(7), uint16(160), uint16(120), []byte{})
	f.Add(uint32(0xFFFFFFFF), uint16(40), uint16(24), []byte{1, 2, 3})
	f.Add(uint32(99), uint16(3), uint16(500), []byte{255})
	f.Fuzz(func(t *testing.T, code uint32, w, h uint16, noise []byte) {
		W, H := int(w%1000), int(h%1000)
		if W >= 40 && H >= 24 {
			y := drawnLuma(W, H, 0, code)
			if got, ok := ReadCodeLuma(y, W, W, H); !ok || got != code {
				t.Fatalf("%dx%d: read %d ok=%v, want %d", W, H, got, ok, code)
			}
		}
		// Arbitrary bytes must never panic, whatever the claimed size.
		buf := make([]byte, len(noise)*37)
		for i := range buf {
			buf[i] = noise[i%len(noise)] ^ byte(i)
		}
		ReadCodeLuma(buf, W, W, H)
		ReadCodeLuma(buf, W+1, W, H)
	})
}

package video

import (
	"testing"

	"github.com/asticode/go-astiav"
)

// grayFrame is a yuv420p frame whose luma at (x, y) is luma(x, y) and whose
// chroma is neutral.
func grayFrame(t *testing.T, w, h int, luma func(x, y int) byte) *astiav.Frame {
	t.Helper()
	f := astiav.AllocFrame()
	t.Cleanup(f.Free)
	f.SetWidth(w)
	f.SetHeight(h)
	f.SetPixelFormat(astiav.PixelFormatYuv420P)
	if err := f.AllocBuffer(0); err != nil {
		t.Fatal(err)
	}
	yp, yls := plane(f, 0, h)
	up, cls := plane(f, 1, (h+1)/2)
	vp, _ := plane(f, 2, (h+1)/2)
	for y := range h {
		for x := range w {
			yp[y*yls+x] = luma(x, y)
		}
	}
	for i := range (h + 1) / 2 * cls {
		up[i], vp[i] = 128, 128
	}
	return f
}

// A thumbnail's pixel is the conversion of the average of the source
// pixels its box covers: exact on a 2× reduction of a grey picture, the
// picture's own colours on a flat one, and the aspect kept.
func TestThumbnailAveragesBoxes(t *testing.T) {
	luma := func(x, y int) byte { return byte(16 + (x*7+y*13)%200) }
	f := grayFrame(t, 64, 48, luma)
	img, err := DecodedFrame{Frame: f}.Thumbnail(32)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 32 || b.Dy() != 24 {
		t.Fatalf("thumbnail %v, want 32×24", b)
	}
	for oy := range 24 {
		for ox := range 32 {
			sum := 0
			for _, p := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
				sum += int(luma(2*ox+p[0], 2*oy+p[1]))
			}
			want := clampRGB(bt601Matrix.y * ((sum+2)/4 - 16))
			px := img.Pix[oy*img.Stride+4*ox:]
			if px[0] != want || px[1] != want || px[2] != want || px[3] != 255 {
				t.Fatalf("pixel (%d,%d) = %v, want grey %d", ox, oy, px[:4], want)
			}
		}
	}
	flat := grayFrame(t, 50, 30, func(int, int) byte { return 120 })
	full, err := DecodedFrame{Frame: flat}.RGBA()
	if err != nil {
		t.Fatal(err)
	}
	small, err := DecodedFrame{Frame: flat}.Thumbnail(17)
	if err != nil {
		t.Fatal(err)
	}
	if b := small.Bounds(); b.Dx() != 17 || b.Dy() != 10 {
		t.Errorf("thumbnail of 50×30 at 17: %v, want 17×10", b)
	}
	for i := 0; i < len(small.Pix); i += 4 {
		if [4]byte(small.Pix[i:i+4]) != [4]byte(full.Pix[0:4]) {
			t.Fatalf("flat picture: pixel %d = %v, want %v", i/4, small.Pix[i:i+4], full.Pix[0:4])
		}
	}
	if same, err := (DecodedFrame{Frame: flat}).Thumbnail(50); err != nil || same.Bounds() != full.Bounds() {
		t.Errorf("thumbnail at the picture's width: %v, %v", same.Bounds(), err)
	}
}

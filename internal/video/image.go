package video

import (
	"fmt"
	"image"

	"github.com/asticode/go-astiav"
)

// RGBA converts the decoded picture to RGB, as a player shows it: a
// limited-range yuv420p frame (what the exporter writes) through BT.709 when
// the frame says so and BT.601 otherwise, the matrices of the image
// statistics. The image owns its pixels and outlives the callback.
func (f DecodedFrame) RGBA() (*image.RGBA, error) {
	fr := f.Frame
	if fr.PixelFormat() != astiav.PixelFormatYuv420P {
		return nil, fmt.Errorf("video: frame %d is %s, want yuv420p", f.Index, fr.PixelFormat())
	}
	w, h := fr.Width(), fr.Height()
	yp, yls := plane(fr, 0, h)
	up, uls := plane(fr, 1, (h+1)/2)
	vp, vls := plane(fr, 2, (h+1)/2)
	if yp == nil || up == nil || vp == nil || uls != vls {
		return nil, fmt.Errorf("video: frame %d has no picture planes", f.Index)
	}
	m := bt601Matrix
	if cs, _, _ := frameColors(fr); cs == int(astiav.ColorSpaceBt709) {
		m = bt709Matrix
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		yr := yp[y*yls : y*yls+w]
		ur := up[(y/2)*uls : (y/2)*uls+(w+1)/2]
		vr := vp[(y/2)*vls : (y/2)*vls+(w+1)/2]
		px := img.Pix[y*img.Stride : y*img.Stride+4*w]
		for x := range w {
			l := m.y * (int(yr[x]) - 16)
			u := int(ur[x/2]) - 128
			v := int(vr[x/2]) - 128
			px[4*x] = clampRGB(l + m.rv*v)
			px[4*x+1] = clampRGB(l - m.gu*u - m.gv*v)
			px[4*x+2] = clampRGB(l + m.bu*u)
			px[4*x+3] = 255
		}
	}
	return img, nil
}

// clampRGB rounds a ×256 fixed-point channel value and clamps it to a byte.
func clampRGB(v int) byte {
	v = (v + 128) >> 8
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return byte(v)
}

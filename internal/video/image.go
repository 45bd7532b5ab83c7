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
	w, h := fr.Width(), fr.Height()
	p, err := f.yuv420()
	if err != nil {
		return nil, err
	}
	yp, yls, up, uls, vp, vls, m := p.y, p.yls, p.u, p.cls, p.v, p.cls, p.m
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

// Thumbnail returns the decoded picture scaled down to width pixels (the
// height keeping its aspect, at least 1), each output pixel the average of
// the source pixels its box covers, in YUV, then converted to RGB as RGBA
// does. It touches every source pixel once: about a tenth of converting
// the whole picture and scaling it with a Catmull-Rom kernel, which took
// most of a session page's time. A width not below the picture's is the
// picture as RGBA returns it.
func (f DecodedFrame) Thumbnail(width int) (*image.RGBA, error) {
	fr := f.Frame
	w, h := fr.Width(), fr.Height()
	if width >= w {
		return f.RGBA()
	}
	if width < 1 {
		return nil, fmt.Errorf("video: thumbnail width %d", width)
	}
	p, err := f.yuv420()
	if err != nil {
		return nil, err
	}
	yp, yls, up, uls, vp, vls, m := p.y, p.yls, p.u, p.cls, p.v, p.cls, p.m
	dh := max(1, h*width/w)
	img := image.NewRGBA(image.Rect(0, 0, width, dh))
	cw, ch := (w+1)/2, (h+1)/2
	for oy := range dh {
		y0, y1 := oy*h/dh, max(oy*h/dh+1, (oy+1)*h/dh)
		cy0, cy1 := y0/2, max(y0/2+1, min(ch, (y1+1)/2))
		px := img.Pix[oy*img.Stride : oy*img.Stride+4*width]
		for ox := range width {
			x0, x1 := ox*w/width, max(ox*w/width+1, (ox+1)*w/width)
			cx0, cx1 := x0/2, max(x0/2+1, min(cw, (x1+1)/2))
			var sy, su, sv, n, nc int
			for y := y0; y < y1; y++ {
				for _, v := range yp[y*yls+x0 : y*yls+x1] {
					sy += int(v)
				}
				n += x1 - x0
			}
			for y := cy0; y < cy1; y++ {
				for x := cx0; x < cx1; x++ {
					su += int(up[y*uls+x])
					sv += int(vp[y*vls+x])
				}
				nc += cx1 - cx0
			}
			// Rounded averages, then the conversion RGBA uses.
			l := m.y * ((sy+n/2)/n - 16)
			u := (su+nc/2)/nc - 128
			v := (sv+nc/2)/nc - 128
			px[4*ox] = clampRGB(l + m.rv*v)
			px[4*ox+1] = clampRGB(l - m.gu*u - m.gv*v)
			px[4*ox+2] = clampRGB(l + m.bu*u)
			px[4*ox+3] = 255
		}
	}
	return img, nil
}

// yuv420Planes are a decoded yuv420p picture's planes and the matrix that
// converts it to RGB (BT.709 when the frame says so, BT.601 otherwise).
type yuv420Planes struct {
	y, u, v  []byte
	yls, cls int
	m        yuvMatrix
}

// yuv420 returns the frame's planes, or why it has none.
func (f DecodedFrame) yuv420() (yuv420Planes, error) {
	fr := f.Frame
	if fr.PixelFormat() != astiav.PixelFormatYuv420P {
		return yuv420Planes{}, fmt.Errorf("video: frame %d is %s, want yuv420p", f.Index, fr.PixelFormat())
	}
	h := fr.Height()
	yp, yls := plane(fr, 0, h)
	up, uls := plane(fr, 1, (h+1)/2)
	vp, vls := plane(fr, 2, (h+1)/2)
	if yp == nil || up == nil || vp == nil || uls != vls {
		return yuv420Planes{}, fmt.Errorf("video: frame %d has no picture planes", f.Index)
	}
	m := bt601Matrix
	if cs, _, _ := frameColors(fr); cs == int(astiav.ColorSpaceBt709) {
		m = bt709Matrix
	}
	return yuv420Planes{y: yp, u: up, v: vp, yls: yls, cls: uls, m: m}, nil
}

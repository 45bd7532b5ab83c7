package video

import (
	"image"

	"github.com/asticode/go-astiav"
)

// The code band: the top sixth of the picture holds a frame number as large
// luma blocks, two rows of codeBlocks blocks each. A row is
//
//	[white][black][16 data bits, most significant first][parity][¬parity]
//
// Row 0 carries bits 31..16, row 1 bits 15..0. Block edges are proportional
// to the picture size, so the band survives scaling; a reader averages only
// the inner half of each block (compression smears edges) and thresholds at
// the midpoint of the row's white and black reference blocks.
const (
	codeBlocks   = 20
	codeDataBits = 16
	codeRows     = 2
	// codeBandDiv: the band is the top height/codeBandDiv lines.
	codeBandDiv = 6
	codeWhite   = 235
	codeBlack   = 16
	// codeMinContrast is the least white-minus-black difference (luma) a
	// readable row shows.
	codeMinContrast = 60
)

// codeBlockRect returns the pixel rectangle of block b of row r in a w×h
// luma plane; inner selects the central half used for reading.
func codeBlockRect(w, h, r, b int, inner bool) (x0, y0, x1, y1 int) {
	x0, x1 = w*b/codeBlocks, w*(b+1)/codeBlocks
	y0, y1 = h*r/(codeBandDiv*codeRows), h*(r+1)/(codeBandDiv*codeRows)
	if inner {
		dx, dy := (x1-x0)/4, (y1-y0)/4
		x0, x1, y0, y1 = x0+dx, x1-dx, y0+dy, y1-dy
		if x1 <= x0 {
			x1 = x0 + 1
		}
		if y1 <= y0 {
			y1 = y0 + 1
		}
	}
	return x0, y0, x1, y1
}

// codeRowBits returns the codeBlocks block values (true = white) of row r
// for code.
func codeRowBits(code uint32, r int) [codeBlocks]bool {
	var bits [codeBlocks]bool
	word := uint16(code >> 16)
	if r == 1 {
		word = uint16(code)
	}
	bits[0], bits[1] = true, false
	parity := false
	for i := 0; i < codeDataBits; i++ {
		v := word&(1<<(codeDataBits-1-i)) != 0
		bits[2+i] = v
		parity = parity != v
	}
	bits[2+codeDataBits] = parity
	bits[3+codeDataBits] = !parity
	return bits
}

// drawCode paints the band of a w×h luma plane (stride ls) and sets the
// band's chroma (half resolution, strides cls) to neutral.
func drawCode(y []byte, ls int, u, v []byte, cls int, w, h int, code uint32) {
	for r := 0; r < codeRows; r++ {
		bits := codeRowBits(code, r)
		for b := 0; b < codeBlocks; b++ {
			val := byte(codeBlack)
			if bits[b] {
				val = codeWhite
			}
			x0, y0, x1, y1 := codeBlockRect(w, h, r, b, false)
			for yy := y0; yy < y1; yy++ {
				row := y[yy*ls:]
				for xx := x0; xx < x1; xx++ {
					row[xx] = val
				}
			}
		}
	}
	bandH := (h*codeRows/(codeBandDiv*codeRows) + 1) / 2
	for yy := 0; yy < bandH && yy < (h+1)/2; yy++ {
		for xx := 0; xx < (w+1)/2; xx++ {
			u[yy*cls+xx] = 128
			v[yy*cls+xx] = 128
		}
	}
}

// ReadCodeLuma reads the code band from a w×h luma plane with the given
// stride. ok is false when the band is missing or damaged (no contrast
// between the reference blocks, or a parity mismatch).
func ReadCodeLuma(y []byte, stride, w, h int) (code uint32, ok bool) {
	if w < codeBlocks || h < codeBandDiv*codeRows || stride < w || len(y) < stride*(h/codeBandDiv) {
		return 0, false
	}
	mean := func(r, b int) int {
		x0, y0, x1, y1 := codeBlockRect(w, h, r, b, true)
		sum, n := 0, 0
		for yy := y0; yy < y1; yy++ {
			row := y[yy*stride:]
			for xx := x0; xx < x1; xx++ {
				sum += int(row[xx])
				n++
			}
		}
		return sum / n
	}
	for r := 0; r < codeRows; r++ {
		white, black := mean(r, 0), mean(r, 1)
		if white-black < codeMinContrast {
			return 0, false
		}
		mid := (white + black) / 2
		var word uint32
		parity := false
		for i := 0; i < codeDataBits; i++ {
			v := mean(r, 2+i) > mid
			if v {
				word |= 1 << (codeDataBits - 1 - i)
			}
			parity = parity != v
		}
		p, np := mean(r, 2+codeDataBits) > mid, mean(r, 3+codeDataBits) > mid
		if p != parity || np == p {
			return 0, false
		}
		code = code<<16 | word
	}
	return code, true
}

// ReadCodeImage reads the code band from a decoded picture's luma.
func ReadCodeImage(img *image.YCbCr) (uint32, bool) {
	b := img.Bounds()
	return ReadCodeLuma(img.Y, img.YStride, b.Dx(), b.Dy())
}

// ReadCode reads the code band from a decoded frame in a planar YUV format
// (plane 0 is luma).
func ReadCode(f *astiav.Frame) (uint32, bool) {
	w, h := f.Width(), f.Height()
	y, ls := plane(f, 0, h)
	if y == nil {
		return 0, false
	}
	return ReadCodeLuma(y, ls, w, h)
}

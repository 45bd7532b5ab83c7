package journal

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"sync"
)

// Looking for a valid frame after an invalid one means checking the CRC of a
// candidate frame at every offset whose length field fits. Computing each
// candidate's CRC directly costs its claimed length, up to 16 MiB, and sample
// data is full of offsets whose bytes read as a plausible length: a direct
// scan of one damaged 64 MiB segment could take hours. crcScanner instead
// keeps running CRCs P(x) of the scanned bytes from its base, checkpointed
// every crcCheckpoint bytes, and gets the CRC of any range [a, b) in constant
// time from the linearity of the CRC:
//
//	crc(data[a:b]) = P(b) ⊕ shift(P(a), b−a)
//
// where shift advances a CRC register over b−a zero bytes, a multiplication
// by x^(8(b−a)) modulo the Castagnoli polynomial (the operation zlib's
// crc32_combine uses).

// castagnoliReflected is the Castagnoli polynomial in the reflected bit order
// hash/crc32 uses.
const castagnoliReflected = 0x82f63b78

// crcCheckpoint is the distance between stored running CRCs.
const crcCheckpoint = 256

// crcScanStep is how many candidate offsets one buffer load covers; the
// buffer holds crcScanStep plus the longest frame.
const crcScanStep = 16 << 20

// multModP multiplies a and b modulo the polynomial (bit 31 is x^0).
func multModP(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0 && a != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
			a ^= m
		}
		if b&1 != 0 {
			b = b>>1 ^ castagnoliReflected
		} else {
			b >>= 1
		}
	}
	return p
}

// zeroByteTables[j][v] is x^(8·v·256^j) modulo the polynomial, so that
// shifting over n zero bytes takes four table lookups and multiplications.
var zeroByteTables = sync.OnceValue(func() *[4][256]uint32 {
	var t [4][256]uint32
	// x2[k] = x^(2^k).
	var x2 [64]uint32
	x2[0] = 1 << 30 // x^1
	for k := 1; k < len(x2); k++ {
		x2[k] = multModP(x2[k-1], x2[k-1])
	}
	for j := range 4 {
		for v := range 256 {
			// x^(8·v·256^j) = x^(v · 2^(3+8j))
			p := uint32(1) << 31 // x^0
			for k, n := 3+8*j, v; n != 0; k, n = k+1, n>>1 {
				if n&1 != 0 {
					p = multModP(x2[k], p)
				}
			}
			t[j][v] = p
		}
	}
	return &t
})

// shiftCRC advances the CRC register value crc over n zero bytes.
func shiftCRC(crc uint32, n uint32) uint32 {
	t := zeroByteTables()
	for j := range 4 {
		if v := byte(n >> (8 * j)); v != 0 {
			crc = multModP(t[j][v], crc)
		}
	}
	return crc
}

// crcScanner finds the first valid frame at or after an offset. It keeps its
// buffer between calls, so that a reader that resyncs many times in one
// region loads and checksums that region once.
type crcScanner struct {
	base   int64    // file offset of buf[0]
	last   int64    // candidates buf[:last] are fully covered by buf
	buf    []byte   // file bytes [base, base+len(buf))
	ckpt   []uint32 // ckpt[k] = crc of buf[:k·crcCheckpoint]
	loaded bool
}

// prefix returns the crc of buf[:x].
func (sc *crcScanner) prefix(x int) uint32 {
	k := x / crcCheckpoint
	return crc32.Update(sc.ckpt[k], castagnoli, sc.buf[k*crcCheckpoint:x])
}

// rangeCRC returns the crc of buf[a:b].
func (sc *crcScanner) rangeCRC(a, b int) uint32 {
	return sc.prefix(b) ^ shiftCRC(sc.prefix(a), uint32(b-a))
}

// load reads the file from base: the candidates it can then check are
// [base, base+sc.last).
func (sc *crcScanner) load(r io.ReaderAt, base, size int64) error {
	const longest = FrameHeaderSize + MaxPayload
	n := min(size-base, crcScanStep+longest)
	if int64(cap(sc.buf)) < n {
		sc.buf = make([]byte, n)
	}
	sc.buf = sc.buf[:n]
	sc.loaded = false
	if m, err := r.ReadAt(sc.buf, base); int64(m) < n {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	sc.ckpt = sc.ckpt[:0]
	var crc uint32
	for k := 0; ; k += crcCheckpoint {
		sc.ckpt = append(sc.ckpt, crc)
		if k+crcCheckpoint > len(sc.buf) {
			break
		}
		crc = crc32.Update(crc, castagnoli, sc.buf[k:k+crcCheckpoint])
	}
	sc.base = base
	sc.last = min(int64(crcScanStep), n-FrameHeaderSize+1)
	sc.loaded = true
	return nil
}

func (sc *crcScanner) find(r io.ReaderAt, from, size int64) (int64, bool, error) {
	for start := from; start <= size-FrameHeaderSize; {
		if !sc.loaded || start < sc.base || start >= sc.base+sc.last {
			if err := sc.load(r, start, size); err != nil {
				return 0, false, err
			}
		}
		n := int64(len(sc.buf))
		for i := int(start - sc.base); int64(i) < sc.last; i++ {
			h := sc.buf[i : i+FrameHeaderSize]
			length := binary.LittleEndian.Uint32(h)
			if length > MaxPayload || int64(length) > n-int64(i)-FrameHeaderSize || h[8] == 0 {
				continue
			}
			if sc.rangeCRC(i+8, i+FrameHeaderSize+int(length)) == binary.LittleEndian.Uint32(h[4:]) {
				return sc.base + int64(i), true, nil
			}
		}
		start = sc.base + sc.last
	}
	return 0, false, nil
}

package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// fieldLayout is the wire layout of one sensor field.
type fieldLayout struct {
	dtype    Dtype
	elemSize int // bytes per element
	elems    int // elements per sample: product(shape)
	size     int // bytes per sample: elems·elemSize
}

// streamLayout is the wire layout of one sensor stream's samples.
type streamLayout struct {
	fields     []fieldLayout
	sampleSize int64 // Σ field sizes, ≤ MaxSamplesBody
}

// layoutOf computes a sensor stream's layout, checking dtypes and shapes and
// that one sample fits in MaxSamplesBody (so no later product overflows).
func layoutOf(s *Stream) (*streamLayout, error) {
	l := &streamLayout{fields: make([]fieldLayout, len(s.Fields))}
	for i, f := range s.Fields {
		es := f.Dtype.Size()
		if es == 0 {
			return nil, fmt.Errorf("fields[%d] %q: dtype %q is not one of float32, float64, int32, int64, uint8, bool", i, f.Name, f.Dtype)
		}
		size := int64(es)
		for j, d := range f.Shape {
			if d <= 0 {
				return nil, fmt.Errorf("fields[%d] %q: shape[%d] = %d is not a positive integer", i, f.Name, j, d)
			}
			if int64(d) > MaxSamplesBody/size {
				return nil, fmt.Errorf("fields[%d] %q: shape %v makes one sample larger than %d bytes", i, f.Name, f.Shape, MaxSamplesBody)
			}
			size *= int64(d)
		}
		l.sampleSize += size
		if l.sampleSize > MaxSamplesBody {
			return nil, fmt.Errorf("fields: one sample is larger than %d bytes", MaxSamplesBody)
		}
		l.fields[i] = fieldLayout{dtype: f.Dtype, elemSize: es, elems: int(size) / es, size: int(size)}
	}
	return l, nil
}

// samplesHeader is the fixed header of a SAMPLES payload.
type samplesHeader struct {
	Stream   uint16 // index into SESSION.streams
	Encoding uint8  // encodingRaw or encodingZstd
	Reserved uint8  // 0
	N        uint32 // number of samples, ≥ 1
}

// parseSamplesHeader decodes the header of a SAMPLES payload without checking
// its values.
func parseSamplesHeader(payload []byte) (samplesHeader, error) {
	if len(payload) < samplesHeaderSize {
		return samplesHeader{}, invalidf("SAMPLES: payload of %d bytes is shorter than its %d-byte header", len(payload), samplesHeaderSize)
	}
	return samplesHeader{
		Stream:   binary.LittleEndian.Uint16(payload[0:2]),
		Encoding: payload[2],
		Reserved: payload[3],
		N:        binary.LittleEndian.Uint32(payload[4:8]),
	}, nil
}

// Batch is one decoded SAMPLES record: n samples of one sensor stream. A batch
// a cursor returns is valid until its next Next.
type Batch struct {
	// Stream is the index of the stream in SESSION.streams.
	Stream int
	// Times holds the n sample times, non-decreasing.
	Times []int64
	// Fields holds, per field in SESSION order, the n values as raw
	// little-endian bytes: len(Fields[i]) = n·FieldSize(i), sample-major, each
	// value's elements in row-major order.
	Fields [][]byte

	layout *streamLayout
}

// Len returns the number of samples.
func (b *Batch) Len() int { return len(b.Times) }

// FieldElems returns how many elements one value of field i has
// (product(shape); 1 for a scalar).
func (b *Batch) FieldElems(i int) int { return b.layout.fields[i].elems }

// FieldSize returns the byte size of one value of field i.
func (b *Batch) FieldSize(i int) int { return b.layout.fields[i].size }

// Float64At returns element j of field i (j runs over all n·FieldElems(i)
// elements, sample-major) converted to float64; bool is 0 or 1, nonzero bytes
// counting as true.
func (b *Batch) Float64At(i, j int) float64 {
	f := &b.layout.fields[i]
	return f.dtype.Float64(b.Fields[i], j)
}

// zstdDecoder is shared by every reader: DecodeAll is safe for concurrent
// use, and WithDecodeAllCapLimit makes each call stop at the capacity of the
// buffer it is given, which is the exact expected body size.
var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil,
		zstd.WithDecodeAllCapLimit(true),
		zstd.WithDecoderMaxMemory(MaxSamplesBody),
		zstd.WithDecoderConcurrency(0))
})

// samplesDecoder decodes SAMPLES payloads, reusing its buffers: the batch it
// fills is valid until its next decode.
type samplesDecoder struct {
	limit int64  // largest raw body accepted; MaxSamplesBody except in fuzzing
	raw   []byte // decompressed body
	batch Batch
}

// release drops the decoder's buffers when they are larger than keep bytes,
// so that a huge batch does not stay in memory after its use.
func (d *samplesDecoder) release(keep int) {
	if cap(d.raw) > keep {
		d.raw = nil
	}
	if 8*cap(d.batch.Times) > keep {
		d.batch.Times = nil
	}
	clear(d.batch.Fields) // they point into raw or a read buffer
}

// decode checks and decodes payload against the stream layouts (nil for a
// stream that is not a sensor stream). Errors match ErrInvalid, except a
// failure to set up the zstd decoder.
func (d *samplesDecoder) decode(payload []byte, layouts []*streamLayout) (*Batch, error) {
	h, err := parseSamplesHeader(payload)
	if err != nil {
		return nil, err
	}
	switch {
	case int(h.Stream) >= len(layouts):
		return nil, invalidf("SAMPLES: stream index %d out of range (%d streams)", h.Stream, len(layouts))
	case layouts[h.Stream] == nil:
		return nil, invalidf("SAMPLES: stream index %d is not a sensor stream", h.Stream)
	case h.Encoding != encodingRaw && h.Encoding != encodingZstd:
		return nil, invalidf("SAMPLES: body encoding %d is neither 0 (raw) nor 1 (zstd)", h.Encoding)
	case h.Reserved != 0:
		return nil, invalidf("SAMPLES: reserved byte is %d, not 0", h.Reserved)
	case h.N == 0:
		return nil, invalidf("SAMPLES: n is 0")
	}
	l := layouts[h.Stream]
	n := int64(h.N)
	per := sampleTimeSize + l.sampleSize // ≤ 8 + MaxSamplesBody
	if n > d.limit/per {
		return nil, invalidf("SAMPLES: %d samples of %d bytes exceed the %d-byte batch limit", n, per, d.limit)
	}
	want := n * per // ≤ limit: no overflow
	body := payload[samplesHeaderSize:]
	if h.Encoding == encodingZstd {
		if body, err = d.unzstd(body, int(want)); err != nil {
			return nil, err
		}
	}
	if int64(len(body)) != want {
		return nil, invalidf("SAMPLES: body is %d bytes, %d samples of stream %d need exactly %d", len(body), n, h.Stream, want)
	}
	b := &d.batch
	b.Stream = int(h.Stream)
	b.layout = l
	if int64(cap(b.Times)) < n {
		b.Times = make([]int64, n)
	}
	b.Times = b.Times[:n]
	prev := int64(math.MinInt64)
	for i := range b.Times {
		t := int64(binary.LittleEndian.Uint64(body[8*i:]))
		if t < prev {
			return nil, invalidf("SAMPLES: sample %d time %d is before sample %d time %d", i, t, i-1, prev)
		}
		b.Times[i] = t
		prev = t
	}
	if cap(b.Fields) < len(l.fields) {
		b.Fields = make([][]byte, len(l.fields))
	}
	b.Fields = b.Fields[:len(l.fields)]
	pos := 8 * n
	for i, f := range l.fields {
		size := n * int64(f.size)
		b.Fields[i] = body[pos : pos+size : pos+size]
		pos += size
	}
	return b, nil
}

// unzstd decompresses one zstd body of exactly want bytes into d.raw, never
// producing more than want bytes.
func (d *samplesDecoder) unzstd(src []byte, want int) ([]byte, error) {
	var h zstd.Header
	if err := h.Decode(src); err != nil {
		return nil, wrapKind(ErrInvalid, err, "SAMPLES: zstd body")
	}
	if h.HasFCS && h.FrameContentSize != uint64(want) {
		return nil, invalidf("SAMPLES: zstd frame declares %d bytes, the body needs exactly %d", h.FrameContentSize, want)
	}
	// A zstd block takes at least 4 bytes (a 3-byte header and one RLE
	// byte) and yields at most 128 KiB: a body that cannot hold what the
	// samples need is refused before their buffer is allocated.
	if most := (int64(len(src))/4 + 1) << 17; int64(want) > most {
		return nil, invalidf("SAMPLES: a zstd body of %d bytes cannot decompress to the %d bytes it needs", len(src), want)
	}
	dec, err := zstdDecoder()
	if err != nil {
		return nil, err
	}
	if cap(d.raw) < want {
		d.raw = make([]byte, want)
	}
	out, err := dec.DecodeAll(src, d.raw[:0:want])
	if err != nil {
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			return nil, invalidf("SAMPLES: zstd body decompresses to more than the %d bytes it needs", want)
		}
		return nil, wrapKind(ErrInvalid, err, "SAMPLES: zstd body does not decompress to the %d bytes it needs", want)
	}
	if len(out) > 0 && &out[:1][0] != &d.raw[:1][0] {
		// DecodeAll reallocated (it does not when the cap limit holds); keep the
		// bytes anyway rather than rely on it.
		d.raw = out
	}
	return out, nil
}

// DecodeSamples checks and decodes one SAMPLES payload of a session whose
// SESSION record declared streams: the stream index must name a sensor
// stream, the reserved byte must be 0, n ≥ 1, the body exactly 8n + n·Σ
// fieldsize bytes (after decompression for zstd, which never produces more
// than that) and the times non-decreasing. Errors match ErrInvalid. The batch
// refers to payload for a raw body.
func DecodeSamples(payload []byte, streams []Stream) (*Batch, error) {
	layouts, err := sensorLayouts(streams)
	if err != nil {
		return nil, err
	}
	d := &samplesDecoder{limit: MaxSamplesBody}
	return d.decode(payload, layouts)
}

// sensorLayouts returns the layout of each sensor stream (nil for the others).
func sensorLayouts(streams []Stream) ([]*streamLayout, error) {
	layouts := make([]*streamLayout, len(streams))
	for i := range streams {
		if streams[i].Kind != KindSensor {
			continue
		}
		l, err := layoutOf(&streams[i])
		if err != nil {
			return nil, wrapKind(ErrInvalid, err, "streams[%d] %q", i, streams[i].ID)
		}
		layouts[i] = l
	}
	return layouts, nil
}

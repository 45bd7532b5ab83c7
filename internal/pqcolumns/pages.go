package pqcolumns

import (
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Page buffers are pooled in power-of-two classes from 1<<minPageShift to
// 1<<maxPageShift bytes; other sizes are Go's to allocate and collect.
const (
	minPageShift = 10
	maxPageShift = 22
)

// PagePool is a memory.Allocator for arrow-go's page readers that recycles
// what they free. Every column chunk read takes a 16 KiB buffer and more,
// and frees them when the column is read: a merge of 256 small shards
// reads about 35,000 column chunks, and Go's allocator made 0.7 GB of
// zeroed garbage of those buffers, a fifth of the merge's CPU time with
// the collections it caused. A recycled buffer is zeroed, as a fresh one
// is (arrow-go's C allocator hands out calloc's memory too). Safe for
// concurrent use.
type PagePool struct {
	classes [maxPageShift - minPageShift + 1]sync.Pool
}

var _ memory.Allocator = (*PagePool)(nil)

// pageClass is the class of a buffer of size bytes, -1 outside the pool.
func pageClass(size int) int {
	if size <= 0 || size > 1<<maxPageShift {
		return -1
	}
	shift := max(bits.Len(uint(size-1)), minPageShift)
	return shift - minPageShift
}

// Allocate returns a zeroed buffer of size bytes.
func (p *PagePool) Allocate(size int) []byte {
	c := pageClass(size)
	if c < 0 {
		return make([]byte, size)
	}
	if b, ok := p.classes[c].Get().(*[]byte); ok {
		buf := (*b)[:size]
		clear(buf)
		return buf
	}
	return make([]byte, size, 1<<(c+minPageShift))
}

// Reallocate resizes b to size bytes, keeping its contents; b is not used
// again by the caller.
func (p *PagePool) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		old := len(b)
		b = b[:size]
		if size > old {
			clear(b[old:])
		}
		return b
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free takes b back when it is of one of the pool's classes.
func (p *PagePool) Free(b []byte) {
	c := pageClass(cap(b))
	if c < 0 || cap(b) != 1<<(c+minPageShift) {
		return
	}
	b = b[:0]
	p.classes[c].Put(&b)
}

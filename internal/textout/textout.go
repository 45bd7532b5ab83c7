// Package textout is the writer behind the text reports commands print
// (an export's summary, a journal inspection): it keeps the first write
// error, so that printing code stays a straight run of Printf calls and
// reports the error once at the end.
package textout

import (
	"fmt"
	"io"
)

// Writer writes to w until a write fails; later writes do nothing.
type Writer struct {
	w   io.Writer
	err error
}

// New returns a Writer over w.
func New(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes b unless an earlier write failed.
func (e *Writer) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}

// Printf formats to the writer.
func (e *Writer) Printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }

// Err is the first write error, nil if none failed.
func (e *Writer) Err() error { return e.err }

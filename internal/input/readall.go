package input

import (
	"context"
	"io"
)

// ReadAllContext reads r to the end, or until ctx is done: a read from a
// pipe nobody writes to blocks in the kernel, and a signal must still stop
// the command (the reading goroutine ends with the process).
func ReadAllContext(ctx context.Context, r io.Reader) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(r)
		done <- result{b, err}
	}()
	select {
	case res := <-done:
		return res.b, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

package textout

import (
	"errors"
	"testing"
)

type failAfter struct {
	n    int
	got  string
	fail error
}

func (f *failAfter) Write(b []byte) (int, error) {
	if f.n == 0 {
		return 0, f.fail
	}
	f.n--
	f.got += string(b)
	return len(b), nil
}

// The first failed write is the error, and nothing is written after it.
func TestWriterKeepsFirstError(t *testing.T) {
	full := errors.New("disk full")
	f := &failAfter{n: 1, fail: full}
	w := New(f)
	w.Printf("a%d", 1)
	w.Printf("b")
	f.fail = errors.New("later")
	f.n = 5
	w.Printf("c")
	if !errors.Is(w.Err(), full) || f.got != "a1" {
		t.Errorf("err %v, wrote %q; want disk full and a1", w.Err(), f.got)
	}
}

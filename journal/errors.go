package journal

import (
	"errors"
	"fmt"
	"strconv"
)

// Sentinel errors. Every error Open and the cursors return for a journal that
// breaks the format matches exactly one of them with errors.Is; I/O errors
// match none of them.
var (
	// ErrCorrupt: an invalid frame that is not a torn tail (a valid frame
	// follows it in the same segment, or it is in a segment that is not the
	// last one).
	ErrCorrupt = errors.New("journal: corrupt")
	// ErrSegmentGap: no segment 000001.cjl, or a segment number is missing.
	ErrSegmentGap = errors.New("journal: segment missing")
	// ErrBadHeader: a segment header with the wrong magic, version or sequence
	// number, or a segment file name that is not canonical.
	ErrBadHeader = errors.New("journal: bad segment header")
	// ErrInvalid: a record whose frame is intact but whose content breaks
	// the format (a missing member, a time going backwards, a SAMPLES body of
	// the wrong size, a MEDIA path leaving the session directory, ...).
	ErrInvalid = errors.New("journal: invalid record")
	// ErrSpec: the SPEC record's specification does not validate, or its
	// recomputed hash differs from the recorder's.
	ErrSpec = errors.New("journal: specification rejected")
	// ErrClosed: a Writer or SampleCursor used after Close.
	ErrClosed = errors.New("journal: closed")
)

// Error is a format error with its place. Segment is the segment file name
// ("000002.cjl", empty when unknown, as in a bare FrameReader), Offset the
// byte offset of the frame in that file, Record the 1-based index of the
// record in its segment (0 when unknown or when the error is not about one
// record). Err is the cause and matches one of the sentinels.
type Error struct {
	Segment string
	Offset  int64
	Record  int
	Err     error
}

// Error formats as "000002.cjl@1234: checksum mismatch".
func (e *Error) Error() string {
	if e.Segment == "" {
		return "offset " + strconv.FormatInt(e.Offset, 10) + ": " + e.Err.Error()
	}
	return e.Segment + "@" + strconv.FormatInt(e.Offset, 10) + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// kindError is a cause with its own message that matches a sentinel, so that
// *Error prints "000001.cjl@16: checksum mismatch" and still matches
// ErrCorrupt.
type kindError struct {
	msg  string
	kind error
	err  error // optional further cause (a taskspec error, a JSON error)
}

func (e *kindError) Error() string { return e.msg }

func (e *kindError) Unwrap() []error {
	if e.err != nil {
		return []error{e.kind, e.err}
	}
	return []error{e.kind}
}

func corruptf(format string, args ...any) error {
	return &kindError{msg: fmt.Sprintf(format, args...), kind: ErrCorrupt}
}

func invalidf(format string, args ...any) error {
	return &kindError{msg: fmt.Sprintf(format, args...), kind: ErrInvalid}
}

func headerf(format string, args ...any) error {
	return &kindError{msg: fmt.Sprintf(format, args...), kind: ErrBadHeader}
}

// wrapKind gives cause err the sentinel kind and a message prefix.
func wrapKind(kind error, err error, format string, args ...any) error {
	return &kindError{msg: fmt.Sprintf(format, args...) + ": " + err.Error(), kind: kind, err: err}
}

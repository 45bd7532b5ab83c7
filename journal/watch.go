package journal

import (
	"path/filepath"
)

// Watcher notices what a journal being written gains, reading only the
// frames appended since it last looked: a reader following a recording
// polls it often and opens the journal again (Open reads and hashes it
// all) only when a record that matters arrives, or now and then.
type Watcher struct {
	dir string
	seg int   // index of the segment being read
	off int64 // offset of its next frame
}

// Appended counts the whole records a Poll found.
type Appended struct {
	Records int
	// Events counts EVENT records; End is true when END was among them.
	Events int
	End    bool
}

// NewWatcher watches the journal of the session at dir from its start.
func NewWatcher(dir string) *Watcher { return &Watcher{dir: dir, off: SegmentHeaderSize} }

// Poll returns the whole, valid records appended since the last Poll. A
// frame not yet whole (or not valid) stops it there until the next Poll;
// segments are read in order, the next once it exists. Poll reports what
// it found, never damage: Open is the judge of the journal.
func (w *Watcher) Poll() (Appended, error) {
	var a Appended
	names, err := listSegments(filepath.Join(w.dir, "journal"))
	if err != nil {
		return a, nil // not written yet (or damaged: Open says)
	}
	for w.seg < len(names) {
		f, err := openSegmentFile(filepath.Join(w.dir, "journal", names[w.seg]))
		if err != nil {
			return a, err
		}
		size, err := f.Size()
		if err != nil {
			f.Close()
			return a, err
		}
		fr := NewFrameReader(f, w.off, max(size, w.off))
		for {
			typ, _, err := fr.Next()
			if err != nil {
				break
			}
			a.Records++
			switch typ {
			case TypeEvent:
				a.Events++
			case TypeEnd:
				a.End = true
			}
			w.off = fr.Offset()
		}
		f.Close()
		if w.seg == len(names)-1 {
			break
		}
		w.seg, w.off = w.seg+1, SegmentHeaderSize
	}
	return a, nil
}

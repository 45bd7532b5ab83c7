package video

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/asticode/go-astiav"

	"github.com/ceres-robotics/ceres-export/internal/input"
)

// A followed session's camera files are read while the recorder still
// writes them. A file is read as it grows only where its container allows
// it: a WebM that streams (a segment of unknown size whose Info states no
// duration, as MediaRecorder and FFmpeg's live mode write it), whose
// bytes, once written, are never rewritten. Any other file (MP4, a
// WebM whose muxer patches its head and appends Cues at the end) is opened
// once it is final. Either way the demuxer sees the bytes a batch export
// sees, so it yields the same packets.

// growPoll is how often a reader at the end of a growing file looks again.
const growPoll = 20 * time.Millisecond

// errStopped ends a read that waits for growth when the pass is stopped.
var errStopped = errors.New("video: reading stopped")

const (
	infoID     = 0x1549A966
	durationID = 0x4489
	clusterID  = 0x1F43B675
)

// streamingFile decides from the first size bytes of r whether it is a
// camera file that can be read as it grows: a WebM that streams or a
// fragmented MP4. decided is false while the bytes do not yet tell.
func streamingFile(r io.ReaderAt, size int64) (streams, decided bool) {
	var head [8]byte
	n, _ := r.ReadAt(head[:], 0)
	switch {
	case n >= 4 && binary.BigEndian.Uint32(head[:4]) == ebmlHeaderID:
		return streamingWebM(r, size)
	case n == 8 && string(head[4:8]) == "ftyp":
		return streamingMP4(r, size)
	}
	return false, n == 8
}

// streamingMP4 decides whether the ISO BMFF file r is fragmented with its
// moov first (a moov holding an mvex, before any media): such a file only
// grows by fragments (moof, mdat) and, at its end, an index of them (mfra)
// after them. One whose moov follows its media, or is rewritten at the end
// (faststart), is read at its end.
func streamingMP4(r io.ReaderAt, size int64) (streams, decided bool) {
	for pos := int64(0); pos < size; {
		var h [16]byte
		if n, _ := r.ReadAt(h[:8], pos); n < 8 {
			return false, false
		}
		typ := string(h[4:8])
		boxSize, header := int64(binary.BigEndian.Uint32(h[:4])), int64(8)
		switch boxSize {
		case 0:
			return false, true // runs to the end of the file: not a moov-first fragmented file
		case 1:
			if n, _ := r.ReadAt(h[8:16], pos+8); n < 8 {
				return false, false
			}
			boxSize, header = int64(binary.BigEndian.Uint64(h[8:16])), 16
		}
		if boxSize < header {
			return false, true
		}
		switch typ {
		case "ftyp", "free", "skip":
		case "moov":
			if pos+boxSize > size {
				return false, false // the moov is not whole yet
			}
			for c := pos + header; c+8 <= pos+boxSize; {
				var ch [8]byte
				if n, _ := r.ReadAt(ch[:], c); n < 8 {
					return false, true
				}
				cs := int64(binary.BigEndian.Uint32(ch[:4]))
				if string(ch[4:8]) == "mvex" {
					return true, true
				}
				if cs < 8 {
					return false, true
				}
				c += cs
			}
			return false, true
		default:
			return false, true // media before the index
		}
		pos += boxSize
	}
	return false, false
}

// streamingWebM decides whether the Matroska file r is a WebM that streams.
func streamingWebM(r io.ReaderAt, size int64) (streams, decided bool) {
	_, data, n, unknown, err := ebmlElement(r, 0)
	if err != nil {
		return false, false
	}
	if unknown {
		return false, true
	}
	off := data + n
	id, segData, _, unknown, err := ebmlElement(r, off)
	if err != nil {
		return false, off+12 <= size // a whole header that does not parse: not a stream
	}
	if id != segmentID || !unknown {
		return false, true
	}
	for pos := segData; pos < size; {
		id, d, n, unknownChild, err := ebmlElement(r, pos)
		if err != nil {
			return false, false
		}
		switch {
		case id == clusterID:
			return true, true
		case unknownChild:
			return false, true
		case d+n > size:
			return false, false
		case id == infoID:
			// A muxer that will come back to patch the head (FFmpeg's, on a
			// seekable file) writes a placeholder Duration there; a live
			// one never knows the duration.
			for c := d; c < d+n; {
				cid, cd, cn, _, err := ebmlElement(r, c)
				if err != nil {
					return false, true
				}
				if cid == durationID {
					return false, true
				}
				c = cd + cn
			}
		}
		pos = d + n
	}
	return false, false
}

// growingFile is a file the recorder may still append to; reads at its end
// wait for more bytes until final reports that it is complete.
type growingFile struct {
	path  string
	f     *os.File
	pos   int64
	final func() bool
	stop  <-chan struct{}
	sum   hash.Hash // of the bytes [0, pos) read; nil before the first
}

// wait sleeps one poll; errStopped when the pass is stopped.
func wait(stop <-chan struct{}) error {
	t := time.NewTimer(growPoll)
	defer t.Stop()
	select {
	case <-stop:
		return errStopped
	case <-t.C:
		return nil
	}
}

// awaitSource waits until path can be opened the way its container allows:
// it returns a growingFile when the file streams and is not yet final, nil
// when it is final (or never streams and has become final). A file that
// does not exist yet is waited for until final; then the open fails as in
// a batch export.
func awaitSource(path string, final func() bool, stop <-chan struct{}) (*growingFile, error) {
	for {
		done := final()
		if done {
			return nil, nil
		}
		f, err := input.Open(path)
		if err == nil {
			st, serr := f.Stat()
			if serr == nil {
				if streams, decided := streamingFile(f, st.Size()); decided {
					if streams {
						return &growingFile{path: path, f: f, final: final, stop: stop}, nil
					}
				}
			}
			f.Close()
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if err := wait(stop); err != nil {
			return nil, err
		}
	}
}

// read is the demuxer's read callback.
func (g *growingFile) read(b []byte) (int, error) {
	for {
		// Final is asked before the read: bytes written before it said
		// so are all seen by the read after it.
		done := g.final()
		n, err := g.f.ReadAt(b, g.pos)
		if n > 0 {
			if g.sum == nil {
				g.sum = sha256.New()
			}
			g.sum.Write(b[:n])
			g.pos += int64(n)
			return n, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if done {
			return 0, astiav.ErrEof
		}
		if err := wait(g.stop); err != nil {
			return 0, err
		}
	}
}

// print identifies what the reads returned: the file's first pos bytes.
func (g *growingFile) print() ReadPrint {
	p := ReadPrint{Path: g.path, Bytes: g.pos}
	if g.sum == nil {
		g.sum = sha256.New()
	}
	g.sum.Sum(p.SHA256[:0])
	return p
}

// printFile is the ReadPrint of the whole file at path.
func printFile(path string) (ReadPrint, error) {
	f, err := input.Open(path)
	if err != nil {
		return ReadPrint{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return ReadPrint{}, fmt.Errorf("%s: %w", path, err)
	}
	p := ReadPrint{Path: path, Bytes: n}
	h.Sum(p.SHA256[:0])
	return p, nil
}

func (g *growingFile) close() {
	if g.f != nil {
		g.f.Close()
		g.f = nil
	}
}

package video

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Container structure tells a cut file from a complete one. The bytes after
// a file's last packet are not evidence of a cut by themselves: a complete
// WebM ends with its Cues, a complete MP4 written without faststart ends
// with its moov. Both containers state the size of every top-level element,
// so a file is cut short exactly when an element it starts ends past the
// end of the file.

// containerCut walks the top-level structure of the Matroska/WebM or ISO
// BMFF (MP4) file r of size bytes. known is false when the walk cannot
// decide: another container, or an element of unknown size (a live WebM
// cluster, an MP4 box running to the end of the file). When known, cut
// says whether the file ends inside an element, and why names it.
func containerCut(r io.ReaderAt, size int64) (cut, known bool, why string) {
	var head [8]byte
	if n, _ := r.ReadAt(head[:], 0); n < 8 {
		return false, false, ""
	}
	switch {
	case binary.BigEndian.Uint32(head[:4]) == ebmlHeaderID:
		return matroskaCut(r, size)
	case string(head[4:8]) == "ftyp":
		return mp4Cut(r, size)
	}
	return false, false, ""
}

const (
	ebmlHeaderID = 0x1A45DFA3
	segmentID    = 0x18538067
)

// ebmlVint reads an EBML variable-length integer at off: its value (with
// the length marker kept for IDs, stripped for sizes), its length in bytes,
// and whether a size is the reserved "unknown" value.
func ebmlVint(r io.ReaderAt, off int64, keepMarker bool) (v uint64, n int, unknown bool, err error) {
	var b [8]byte
	if _, err := r.ReadAt(b[:1], off); err != nil {
		return 0, 0, false, err
	}
	for n = 1; n <= 8 && b[0]&(0x80>>(n-1)) == 0; n++ {
	}
	if n > 8 {
		return 0, 0, false, fmt.Errorf("byte %d: invalid EBML length", off)
	}
	if n > 1 {
		if _, err := r.ReadAt(b[1:n], off+1); err != nil {
			return 0, 0, false, err
		}
	}
	v = uint64(b[0])
	if !keepMarker {
		v &^= 0x80 >> (n - 1)
	}
	for i := 1; i < n; i++ {
		v = v<<8 | uint64(b[i])
	}
	unknown = !keepMarker && v == 1<<(7*n)-1
	return v, n, unknown, nil
}

// ebmlElement reads the header of the element at off.
func ebmlElement(r io.ReaderAt, off int64) (id, dataOff int64, dataSize int64, unknown bool, err error) {
	idv, n, _, err := ebmlVint(r, off, true)
	if err != nil {
		return 0, 0, 0, false, err
	}
	sz, m, unknown, err := ebmlVint(r, off+int64(n), false)
	if err != nil {
		return 0, 0, 0, false, err
	}
	return int64(idv), off + int64(n+m), int64(sz), unknown, nil
}

func matroskaCut(r io.ReaderAt, size int64) (bool, bool, string) {
	cutAt := func(what string, off, end int64) (bool, bool, string) {
		return true, true, fmt.Sprintf("%s at byte %d ends at byte %d, past the file's %d bytes", what, off, end, size)
	}
	_, data, n, unknown, err := ebmlElement(r, 0)
	if err != nil || unknown {
		return false, false, ""
	}
	off := data + n
	if off > size {
		return cutAt("EBML header", 0, off)
	}
	id, segData, segSize, unknown, err := ebmlElement(r, off)
	if err != nil {
		return true, true, fmt.Sprintf("segment header at byte %d cut short", off)
	}
	if id != segmentID {
		return false, false, ""
	}
	if !unknown {
		if end := segData + segSize; end > size {
			return cutAt("segment", off, end)
		}
		return false, true, ""
	}
	// A segment of unknown size (a live recording): its children say.
	for pos := segData; pos < size; {
		_, d, n, unknown, err := ebmlElement(r, pos)
		if err != nil {
			return true, true, fmt.Sprintf("element header at byte %d cut short", pos)
		}
		if unknown {
			return false, false, ""
		}
		if end := d + n; end > size {
			return cutAt("element", pos, end)
		} else {
			pos = end
		}
	}
	return false, true, ""
}

func mp4Cut(r io.ReaderAt, size int64) (bool, bool, string) {
	for pos := int64(0); pos < size; {
		var h [16]byte
		if n, _ := r.ReadAt(h[:8], pos); n < 8 {
			return true, true, fmt.Sprintf("box header at byte %d cut short", pos)
		}
		typ := string(h[4:8])
		boxSize := int64(binary.BigEndian.Uint32(h[:4]))
		switch boxSize {
		case 0: // runs to the end of the file
			return false, false, ""
		case 1:
			if n, _ := r.ReadAt(h[8:16], pos+8); n < 8 {
				return true, true, fmt.Sprintf("box %q header at byte %d cut short", typ, pos)
			}
			boxSize = int64(binary.BigEndian.Uint64(h[8:16]))
			if boxSize < 16 {
				return false, false, ""
			}
		default:
			if boxSize < 8 {
				return false, false, ""
			}
		}
		if end := pos + boxSize; end > size || end < pos {
			return true, true, fmt.Sprintf("box %q at byte %d ends at byte %d, past the file's %d bytes", typ, pos, end, size)
		}
		pos += boxSize
	}
	return false, true, ""
}

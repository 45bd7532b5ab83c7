package video

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asticode/go-astiav"
)

// webmHead builds the start of a WebM: EBML header, a segment of unknown
// size, an Info holding the given children, then a cluster.
func webmHead(info []byte) []byte {
	b := []byte{0x1A, 0x45, 0xDF, 0xA3, 0x84, 0x42, 0x82, 0x81, 0x77} // EBML {DocType "w"}
	b = append(b, 0x18, 0x53, 0x80, 0x67, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF)
	b = append(b, 0x15, 0x49, 0xA9, 0x66, byte(0x80|len(info)))
	b = append(b, info...)
	b = append(b, 0x1F, 0x43, 0xB6, 0x75, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF)
	return b
}

// Only a WebM whose muxer never comes back to its head is read as it
// grows: a live one (no Duration in Info) streams; one with a placeholder
// Duration, or a segment of known size, or another container, is read at
// its end; too few bytes do not decide yet.
func TestStreamingWebM(t *testing.T) {
	timecodeScale := []byte{0x2A, 0xD7, 0xB1, 0x83, 0x0F, 0x42, 0x40}
	duration := []byte{0x44, 0x89, 0x84, 0, 0, 0, 0}
	live := webmHead(timecodeScale)
	known := append([]byte(nil), live...)
	copy(known[9:], []byte{0x18, 0x53, 0x80, 0x67, 0x88, 0, 0, 0, 0, 0, 0, 0}) // segment of 8 bytes: size known
	for _, c := range []struct {
		name             string
		b                []byte
		streams, decided bool
	}{
		{"live webm", live, true, true},
		{"webm with a duration to patch", webmHead(append(timecodeScale, duration...)), false, true},
		{"segment of known size", known, false, true},
		{"mp4, media first", mp4Boxes(box("ftyp", "isom"), box("mdat", "xxxx"), box("moov", "")), false, true},
		{"fragmented mp4, moov first", mp4Boxes(box("ftyp", "isom"), box("moov", string(box("mvhd", ".."))+string(box("mvex", "")))), true, true},
		{"mp4, moov first, not fragmented", mp4Boxes(box("ftyp", "isom"), box("moov", string(box("mvhd", ".."))), box("mdat", "")), false, true},
		{"fragmented mp4, moov not whole yet", mp4Boxes(box("ftyp", "isom"), box("moov", string(box("mvhd", ".."))+string(box("mvex", ""))))[:20], false, false},
		{"neither", []byte("RIFF....AVI "), false, true},
		{"three bytes", live[:3], false, false},
		{"header without its cluster yet", live[:len(live)-12], false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			streams, decided := streamingFile(bytes.NewReader(c.b), int64(len(c.b)))
			if streams != c.streams || decided != c.decided {
				t.Errorf("streams %v decided %v, want %v %v", streams, decided, c.streams, c.decided)
			}
		})
	}
}

// box is one ISO BMFF box of type typ holding body.
func box(typ, body string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(8+len(body)))
	return append(append(b, typ...), body...)
}

func mp4Boxes(boxes ...[]byte) []byte { return bytes.Join(boxes, nil) }

// FuzzStreamingFile: the head walk never panics nor loops on any bytes.
func FuzzStreamingFile(f *testing.F) {
	f.Add(webmHead([]byte{0x2A, 0xD7, 0xB1, 0x83, 0x0F, 0x42, 0x40}))
	f.Add([]byte{0x1A, 0x45, 0xDF, 0xA3, 0x80, 0x18, 0x53, 0x80, 0x67, 0x01, 0xFF, 0xFF})
	f.Add(mp4Boxes(box("ftyp", "isom"), box("moov", string(box("mvex", "")))))
	f.Fuzz(func(t *testing.T, b []byte) {
		streamingFile(strings.NewReader(string(b)), int64(len(b)))
	})
}

// A growing file reads as the whole file does: reads at its end wait for
// the writer until it is final.
func TestGrowingFileReadsWhatTheWriterWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cam.webm")
	want := bytes.Repeat([]byte("0123456789"), 10_000)
	if err := os.WriteFile(path, want[:1000], 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var final atomic.Bool
	g := &growingFile{path: path, f: f, final: final.Load, stop: make(chan struct{})}
	defer g.close()
	go func() {
		w, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		for off := 1000; off < len(want); off += 7000 {
			time.Sleep(5 * time.Millisecond)
			_, _ = w.Write(want[off:min(off+7000, len(want))])
		}
		w.Close()
		final.Store(true)
	}()
	var got []byte
	buf := make([]byte, 4096)
	for {
		n, err := g.read(buf)
		got = append(got, buf[:n]...)
		if errors.Is(err, astiav.ErrEof) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, want) {
		t.Errorf("read %d bytes, want the file's %d", len(got), len(want))
	}
}

// A pass stopped while it waits for a file to grow returns at once.
func TestGrowingFileStops(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cam.webm")
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	stop := make(chan struct{})
	g := &growingFile{path: path, f: f, final: func() bool { return false }, stop: stop}
	defer g.close()
	buf := make([]byte, 10)
	if n, err := g.read(buf); n != 1 || err != nil {
		t.Fatalf("first read: %d, %v", n, err)
	}
	go func() { time.Sleep(20 * time.Millisecond); close(stop) }()
	done := make(chan error)
	go func() {
		_, err := g.read(buf)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, errStopped) {
			t.Errorf("read after stop: %v, want errStopped", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a stopped read still waits")
	}
}

// What a followed pass read of a camera file is identified by its bytes:
// the file may grow after it, but a file cut below what was read, or
// rewritten within it, no longer matches, whatever its name and size.
func TestReadPrintCheck(t *testing.T) {
	t.Parallel()
	content := bytes.Repeat([]byte("camera bytes "), 100)
	for _, c := range []struct {
		name   string
		change func(path string) error
		want   string // "" for no error
	}{
		{"unchanged", func(string) error { return nil }, ""},
		{"appended", func(p string) error { return os.WriteFile(p, append(slices.Clone(content), "more"...), 0o644) }, ""},
		{"shrunk", func(p string) error { return os.Truncate(p, int64(len(content)/2)) }, "the file shrank"},
		{"rewritten, same size", func(p string) error {
			b := slices.Clone(content)
			b[len(b)/3] ^= 1
			return os.WriteFile(p, b, 0o644)
		}, "were rewritten"},
		{"removed", func(p string) error { return os.Remove(p) }, "changed after the follow read it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "front.webm")
			if err := os.WriteFile(path, content, 0o644); err != nil {
				t.Fatal(err)
			}
			// Read as it grows, to the end, and whole: the same print.
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			g := &growingFile{path: path, f: f, final: func() bool { return true }}
			buf := make([]byte, 100)
			for {
				if _, err := g.read(buf); err != nil {
					break
				}
			}
			g.close()
			whole, err := printFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if g.print() != whole {
				t.Fatalf("read as it grew %+v, read whole %+v", g.print(), whole)
			}
			if err := c.change(path); err != nil {
				t.Fatal(err)
			}
			err = whole.Check()
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Check: %v, want nil", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("Check: %v, want an error saying %q", err, c.want)
			}
		})
	}
}

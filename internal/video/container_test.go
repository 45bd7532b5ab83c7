package video

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trailingAfterPackets decodes path to the end and returns how many bytes
// follow the last packet the demuxer read.
func trailingAfterPackets(t *testing.T, path string) int64 {
	t.Helper()
	d, err := openDecoder(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	for {
		if _, _, err := d.next(); err != nil {
			break
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size() - d.bytesRead
}

// TestCutShortFollowsContainerStructure: a complete file is never called cut
// short, whatever follows its last packet (Cues, a trailing moov), and a
// file cut anywhere inside its structure is.
func TestCutShortFollowsContainerStructure(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cases := []struct {
		name    string
		codec   SynthCodec
		indexed bool
		// wantIndexTail: the complete file ends with more than
		// maxTrailingBytes after its last packet (its index).
		wantIndexTail bool
	}{
		{"webm-live", SynthVP8, false, false},
		{"webm-cues", SynthVP8, true, true},
		{"vp9-cues", SynthVP9, true, true},
		{"mp4-fragmented", SynthH264, false, false},
		{"mp4-moov-at-end", SynthH264, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name)
			opts := SynthOptions{Codec: c.codec, Width: 64, Height: 48, PTS: jitteredPTS(5, 0, 400, nil), Indexed: c.indexed}
			full, err := WriteSynthetic(ctx, path, opts)
			if err != nil {
				t.Fatal(err)
			}
			tail := trailingAfterPackets(t, path)
			if c.wantIndexTail && tail <= maxTrailingBytes {
				t.Fatalf("complete file has only %d bytes after its last packet; the case does not test an index at the end", tail)
			}
			if cut, why := cutShort(path, full.Bytes, full.Bytes-tail); cut {
				t.Errorf("complete file (%d bytes, %d after the last packet) called cut short: %s", full.Bytes, tail, why)
			}
			for _, div := range []int64{2, 3, 7, 50} {
				opts.CutTailBytes = full.Bytes / div
				if c.indexed && c.codec == SynthH264 && div > 7 {
					// Cutting the tail of a moov-at-end MP4 leaves no
					// moov: FFmpeg cannot open it at all (an error, not
					// a cut-short note); cut it inside the media data.
					opts.CutTailBytes = full.Bytes - full.Bytes/div
				}
				res, err := WriteSynthetic(ctx, path, opts)
				if err != nil {
					t.Fatal(err)
				}
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				cut, known, why := containerCut(f, res.Bytes)
				f.Close()
				if !cut || !known {
					t.Errorf("cut by %d of %d bytes: containerCut = %v, known %v", opts.CutTailBytes, full.Bytes, cut, known)
				}
				if cut && !strings.Contains(why, fmt.Sprint(res.Bytes)) && !strings.Contains(why, "cut short") {
					t.Errorf("reason %q names neither the file size nor a cut header", why)
				}
			}
		})
	}
}

// FuzzContainerCut: the structure walk never panics nor loops on any bytes.
func FuzzContainerCut(f *testing.F) {
	f.Add([]byte{0x1A, 0x45, 0xDF, 0xA3, 0x80, 0x18, 0x53, 0x80, 0x67, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF})
	f.Add([]byte("\x00\x00\x00\x10ftypisom\x00\x00\x00\x00\x00\x00\x00\x01mdat\x00\x00\x00\x00\x00\x00\x00\x20"))
	f.Fuzz(func(t *testing.T, b []byte) {
		containerCut(strings.NewReader(string(b)), int64(len(b)))
	})
}

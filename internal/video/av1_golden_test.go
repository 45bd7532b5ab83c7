package video

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"path/filepath"
	"testing"

	"github.com/asticode/go-astiav"
)

// An export's AV1 packets are the ones FFmpeg 5.1 (Debian 12) made through
// SVT-AV1 1.4.1, the version release/libs.lock pins: the digests below were
// recorded by this test, run in the tree before the move to FFmpeg 7.1
// (go-astiav v0.16 over Debian 12's shared FFmpeg 5.1), and FFmpeg 7.1 makes
// them again because codecOptions asks SVT-AV1 for the hierarchical levels
// 5.1's wrapper set. Another SVT-AV1 changes them, and this table with it.
// The container is not compared (its writer tag names the libavformat
// version), only each packet's pts, dts, key flag and bytes. The source is
// a synthetic VP8 camera, whose bytes TestSyntheticBytesStable holds.
func TestAV1BytesStable(t *testing.T) {
	ctx := context.Background()
	const frames = 40
	src := synthVP8At30(t, frames)
	for _, tc := range []struct {
		name   string
		enc    EncoderOptions
		bytes  int
		sha256 string
	}{
		{"LeRobot's defaults", EncoderOptions{}, 31624, "7a7369a82880c3a6ae911d06d44cfb70ce61e0a5d2b028f96973a28047765d1e"},
		{"g 48, 2 threads", EncoderOptions{G: 48, Threads: 2}, 20131, "6ee84afcae00b382abc5fdb29070e75045e8790346c26672516960e2344a9edd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.mp4")
			if _, err := ExportCamera(ctx, []Source{{Path: src, StartT: journalBase}}, []EpisodeTimes{{Times: clockTimes(journalBase, frames, 30)}}, ExportOptions{
				FPS: 30, Encoder: tc.enc, FilePath: func(int, int) string { return out },
			}); err != nil {
				t.Fatal(err)
			}
			n, size, sum := packetDigest(t, out)
			if n != frames || size != tc.bytes || sum != tc.sha256 {
				t.Errorf("%d packets, %d bytes, sha256 %s; want %d packets, %d bytes, sha256 %s", n, size, sum, frames, tc.bytes, tc.sha256)
			}
		})
	}
}

// synthVP8At30 writes a synthetic 160x120 VP8 camera of frames frames at
// an even 30 fps (codes from 7), the source the encoder byte tests share.
func synthVP8At30(t *testing.T, frames int) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "camera.webm")
	pts := make([]int64, frames)
	for i := range pts {
		pts[i] = int64(i) * 1_000_000_000 / 30
	}
	if _, err := WriteSynthetic(context.Background(), src, SynthOptions{Codec: SynthVP8, Width: 160, Height: 120, PTS: pts, FirstCode: 7}); err != nil {
		t.Fatal(err)
	}
	return src
}

// packetDigest reads every packet of path and returns their count, their
// payload bytes, and the SHA-256 of each packet's pts, dts (big-endian
// int64), key flag (one byte) and payload in file order.
func packetDigest(t *testing.T, path string) (packets, bytes int, sha string) {
	t.Helper()
	fc := astiav.AllocFormatContext()
	if fc == nil {
		t.Fatalf("%s: alloc format context failed", path)
	}
	defer fc.Free()
	if err := fc.OpenInput(path, nil, nil); err != nil {
		t.Fatalf("%s: open: %v", path, err)
	}
	defer fc.CloseInput()
	pkt := astiav.AllocPacket()
	defer pkt.Free()
	h := sha256.New()
	for {
		if err := fc.ReadFrame(pkt); err != nil {
			if !errors.Is(err, astiav.ErrEof) {
				t.Fatalf("%s: read after packet %d: %v", path, packets, err)
			}
			break
		}
		var head [17]byte
		binary.BigEndian.PutUint64(head[0:], uint64(pkt.Pts()))
		binary.BigEndian.PutUint64(head[8:], uint64(pkt.Dts()))
		if pkt.Flags().Has(astiav.PacketFlagKey) {
			head[16] = 1
		}
		h.Write(head[:])
		h.Write(pkt.Data())
		packets++
		bytes += len(pkt.Data())
		pkt.Unref()
	}
	return packets, bytes, hex.EncodeToString(h.Sum(nil))
}

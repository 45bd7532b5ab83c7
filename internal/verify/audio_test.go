//go:build cgo

package verify

import (
	"errors"
	"os"
	"testing"

	"github.com/asticode/go-astiav"
)

// addAudioStream remuxes the mp4 at path (stream copy) with an extra MP3
// audio stream holding one silent frame: enough for every demuxer to report
// audio (the mp4 muxer drops a track without samples).
func addAudioStream(t testing.TB, path string) {
	t.Helper()
	in := astiav.AllocFormatContext()
	defer in.Free()
	if err := in.OpenInput(path, nil, nil); err != nil {
		t.Fatal(err)
	}
	defer in.CloseInput()
	if err := in.FindStreamInfo(nil); err != nil {
		t.Fatal(err)
	}
	tmp := path + ".audio.mp4"
	out, err := astiav.AllocOutputFormatContext(nil, "mp4", tmp)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	src := in.Streams()[0]
	vs := out.NewStream(nil)
	if err := src.CodecParameters().Copy(vs.CodecParameters()); err != nil {
		t.Fatal(err)
	}
	vs.CodecParameters().SetCodecTag(0)
	vs.SetTimeBase(src.TimeBase())
	as := out.NewStream(nil)
	cp := as.CodecParameters()
	cp.SetMediaType(astiav.MediaTypeAudio)
	cp.SetCodecID(astiav.CodecIDMp3)
	cp.SetSampleRate(44100)
	cp.SetChannelLayout(astiav.ChannelLayoutStereo)
	cp.SetFrameSize(1152)
	as.SetTimeBase(astiav.NewRational(1, 44100))
	pb, err := astiav.OpenIOContext(tmp, astiav.NewIOContextFlags(astiav.IOContextFlagWrite), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	out.SetPb(pb)
	if err := out.WriteHeader(nil); err != nil {
		t.Fatal(err)
	}
	pkt := astiav.AllocPacket()
	defer pkt.Free()
	for {
		if err := in.ReadFrame(pkt); err != nil {
			if errors.Is(err, astiav.ErrEof) {
				break
			}
			t.Fatal(err)
		}
		if pkt.StreamIndex() == 0 {
			pkt.RescaleTs(src.TimeBase(), vs.TimeBase())
			pkt.SetStreamIndex(0)
			if err := out.WriteInterleavedFrame(pkt); err != nil {
				t.Fatal(err)
			}
		}
		pkt.Unref()
	}
	// One MPEG-1 Layer III frame, 128 kbit/s, 44.1 kHz, stereo: a 4-byte
	// header and 413 zero bytes.
	frame := make([]byte, 417)
	copy(frame, []byte{0xFF, 0xFB, 0x90, 0x00})
	audio := astiav.AllocPacket()
	defer audio.Free()
	if err := audio.FromData(frame); err != nil {
		t.Fatal(err)
	}
	audio.SetStreamIndex(1)
	audio.SetPts(0)
	audio.SetDts(0)
	audio.SetDuration(1152)
	if err := out.WriteInterleavedFrame(audio); err != nil {
		t.Fatal(err)
	}
	if err := out.WriteTrailer(); err != nil {
		t.Fatal(err)
	}
	if err := pb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

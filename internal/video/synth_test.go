package video

import (
	"bytes"
	"context"
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// jitteredPTS returns n presentation times (ns) starting at start with
// intervals drawn from [23, 74] ms; every index in drop is skipped (a dropped
// frame leaves a gap).
func jitteredPTS(seed int64, start int64, n int, drop map[int]bool) []int64 {
	rng := rand.New(rand.NewSource(seed))
	var out []int64
	t := start
	for i := 0; len(out) < n; i++ {
		if !drop[i] {
			out = append(out, t)
		}
		t += int64(23+rng.Intn(52)) * 1_000_000
	}
	return out
}

func TestWriteSyntheticRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct {
		codec SynthCodec
		w, h  int
	}{
		{SynthVP8, 160, 120},
		{SynthVP9, 160, 120},
		{SynthH264, 160, 120},
		{SynthVP8, 320, 240},
	} {
		t.Run(string(tc.codec), func(t *testing.T) {
			pts := jitteredPTS(1, 66_700_000, 40, map[int]bool{5: true, 6: true, 20: true})
			path := filepath.Join(dir, string(tc.codec)+".bin")
			res, err := WriteSynthetic(ctx, path, SynthOptions{Codec: tc.codec, Width: tc.w, Height: tc.h, PTS: pts, FirstCode: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.PTS) != len(pts) {
				t.Fatalf("stored %d pts, want %d", len(res.PTS), len(pts))
			}
			var got int
			err = DecodeEach(ctx, path, func(f DecodedFrame) error {
				if f.TimeBaseNum != res.TimeBaseNum || f.TimeBaseDen != res.TimeBaseDen {
					t.Fatalf("time base %d/%d, want %d/%d", f.TimeBaseNum, f.TimeBaseDen, res.TimeBaseNum, res.TimeBaseDen)
				}
				// The stored times are the requested ones rounded to the
				// time base, up to one constant shift (mp4 with B-frames).
				req := func(i int) int64 {
					num, den := int64(res.TimeBaseDen), int64(res.TimeBaseNum)*1e9
					return (2*pts[i]*num + den) / (2 * den)
				}
				if f.PTS != res.PTS[f.Index] || f.PTS-res.PTS[0] != req(f.Index)-req(0) {
					t.Errorf("frame %d pts %d (result %d), want %d after the first", f.Index, f.PTS, res.PTS[f.Index], req(f.Index)-req(0))
				}
				if tc.codec != SynthH264 && f.PTS != req(f.Index) {
					t.Errorf("frame %d pts %d, want %d", f.Index, f.PTS, req(f.Index))
				}
				code, ok := ReadCode(f.Frame)
				if !ok || code != 1000+uint32(f.Index) {
					t.Errorf("frame %d code %d ok=%v, want %d", f.Index, code, ok, 1000+f.Index)
				}
				got++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != len(pts) {
				t.Fatalf("decoded %d frames, want %d", got, len(pts))
			}
			p, err := Probe(path)
			if err != nil {
				t.Fatal(err)
			}
			if p.Frames != len(pts) || p.Width != tc.w || p.Height != tc.h || p.HasAudio {
				t.Errorf("probe %+v", p)
			}
		})
	}
}

func TestWriteSyntheticDeterministic(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, c := range []SynthCodec{SynthVP8, SynthVP9, SynthH264} {
		pts := jitteredPTS(2, 0, 20, nil)
		var files [2][]byte
		for i := range files {
			path := filepath.Join(dir, string(c)+string(rune('a'+i)))
			if _, err := WriteSynthetic(ctx, path, SynthOptions{Codec: c, Width: 160, Height: 120, PTS: pts}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			files[i] = b
		}
		if !bytes.Equal(files[0], files[1]) {
			t.Errorf("%s: two runs differ (%d vs %d bytes)", c, len(files[0]), len(files[1]))
		}
	}
}

// TestWriteSyntheticIndependentOfHeap writes each codec's file in child
// processes whose C heap glibc fills with different bytes (MALLOC_PERTURB_):
// an encoder that reads memory it never wrote gives different files.
func TestWriteSyntheticIndependentOfHeap(t *testing.T) {
	if out := os.Getenv("CERES_SYNTH_HEAP_OUT"); out != "" {
		pts := jitteredPTS(2, 0, 20, nil)
		codec := SynthCodec(os.Getenv("CERES_SYNTH_HEAP_CODEC"))
		if _, err := WriteSynthetic(context.Background(), out, SynthOptions{Codec: codec, Width: 160, Height: 120, PTS: pts}); err != nil {
			t.Fatal(err)
		}
		return
	}
	dir := t.TempDir()
	for _, c := range []SynthCodec{SynthVP8, SynthVP9, SynthH264} {
		var first []byte
		for _, perturb := range []string{"0", "85", "170"} {
			path := filepath.Join(dir, string(c)+"-"+perturb)
			cmd := exec.Command(os.Args[0], "-test.run=^TestWriteSyntheticIndependentOfHeap$", "-test.count=1")
			cmd.Env = append(os.Environ(), "CERES_SYNTH_HEAP_OUT="+path, "CERES_SYNTH_HEAP_CODEC="+string(c), "MALLOC_PERTURB_="+perturb)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s MALLOC_PERTURB_=%s: %v\n%s", c, perturb, err, out)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = b
			} else if !bytes.Equal(first, b) {
				t.Errorf("%s: MALLOC_PERTURB_=%s gives another file (%d vs %d bytes)", c, perturb, len(b), len(first))
			}
		}
	}
}

func TestWriteSyntheticCutShort(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, c := range []SynthCodec{SynthVP8, SynthH264} {
		pts := jitteredPTS(3, 0, 60, nil)
		path := filepath.Join(dir, string(c))
		full, err := WriteSynthetic(ctx, path, SynthOptions{Codec: c, Width: 160, Height: 120, PTS: pts})
		if err != nil {
			t.Fatal(err)
		}
		cut, err := WriteSynthetic(ctx, path, SynthOptions{Codec: c, Width: 160, Height: 120, PTS: pts, CutTailBytes: full.Bytes / 3})
		if err != nil {
			t.Fatal(err)
		}
		if cut.Bytes != full.Bytes-full.Bytes/3 {
			t.Fatalf("%s: cut file %d bytes, want %d", c, cut.Bytes, full.Bytes-full.Bytes/3)
		}
		// A cut file yields its frames in order, each the one its pts
		// says; frames whose packets were cut are missing (with B-frames
		// a later frame, decoded before them, may follow the gap).
		n, next := 0, uint32(0)
		err = DecodeEach(ctx, path, func(f DecodedFrame) error {
			code, ok := ReadCode(f.Frame)
			if !ok || code < next || int(code) >= len(full.PTS) || f.PTS != full.PTS[code] {
				t.Errorf("%s: frame %d: code %d (readable %v), pts %d, after code %d", c, f.Index, code, ok, f.PTS, next)
			}
			next = code + 1
			n++
			return nil
		})
		t.Logf("%s: cut file decoded %d of %d frames, err %v", c, n, len(pts), err)
		if n == 0 || n >= len(pts) {
			t.Errorf("%s: cut file decoded %d of %d frames", c, n, len(pts))
		}
		var dummy *os.PathError
		if errors.As(err, &dummy) {
			t.Errorf("%s: unexpected path error %v", c, err)
		}
	}
}

package video

import (
	"context"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gridFile exports a synthetic camera as a constant-rate mp4 of n frames at
// 30 fps (frame k shows code first+k) with x264 at the given CRF and size.
func gridFile(t *testing.T, dir, name string, n int, first uint32, crf, w, h int) string {
	t.Helper()
	ctx := context.Background()
	src := filepath.Join(dir, name+".webm")
	pts := make([]int64, n)
	for i := range pts {
		pts[i] = int64(i) * 1_000_000_000 / 30
	}
	if _, err := WriteSynthetic(ctx, src, SynthOptions{Width: w, Height: h, PTS: pts, FirstCode: first}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name+".mp4")
	_, err := ExportCamera(ctx, []Source{{Path: src}}, []EpisodeTimes{{Start: 0, Length: n}}, ExportOptions{
		FPS: 30, Encoder: EncoderOptions{Codec: EncoderX264, CRF: crf},
		FilePath: func(int, int) string { return out },
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// codes decodes a file and returns each frame's code and checks that frame
// k is at exactly k/30 s.
func codes(t *testing.T, path string) []uint32 {
	t.Helper()
	var out []uint32
	err := DecodeEach(context.Background(), path, func(f DecodedFrame) error {
		if f.Seconds().Cmp(big.NewRat(int64(f.Index), 30)) != 0 {
			t.Fatalf("%s frame %d at %s s, want %d/30", path, f.Index, f.Seconds().RatString(), f.Index)
		}
		c, ok := ReadCode(f.Frame)
		if !ok {
			t.Fatalf("%s frame %d: no code", path, f.Index)
		}
		out = append(out, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestJoinerCopiesFramesOntoOneGrid(t *testing.T) {
	dir := t.TempDir()
	a := gridFile(t, dir, "a", 20, 100, 30, 96, 64)
	b := gridFile(t, dir, "b", 13, 500, 30, 96, 64)
	for _, planned := range []int{0, 33 + 20} { // faststart, and a reserved index
		out := filepath.Join(dir, "joined.mp4")
		j, err := NewJoiner(out, 30, planned)
		if err != nil {
			t.Fatal(err)
		}
		var parts []JoinedPart
		for _, src := range []string{a, b, a} {
			p, err := j.Append(context.Background(), src)
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, p)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		if want := []JoinedPart{{0, 20}, {20, 13}, {33, 20}}; parts[0] != want[0] || parts[1] != want[1] || parts[2] != want[2] {
			t.Fatalf("parts %v, want %v", parts, want)
		}
		got := codes(t, out)
		want := append(append(codes(t, a), codes(t, b)...), codes(t, a)...)
		if len(got) != len(want) {
			t.Fatalf("%d frames, want %d", len(got), len(want))
		}
		for k := range got {
			if got[k] != want[k] {
				t.Fatalf("frame %d shows code %d, want %d", k, got[k], want[k])
			}
		}
		p, err := Probe(out)
		if err != nil {
			t.Fatal(err)
		}
		if p.Frames != 53 || p.AvgFrameRate != (Rational{Num: 30, Den: 1}) || p.FirstPTS != 0 ||
			big.NewRat(p.LastEndPTS*int64(p.TimeBase.Num), int64(p.TimeBase.Den)).Cmp(big.NewRat(53, 30)) != 0 {
			t.Fatalf("probe %+v: want 53 frames at 30 fps ending at 53/30 s", p)
		}
	}
}

func TestJoinerRefusals(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	a := gridFile(t, dir, "a", 10, 0, 30, 96, 64)
	other := gridFile(t, dir, "other", 10, 0, 30, 64, 48)
	// A browser-style WebM at 30 fps: times rounded to milliseconds, off
	// the 1/30 s grid.
	webm := filepath.Join(dir, "offgrid.webm")
	pts := []int64{0, 33_333_333, 66_666_667, 100_000_000}
	if _, err := WriteSynthetic(ctx, webm, SynthOptions{Codec: SynthVP9, Width: 96, Height: 64, PTS: pts}); err != nil {
		t.Fatal(err)
	}
	// H.264 with B-frames: decode order differs from presentation order.
	bframes := filepath.Join(dir, "bframes.mp4")
	if _, err := WriteSynthetic(ctx, bframes, SynthOptions{Codec: SynthH264, Width: 96, Height: 64, PTS: pts}); err != nil {
		t.Fatal(err)
	}

	t.Run("incompatible then usable", func(t *testing.T) {
		j, err := NewJoiner(filepath.Join(dir, "j1.mp4"), 30, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := j.Append(ctx, a); err != nil {
			t.Fatal(err)
		}
		if _, err := j.Append(ctx, other); !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "size 64x48") {
			t.Fatalf("appending another size: %v, want ErrIncompatible naming the size", err)
		}
		if p, err := j.Append(ctx, a); err != nil || p.FirstFrame != 10 {
			t.Fatalf("append after a refusal: %+v %v, want frames from 10", p, err)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	})
	for _, tc := range []struct {
		name, src, text string
	}{
		{"off the grid", webm, "is not frame 1 of a 30 fps grid"},
		{"reordered", bframes, "reordered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := NewJoiner(filepath.Join(dir, "j-"+tc.name+".mp4"), 30, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Abort()
			_, err = j.Append(ctx, tc.src)
			if err == nil || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("error %v, want one containing %q", err, tc.text)
			}
		})
	}
	t.Run("more frames than announced", func(t *testing.T) {
		j, err := NewJoiner(filepath.Join(dir, "j2.mp4"), 30, 5)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := j.Append(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := j.Close(); err == nil || !strings.Contains(err.Error(), "10 frames appended, 5 announced") {
			t.Fatalf("close: %v, want the announced count named", err)
		}
	})
}

// Sources prepared ahead join to the same bytes as sources opened by
// AppendRange itself, in every order of preparing: the first one prepared
// (probed when it is taken), one prepared and passed by, one prepared
// twice, one never appended (closed at Close), and a missing file, whose
// error AppendRange reports naming it. An Abort with prepared sources
// pending closes them.
func TestJoinerPreparedSourcesJoinTheSame(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	a := gridFile(t, dir, "a", 12, 100, 30, 96, 64)
	b := gridFile(t, dir, "b", 9, 500, 30, 96, 64)
	c := gridFile(t, dir, "c", 7, 900, 30, 96, 64)
	missing := filepath.Join(dir, "missing.mp4")
	order := []string{a, b, c, a}
	join := func(name string, prepare func(j *Joiner, k int)) string {
		t.Helper()
		out := filepath.Join(dir, name+".mp4")
		j, err := NewJoiner(out, 30, 40)
		if err != nil {
			t.Fatal(err)
		}
		for k, src := range order {
			prepare(j, k)
			if _, err := j.AppendRange(ctx, src, 0, -1); err != nil {
				t.Fatalf("%s: append %d: %v", name, k, err)
			}
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		return readAll(t, out)
	}
	want := join("plain", func(*Joiner, int) {})
	for _, tc := range []struct {
		name    string
		prepare func(j *Joiner, k int)
	}{
		{"next one", func(j *Joiner, k int) {
			if k+1 < len(order) {
				j.Prepare(order[k+1])
			}
		}},
		{"every one, the first too", func(j *Joiner, k int) {
			if k == 0 {
				for _, src := range order {
					j.Prepare(src)
				}
			}
		}},
		{"one passed by", func(j *Joiner, k int) {
			if k == 0 {
				j.Prepare(c) // passed by when b is taken, opened again for its turn
				j.Prepare(b)
			}
		}},
		{"never appended", func(j *Joiner, k int) {
			if k == len(order)-1 {
				j.Prepare(c)
			}
		}},
	} {
		if got := join(tc.name, tc.prepare); got != want {
			t.Errorf("%s: the joined file differs from the one joined without preparing", tc.name)
		}
	}

	j, err := NewJoiner(filepath.Join(dir, "missing-joined.mp4"), 30, 0)
	if err != nil {
		t.Fatal(err)
	}
	j.Prepare(missing)
	if _, err := j.AppendRange(ctx, missing, 0, -1); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("appending a prepared missing file: %v, want an error naming it", err)
	}
	j.Prepare(a)
	j.Prepare(b)
	j.Abort()
	if len(j.prepared) != 0 {
		t.Errorf("%d prepared sources left open after Abort", len(j.prepared))
	}
}

func readAll(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

package video

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/asticode/go-astiav"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
)

// journalBase is an arbitrary journal time (ns) for the fixtures.
const journalBase = int64(1_700_000_000_000_000_000)

// fixtureFile is one synthetic camera file and what the test knows of it.
type fixtureFile struct {
	src       Source
	firstCode uint32
	tb        [2]int  // time base num, den
	pts       []int64 // stored pts of the frames a decoder can read
	cut       bool
}

type fixtureCamera struct {
	name  string
	files []fixtureFile
}

var (
	fixturesOnce sync.Once
	fixtures     []fixtureCamera
	fixturesErr  error
	fixturesDir  string
)

// cameraFixtures builds, once per test binary, three cameras: VP8 in two
// files (the second cut short, with a gap between them), VP9 starting late,
// and H.264 with B-frames; all with jittered timing and dropped frames.
func cameraFixtures(t testing.TB) []fixtureCamera {
	t.Helper()
	fixturesOnce.Do(func() {
		dir, err := os.MkdirTemp("", "video-fixtures-")
		if err != nil {
			fixturesErr = err
			return
		}
		fixturesDir = dir
		fixtures, fixturesErr = buildFixtures(dir, 160, 120)
	})
	if fixturesErr != nil {
		t.Fatal(fixturesErr)
	}
	return fixtures
}

func buildFixtures(dir string, w, h int) ([]fixtureCamera, error) {
	ctx := context.Background()
	type spec struct {
		cam    string
		codec  SynthCodec
		startT int64
		seed   int64
		n      int
		drop   map[int]bool
		code   uint32
		cutDiv int64
	}
	specs := []spec{
		{"vp8", SynthVP8, journalBase, 11, 90, map[int]bool{10: true, 11: true, 12: true, 40: true}, 0, 0},
		{"vp8", SynthVP8, journalBase + 5_200_000_000, 12, 60, map[int]bool{7: true}, 10000, 3},
		{"vp9", SynthVP9, journalBase + 500_000_000, 13, 130, map[int]bool{30: true, 31: true}, 20000, 0},
		{"h264", SynthH264, journalBase - 100_000_000, 14, 140, map[int]bool{50: true, 51: true, 52: true, 53: true}, 30000, 0},
	}
	var cams []fixtureCamera
	for i, s := range specs {
		path := filepath.Join(dir, fmt.Sprintf("%s-%d.%s", s.cam, i, map[SynthCodec]string{SynthVP8: "webm", SynthVP9: "webm", SynthH264: "mp4"}[s.codec]))
		pts := jitteredPTS(s.seed, 0, s.n, s.drop)
		opts := SynthOptions{Codec: s.codec, Width: w, Height: h, PTS: pts, FirstCode: s.code}
		res, err := WriteSynthetic(ctx, path, opts)
		if err != nil {
			return nil, err
		}
		f := fixtureFile{src: Source{Path: path, StartT: s.startT}, firstCode: s.code, tb: [2]int{res.TimeBaseNum, res.TimeBaseDen}, pts: res.PTS}
		if s.cutDiv > 0 {
			opts.CutTailBytes = res.Bytes / s.cutDiv
			if _, err := WriteSynthetic(ctx, path, opts); err != nil {
				return nil, err
			}
			// What survives the cut is whatever a decoder reads.
			n := 0
			_ = DecodeEach(ctx, path, func(DecodedFrame) error { n++; return nil })
			if n == 0 || n >= len(f.pts) {
				return nil, fmt.Errorf("cut file kept %d of %d frames", n, len(f.pts))
			}
			f.pts, f.cut = f.pts[:n], true
		}
		if len(cams) == 0 || cams[len(cams)-1].name != s.cam {
			cams = append(cams, fixtureCamera{name: s.cam})
		}
		c := &cams[len(cams)-1]
		c.files = append(c.files, f)
	}
	return cams, nil
}

// sourceFrame is one frame of the fixtures as the test knows it.
type sourceFrame struct {
	t    *big.Rat // journal ns
	code uint32
	ref  SourceRef
}

func (c fixtureCamera) frames() []sourceFrame {
	var out []sourceFrame
	for i, f := range c.files {
		for j, p := range f.pts {
			t := new(big.Rat).SetFrac64(p*int64(f.tb[0])*1e9, int64(f.tb[1]))
			t.Add(t, new(big.Rat).SetInt64(f.src.StartT))
			out = append(out, sourceFrame{t: t, code: f.firstCode + uint32(j), ref: SourceRef{Source: i, PTS: p}})
		}
	}
	return out
}

func (c fixtureCamera) sources() []Source {
	var out []Source
	for _, f := range c.files {
		out = append(out, f.src)
	}
	return out
}

// expectNearest is the test's own statement of the rule: the frame with the
// least |t - T|, the earlier on a tie; a gap when that distance exceeds
// 1e9/sourceFPS ns. It scans all frames (no streaming).
func expectNearest(frames []sourceFrame, T int64, sourceFPS int) (sourceFrame, bool) {
	target := new(big.Rat).SetInt64(T)
	best := -1
	var bestD *big.Rat
	for i, f := range frames {
		d := new(big.Rat).Sub(f.t, target)
		d.Abs(d)
		if best < 0 || d.Cmp(bestD) < 0 {
			best, bestD = i, d
		}
	}
	return frames[best], bestD.Cmp(new(big.Rat).SetFrac64(1e9, int64(sourceFPS))) > 0
}

// testEpisodes: one inside the first file, one across the gap between the
// VP8 files, one running past the end of the cut file; the first also
// starts before the VP9 camera does.
func testEpisodes(fps int) []EpisodeTimes {
	windows := [][2]int64{{200_000_000, 1_200_000_000}, {3_500_000_000, 5_800_000_000}, {5_900_000_000, 7_600_000_000}}
	var eps []EpisodeTimes
	for _, w := range windows {
		length := int((w[1] - w[0]) * int64(fps) / 1e9)
		eps = append(eps, EpisodeTimes{Times: clockTimes(journalBase+w[0], length, fps)})
	}
	return eps
}

func TestExportEndToEnd(t *testing.T) {
	cams := cameraFixtures(t)
	const fps = 30
	episodes := testEpisodes(fps)
	for _, codec := range []string{EncoderSVTAV1, EncoderX264} {
		for _, cam := range cams {
			t.Run(codec+"/"+cam.name, func(t *testing.T) {
				dir := t.TempDir()
				opts := ExportOptions{
					FPS: fps, SourceFPS: 30,
					Encoder:       EncoderOptions{Codec: codec, Threads: 2},
					FilePath:      func(c, f int) string { return filepath.Join(dir, fmt.Sprintf("chunk-%03d/file-%03d.mp4", c, f)) },
					RecordChoices: true,
					DecodeAll:     true,
				}
				var progress []int
				opts.Progress = func(done, total int) { progress = append(progress, done) }
				res, err := ExportCamera(context.Background(), cam.sources(), episodes, opts)
				if err != nil {
					t.Fatal(err)
				}
				checkExport(t, cam, episodes, fps, res, codec)
				total := 0
				for _, e := range episodes {
					total += len(e.Times)
				}
				if len(progress) != total || progress[total-1] != total {
					t.Errorf("progress called %d times, want %d", len(progress), total)
				}
			})
		}
	}
}

// checkExport verifies an export against the test's own expectation.
func checkExport(t *testing.T, cam fixtureCamera, episodes []EpisodeTimes, fps int, res CameraResult, codec string) {
	t.Helper()
	frames := cam.frames()
	// Expected per-file frame codes and per-episode facts.
	type want struct {
		codes []uint32
	}
	files := map[[2]int]*want{}
	for e, ep := range episodes {
		r := res.Episodes[e]
		w := files[[2]int{r.Chunk, r.File}]
		if w == nil {
			w = &want{}
			files[[2]int{r.Chunk, r.File}] = w
		}
		if r.FirstFrame != len(w.codes) || r.Frames != len(ep.Times) {
			t.Errorf("episode %d: first frame %d frames %d, want %d %d", e, r.FirstFrame, r.Frames, len(w.codes), len(ep.Times))
		}
		if r.FromTimestamp != float64(len(w.codes))/float64(fps) || r.ToTimestamp != float64(len(w.codes)+len(ep.Times))/float64(fps) {
			t.Errorf("episode %d: timestamps %v..%v", e, r.FromTimestamp, r.ToTimestamp)
		}
		gaps := 0
		distinct := map[uint32]bool{}
		for k, T := range ep.Times {
			f, gap := expectNearest(frames, T, 30)
			if gap {
				gaps++
			}
			distinct[f.code] = true
			if r.Choices[k] != f.ref {
				t.Errorf("episode %d frame %d: chose %+v, want %+v", e, k, r.Choices[k], f.ref)
			}
			w.codes = append(w.codes, f.code)
		}
		if r.Gaps != gaps {
			t.Errorf("episode %d: %d gaps, want %d", e, r.Gaps, gaps)
		}
		if r.SourceFrames != len(distinct) {
			t.Errorf("episode %d: %d source frames, want %d", e, r.SourceFrames, len(distinct))
		}
		if r.Stats.Count != int64(len(statsSampleIndices(len(ep.Times)))) {
			t.Errorf("episode %d: stats count %d", e, r.Stats.Count)
		}
		t.Logf("episode %d: %d frames, %d gaps, %d source frames", e, r.Frames, r.Gaps, r.SourceFrames)
	}
	if len(res.Files) != len(files) {
		t.Fatalf("%d files written, want %d", len(res.Files), len(files))
	}
	wantCodec := map[string]string{EncoderSVTAV1: "av1", EncoderX264: "h264"}[codec]
	for _, of := range res.Files {
		w := files[[2]int{of.Chunk, of.File}]
		p, err := Probe(of.Path)
		if err != nil {
			t.Fatal(err)
		}
		if p.Codec != wantCodec || p.PixFmt != "yuv420p" || p.HasAudio || p.Streams != 1 {
			t.Errorf("%s: codec %s pix_fmt %s audio %v streams %d", of.Path, p.Codec, p.PixFmt, p.HasAudio, p.Streams)
		}
		if p.Width%2 != 0 || p.Height%2 != 0 || p.Width != res.Width || p.Height != res.Height {
			t.Errorf("%s: size %dx%d, result says %dx%d", of.Path, p.Width, p.Height, res.Width, res.Height)
		}
		if p.Frames != len(w.codes) || of.Frames != len(w.codes) {
			t.Errorf("%s: %d packets, result %d, want %d", of.Path, p.Frames, of.Frames, len(w.codes))
		}
		if p.AvgFrameRate != (Rational{Num: fps, Den: 1}) || !p.PTSMonotone || !p.DTSMonotone || p.FirstPTS != 0 {
			t.Errorf("%s: avg rate %v monotone %v/%v first pts %d", of.Path, p.AvgFrameRate, p.PTSMonotone, p.DTSMonotone, p.FirstPTS)
		}
		dur := new(big.Rat).SetFrac64(p.StreamDuration*int64(p.TimeBase.Num), int64(p.TimeBase.Den))
		if want := new(big.Rat).SetFrac64(int64(len(w.codes)), int64(fps)); dur.Cmp(want) != 0 {
			t.Errorf("%s: stream duration %v s, want %v", of.Path, dur, want)
		}
		end := new(big.Rat).SetFrac64(p.LastEndPTS*int64(p.TimeBase.Num), int64(p.TimeBase.Den))
		if want := new(big.Rat).SetFrac64(int64(len(w.codes)), int64(fps)); end.Cmp(want) != 0 {
			t.Errorf("%s: last packet ends at %v s, want %v", of.Path, end, want)
		}
		if us := int64(len(w.codes)) * 1_000_000 / int64(fps); p.ContainerDurationUS < us-1 || p.ContainerDurationUS > us+1 {
			t.Errorf("%s: container duration %d us, want %d", of.Path, p.ContainerDurationUS, us)
		}
		checkFaststart(t, of.Path)
		n := 0
		err = DecodeEach(context.Background(), of.Path, func(f DecodedFrame) error {
			if got, want := f.Seconds(), new(big.Rat).SetFrac64(int64(f.Index), int64(fps)); got.Cmp(want) != 0 {
				t.Errorf("%s frame %d at %v s, want %v", of.Path, f.Index, got, want)
			}
			code, ok := ReadCode(f.Frame)
			if f.Index < len(w.codes) && (!ok || code != w.codes[f.Index]) {
				t.Errorf("%s frame %d shows code %d (ok %v), want %d", of.Path, f.Index, code, ok, w.codes[f.Index])
			}
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n != len(w.codes) {
			t.Errorf("%s: decoded %d frames, want %d", of.Path, n, len(w.codes))
		}
	}
	for i, f := range cam.files {
		r := res.Sources[i]
		if r.Dropped != 0 || (r.Complete && r.Frames != len(f.pts)) || (f.cut && r.Complete != r.Truncated) {
			t.Errorf("source %d: report %+v; the file holds %d frames, cut %v", i, r, len(f.pts), f.cut)
		}
		t.Logf("source %d: %+v", i, r)
	}
	if res.Info["video.codec"] != wantCodec || res.Info["video.width"] != res.Width || res.Info["video.fps"] != fps {
		t.Errorf("info %v", res.Info)
	}
}

// checkFaststart reads the top-level mp4 boxes: moov must precede mdat.
func checkFaststart(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var order []string
	var off int64
	for {
		var hdr [16]byte
		if _, err := f.ReadAt(hdr[:8], off); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		size := int64(binary.BigEndian.Uint32(hdr[:4]))
		if size == 1 {
			if _, err := f.ReadAt(hdr[8:16], off+8); err != nil {
				t.Fatal(err)
			}
			size = int64(binary.BigEndian.Uint64(hdr[8:16]))
		}
		if size < 8 {
			t.Fatalf("%s: bad box size %d at %d", path, size, off)
		}
		order = append(order, string(hdr[4:8]))
		off += size
	}
	moov, mdat := -1, -1
	for i, b := range order {
		switch b {
		case "moov":
			moov = i
		case "mdat":
			mdat = i
		}
	}
	if moov < 0 || mdat < 0 || moov > mdat {
		t.Errorf("%s: boxes %v: moov must come before mdat", path, order)
	}
}

func TestExportRotation(t *testing.T) {
	cams := cameraFixtures(t)
	cam := cams[1] // VP9, one file
	dir := t.TempDir()
	const fps = 30
	episodes := testEpisodes(fps)
	var paths [][2]int
	opts := ExportOptions{
		FPS:     fps,
		Encoder: EncoderOptions{Codec: EncoderX264},
		// Small enough that no two episodes share a file.
		MaxFileBytes: 1000,
		ChunkSize:    2,
		FirstChunk:   0, FirstFile: 1,
		FilePath: func(c, f int) string {
			paths = append(paths, [2]int{c, f})
			return filepath.Join(dir, fmt.Sprintf("c%d-f%d.mp4", c, f))
		},
		RecordChoices: true,
	}
	res, err := ExportCamera(context.Background(), cam.sources(), episodes, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]int{{0, 1}, {1, 0}, {1, 1}}
	if fmt.Sprint(paths) != fmt.Sprint(want) {
		t.Errorf("files %v, want %v", paths, want)
	}
	for e, r := range res.Episodes {
		if [2]int{r.Chunk, r.File} != want[e] || r.FromTimestamp != 0 || r.FirstFrame != 0 {
			t.Errorf("episode %d in %d/%d from %v", e, r.Chunk, r.File, r.FromTimestamp)
		}
	}
	checkExport(t, cam, episodes, fps, res, EncoderX264)

	// With the default limit all three share one file.
	opts.MaxFileBytes = 0
	paths = nil
	res, err = ExportCamera(context.Background(), cam.sources(), episodes, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || res.Episodes[2].FirstFrame != len(episodes[0].Times)+len(episodes[1].Times) {
		t.Errorf("default limit: %d files, episode 2 first frame %d", len(res.Files), res.Episodes[2].FirstFrame)
	}

	// A frame limit that holds the first two episodes but not the third.
	opts.MaxFileFrames = len(episodes[0].Times) + len(episodes[1].Times)
	paths = nil
	res, err = ExportCamera(context.Background(), cam.sources(), episodes, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][2]int{{0, 1}, {1, 0}}; fmt.Sprint(paths) != fmt.Sprint(want) {
		t.Errorf("frame limit: files %v, want %v", paths, want)
	}
	if r := res.Episodes[2]; r.Chunk != 1 || r.File != 0 || r.FirstFrame != 0 || res.Episodes[1].FirstFrame != len(episodes[0].Times) {
		t.Errorf("frame limit: episode 2 in %d/%d at frame %d", r.Chunk, r.File, r.FirstFrame)
	}
	checkExport(t, cam, episodes, fps, res, EncoderX264)
}

func TestExportScaledCodeSurvivesAV1(t *testing.T) {
	// The smallest supported output, 160x120, scaled from 320x240 sources
	// and encoded with SVT-AV1 at crf 30: every frame's code must read back.
	dir := t.TempDir()
	ctx := context.Background()
	pts := jitteredPTS(21, 0, 60, map[int]bool{9: true})
	path := filepath.Join(dir, "src.webm")
	res, err := WriteSynthetic(ctx, path, SynthOptions{Codec: SynthVP8, Width: 320, Height: 240, PTS: pts, FirstCode: 0xABCD0000})
	if err != nil {
		t.Fatal(err)
	}
	cam := fixtureCamera{name: "scaled", files: []fixtureFile{{src: Source{Path: path, StartT: journalBase}, firstCode: 0xABCD0000, tb: [2]int{res.TimeBaseNum, res.TimeBaseDen}, pts: res.PTS}}}
	episodes := []EpisodeTimes{{Times: clockTimes(journalBase, 60, 30)}}
	out, err := ExportCamera(ctx, cam.sources(), episodes, ExportOptions{
		FPS: 30, Width: 160, Height: 120, RecordChoices: true,
		FilePath: func(c, f int) string { return filepath.Join(dir, "out.mp4") },
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Width != 160 || out.Height != 120 {
		t.Fatalf("output %dx%d", out.Width, out.Height)
	}
	checkExport(t, cam, episodes, 30, out, EncoderSVTAV1)
}

func TestExportRejectsBadInput(t *testing.T) {
	cams := cameraFixtures(t)
	fp := func(c, f int) string { return filepath.Join(t.TempDir(), "x.mp4") }
	good := []EpisodeTimes{{Times: clockTimes(journalBase, 3, 30)}}
	for _, tc := range []struct {
		name string
		eps  []EpisodeTimes
		opts ExportOptions
	}{
		{"no fps", good, ExportOptions{FilePath: fp}},
		{"no path", good, ExportOptions{FPS: 30}},
		{"empty episode", []EpisodeTimes{{}}, ExportOptions{FPS: 30, FilePath: fp}},
		{"backwards", []EpisodeTimes{{Times: []int64{journalBase + 10, journalBase}}}, ExportOptions{FPS: 30, FilePath: fp}},
		{"odd width", good, ExportOptions{FPS: 30, FilePath: fp, Width: 161, Height: 120}},
		{"codec", good, ExportOptions{FPS: 30, FilePath: fp, Encoder: EncoderOptions{Codec: "libaom-av1"}}},
		{"unknown option", good, ExportOptions{FPS: 30, FilePath: fp, Encoder: EncoderOptions{ExtraOptions: map[string]string{"no-such-option": "1"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ExportCamera(context.Background(), cams[0].sources(), tc.eps, tc.opts); err == nil {
				t.Errorf("no error")
			} else {
				t.Log(err)
			}
		})
	}
}

func TestExportDeterministic(t *testing.T) {
	cams := cameraFixtures(t)
	episodes := testEpisodes(30)
	for _, codec := range []string{EncoderSVTAV1, EncoderX264} {
		var outs [2][]byte
		for i := range outs {
			path := filepath.Join(t.TempDir(), "out.mp4")
			_, err := ExportCamera(context.Background(), cams[2].sources(), episodes, ExportOptions{
				FPS: 30, Encoder: EncoderOptions{Codec: codec, Threads: 2},
				FilePath: func(int, int) string { return path },
			})
			if err != nil {
				t.Fatal(err)
			}
			if outs[i], err = os.ReadFile(path); err != nil {
				t.Fatal(err)
			}
		}
		if string(outs[0]) != string(outs[1]) {
			t.Errorf("%s: two exports differ (%d vs %d bytes)", codec, len(outs[0]), len(outs[1]))
		}
	}
}

func TestExportCancel(t *testing.T) {
	cams := cameraFixtures(t)
	for _, codec := range []string{EncoderSVTAV1, EncoderX264} {
		ctx, cancel := context.WithCancel(context.Background())
		_, err := ExportCamera(ctx, cams[0].sources(), testEpisodes(30), ExportOptions{
			FPS: 30, Encoder: EncoderOptions{Codec: codec},
			FilePath: func(int, int) string { return filepath.Join(t.TempDir(), "out.mp4") },
			Progress: func(done, total int) {
				if done == 10 {
					cancel()
				}
			},
		})
		cancel()
		if err != context.Canceled {
			t.Errorf("%s: err %v, want context.Canceled", codec, err)
		}
	}
}

func TestExportColourTags(t *testing.T) {
	cams := cameraFixtures(t)
	path := filepath.Join(t.TempDir(), "out.mp4")
	if _, err := ExportCamera(context.Background(), cams[0].sources(), testEpisodes(30)[:1], ExportOptions{
		FPS: 30, Encoder: EncoderOptions{Codec: EncoderX264}, FilePath: func(int, int) string { return path },
	}); err != nil {
		t.Fatal(err)
	}
	var src, out [3]int
	if err := DecodeEach(context.Background(), cams[0].files[0].src.Path, func(f DecodedFrame) error {
		if f.Index == 0 {
			src[0], src[1], src[2] = frameColors(f.Frame)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := DecodeEach(context.Background(), path, func(f DecodedFrame) error {
		if f.Index == 0 {
			out[0], out[1], out[2] = frameColors(f.Frame)
			if f.Frame.ColorRange() != astiav.ColorRangeMpeg {
				t.Errorf("colour range %v, want tv", f.Frame.ColorRange())
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("source colours %v, output %v", src, out)
	for i := range src {
		if src[i] != 2 && out[i] != src[i] { // 2 = unspecified
			t.Errorf("colour property %d: source %d, output %d", i, src[i], out[i])
		}
	}
}

// TestExportCompactEpisodeTimes proves the compact frame-clock form of
// EpisodeTimes selects exactly the frames the listed form does.
func TestExportCompactEpisodeTimes(t *testing.T) {
	cam := cameraFixtures(t)[1]
	const fps = 30
	listed := testEpisodes(fps)
	compact := make([]EpisodeTimes, len(listed))
	for i, ep := range listed {
		compact[i] = EpisodeTimes{Start: ep.Times[0], Length: len(ep.Times)}
		if n, first, last := bounds(compact[i], fps); n != len(ep.Times) || first != ep.Times[0] || last != ep.Times[n-1] {
			t.Fatalf("episode %d bounds %d %d %d, want %d %d %d", i, n, first, last, len(ep.Times), ep.Times[0], ep.Times[len(ep.Times)-1])
		}
	}
	dir := t.TempDir()
	run := func(name string, eps []EpisodeTimes) CameraResult {
		res, err := ExportCamera(context.Background(), cam.sources(), eps, ExportOptions{
			FPS: fps, Encoder: EncoderOptions{Codec: EncoderX264}, RecordChoices: true,
			FilePath: func(c, f int) string { return filepath.Join(dir, fmt.Sprintf("%s-%d-%d.mp4", name, c, f)) },
		})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := run("listed", listed), run("compact", compact)
	for e := range a.Episodes {
		if fmt.Sprint(a.Episodes[e].Choices) != fmt.Sprint(b.Episodes[e].Choices) || a.Episodes[e].Gaps != b.Episodes[e].Gaps {
			t.Errorf("episode %d: compact form chose other frames", e)
		}
	}
	checkExport(t, cam, compact2listed(compact, fps), fps, b, EncoderX264)
	if _, err := ExportCamera(context.Background(), cam.sources(), []EpisodeTimes{compact[1], compact[0]}, ExportOptions{
		FPS: fps, FilePath: func(c, f int) string { return filepath.Join(dir, "bad.mp4") },
	}); err == nil {
		t.Error("episodes going back in time were accepted")
	}
}

func compact2listed(eps []EpisodeTimes, fps int) []EpisodeTimes {
	out := make([]EpisodeTimes, len(eps))
	for i, ep := range eps {
		out[i] = EpisodeTimes{Times: listTimes(ep, fps)}
	}
	return out
}

// listTimes returns the episode's frame times at fps, listed.
func listTimes(e EpisodeTimes, fps int) []int64 {
	if e.Times != nil {
		return e.Times
	}
	return clockTimes(e.Start, e.Length, fps)
}

// clockTimes lists the frame clock of an episode of length frames starting
// at start, as a test gives it in EpisodeTimes.Times.
func clockTimes(start int64, length, fps int) []int64 {
	out := make([]int64, length)
	for k := range out {
		out[k] = lerobot.FrameTime(start, k, fps)
	}
	return out
}

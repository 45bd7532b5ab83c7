//go:build cgo

package verify

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/synth"
	"github.com/ceres-robotics/ceres-export/internal/testenv"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// recorderFormats are the recordings headless Chromium's MediaRecorder
// makes here: WebM with VP8, VP9, AV1 and H.264, MP4 with H.264, and
// "video/mp4" alone (VP9 in fragmented MP4).
var recorderFormats = []struct {
	mime, ext string
}{
	{"video/webm;codecs=vp8", "webm"},
	{"video/webm;codecs=vp9", "webm"},
	{"video/webm;codecs=av1", "webm"},
	{"video/webm;codecs=h264", "webm"},
	{"video/mp4;codecs=avc1", "mp4"},
	{"video/mp4", "mp4"},
}

// maxPatchError is the most mean absolute RGB error (levels) an exported
// patch may have against the RGB the page drew (measured: docs/video.md).
const maxPatchError = 4.0

// Real browser recordings, with and without a code band: a page draws a
// moving scene with still grey and colour patches on one canvas, and the
// same scene under synth's code band (a new number every animation
// frame, so that no drawing is recorded twice) on another, and records
// both with MediaRecorder in every format Chromium offers.
// They become a session's two cameras (front: no band, wrist: band),
// exported with both encoders. Every export's patches have the RGB the
// page drew (the levels, whatever the recording's range), and verify
// --journal --all-frames is sound: the front camera's frames proven by
// content, the wrist camera's also by code band, which names the
// recorded frame each exported frame shows (a code names one recorded
// frame: the test checks that no two share one). Against the same session
// with its camera starts one frame interval late the code band check
// names wrong frames. For VP8, whose range only the WebM states, the
// browser's own playback of the recording is measured too: the export
// must look as the recording looks in the browser that made it.
func TestBrowserRecordingsExportTrueLevelsAndFrames(t *testing.T) {
	bin := chromium(t)
	page, err := filepath.Abs(filepath.Join("testdata", "recorder.html"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(bin), chromedp.Flag("headless", true), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()))
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	if err := chromedp.Do(bctx, chromedp.Navigate((&url.URL{Scheme: "file", Path: page}).String()), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("chromium %s: load %s: %v", bin, page, err)
	}
	var mimes []string
	for _, f := range recorderFormats {
		mimes = append(mimes, `"`+f.mime+`"`)
	}
	type recorded struct {
		Recordings map[string]string `json:"recordings"`
		Banded     map[string]string `json:"banded"`
		Patches    [][3]float64      `json:"patches"`
	}
	rec, err := chromedp.Run(bctx, chromedp.Evaluate[recorded](fmt.Sprintf("record([%s], 2000)", strings.Join(mimes, ",")), chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("recording: %v", err)
	}
	for _, f := range recorderFormats {
		t.Run(f.mime, func(t *testing.T) {
			b, err := base64.StdEncoding.DecodeString(rec.Recordings[f.mime])
			if err != nil || len(b) == 0 {
				t.Fatalf("no recording (%d bytes): %v", len(b), err)
			}
			if f.mime == "video/webm;codecs=vp8" {
				shown, err := chromedp.Run(bctx, chromedp.Evaluate[[][3]float64](fmt.Sprintf("shown(%q, %q)", rec.Recordings[f.mime], f.mime), chromedp.EvalAwaitPromise))
				if err != nil {
					t.Fatalf("playing the recording back: %v", err)
				}
				e := patchError(shown, rec.Patches)
				t.Logf("the browser shows its VP8 recording %.1f levels from what it drew (patches %v, drawn %v)", e, shown, rec.Patches)
				if e > maxPatchError {
					t.Errorf("the browser shows its VP8 recording %.1f levels (mean absolute RGB) from what it drew, want ≤ %.0f", e, maxPatchError)
				}
			}
			bb, err := base64.StdEncoding.DecodeString(rec.Banded[f.mime])
			if err != nil || len(bb) == 0 {
				t.Fatalf("no recording with a code band (%d bytes): %v", len(bb), err)
			}
			dir := t.TempDir()
			if d := os.Getenv("CERES_KEEP_RECORDINGS"); d != "" {
				name := strings.NewReplacer("/", "-", ";", "-", "=", "-").Replace(f.mime)
				_ = os.WriteFile(filepath.Join(d, name+"."+f.ext), b, 0o644)
				_ = os.WriteFile(filepath.Join(d, name+"-band."+f.ext), bb, 0o644)
			}
			recorded := filepath.Join(dir, "band."+f.ext)
			if err := os.WriteFile(recorded, bb, 0o644); err != nil {
				t.Fatal(err)
			}
			codes := recordedCodes(t, recorded)
			codec := synth.Options{}.CameraCodec
			if f.ext == "mp4" {
				codec = "h264"
			}
			// The session, and the same one with its camera starts one
			// frame interval late: the exports' frames must show other
			// recorded frames than the shifted session's nearest.
			session, shifted := filepath.Join(dir, "session"), filepath.Join(dir, "shifted")
			for _, s := range []struct {
				dir string
				off int64
			}{{session, 0}, {shifted, 1_000_000_000 / 30}} {
				if _, err := synth.Write(context.Background(), s.dir, synth.Options{Seed: 3, TimeScale: 0.015, Cameras: 2, NoRetries: true, CameraCodec: codec, Width: 64, Height: 48, CameraStartError: s.off}); err != nil {
					t.Fatal(err)
				}
				for cam, rb := range map[string][]byte{"front": b, "wrist": bb} {
					if err := os.WriteFile(filepath.Join(s.dir, "media", cam, "000001."+f.ext), rb, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, enc := range []string{"h264", "av1"} {
				shard := filepath.Join(dir, "shard-"+enc)
				if _, err := export.Export(context.Background(), session, shard, export.Options{VideoFiles: video.Files{}, Video: export.VideoOptions{Codec: enc}}); err != nil {
					t.Fatalf("%s: %v", enc, err)
				}
				file := filepath.Join(shard, "videos", "observation.images.front", "chunk-000", "file-000.mp4")
				var worst float64
				err := video.DecodeEach(context.Background(), file, func(fr video.DecodedFrame) error {
					img, err := fr.RGBA()
					if err != nil {
						return err
					}
					var got [][3]float64
					for i := range rec.Patches {
						var m [3]float64
						x0, y0 := (i%3)*40+12, (i/3)*60+20
						for y := y0; y < y0+20; y++ {
							for x := x0; x < x0+16; x++ {
								o := img.PixOffset(x, y)
								for k := range 3 {
									m[k] += float64(img.Pix[o+k]) / 320
								}
							}
						}
						got = append(got, m)
					}
					worst = max(worst, patchError(got, rec.Patches))
					return nil
				})
				if err != nil {
					t.Fatalf("%s: %v", enc, err)
				}
				t.Logf("%s: patches at most %.1f levels from what the page drew", enc, worst)
				if worst > maxPatchError {
					t.Errorf("%s: a frame's patches are %.1f levels (mean absolute RGB) from what the page drew, want ≤ %.0f", enc, worst, maxPatchError)
				}
				res, err := shardVideo(context.Background(), shard, Options{Journal: session, AllFrames: true})
				if err != nil {
					t.Fatal(err)
				}
				if !res.Sound || len(res.Findings) != 0 {
					t.Errorf("%s: verify --journal --all-frames: sound=%v, findings:\n%s", enc, res.Sound, findingLines(res))
				}
				// Every exported frame of the wrist camera carries a code
				// that names one recorded frame, so the sound verdict
				// above checked each one against the recording.
				wrist := filepath.Join(shard, "videos", "observation.images.wrist", "chunk-000", "file-000.mp4")
				checked := 0
				err = video.DecodeEach(context.Background(), wrist, func(fr video.DecodedFrame) error {
					code, ok := video.ReadCode(fr.Frame)
					if _, rec := codes[code]; !ok || !rec {
						return fmt.Errorf("exported frame %d: code band %d (readable %v) names no recorded frame", fr.Index, code, ok)
					}
					checked++
					return nil
				})
				if err != nil || checked == 0 {
					t.Fatalf("%s: %s: %d frames checked by code band: %v", enc, wrist, checked, err)
				}
				t.Logf("%s: %d exported frames checked by code band, 0 wrong", enc, checked)
				if enc != "h264" {
					continue
				}
				res, err = shardVideo(context.Background(), shard, Options{Journal: shifted, MaxPerCode: 1 << 20})
				if err != nil {
					t.Fatal(err)
				}
				wrong := 0
				for _, fd := range res.Findings {
					if fd.Code == "journal.video-frame" && strings.Contains(fd.File, "observation.images.wrist") {
						wrong++
						if fd.Episode == nil || fd.Frame == nil {
							t.Errorf("finding names no episode or frame: %s", fd)
						}
					}
				}
				if res.Sound || wrong == 0 {
					t.Errorf("%s: verify against the session with camera starts 1/30 s late: sound=%v, %d wrong frames by code band; findings:\n%s", enc, res.Sound, wrong, findingLines(res))
				}
				t.Logf("%s: against camera starts 1/30 s late, %d of %d frames wrong by code band", enc, wrong, checked)
			}
		})
	}
}

// recordedCodes decodes a recording with a code band and returns its
// frames' codes, each naming one recorded frame: every frame's band must
// be readable and no two frames may share a code (a drawing captured
// twice would leave the code check unable to tell its two frames apart).
func recordedCodes(t *testing.T, path string) map[uint32]int {
	t.Helper()
	codes := map[uint32]int{}
	var pts []float64
	lo, hi := uint32(math.MaxUint32), uint32(0)
	err := video.DecodeEach(context.Background(), path, func(fr video.DecodedFrame) error {
		code, ok := video.ReadCode(fr.Frame)
		if !ok {
			return fmt.Errorf("recorded frame %d: code band unreadable", fr.Index)
		}
		if prev, dup := codes[code]; dup {
			return fmt.Errorf("recorded frames %d and %d both show drawing %d", prev, fr.Index, code)
		}
		codes[code] = fr.Index
		s, _ := fr.Seconds().Float64()
		pts = append(pts, s)
		lo, hi = min(lo, code), max(hi, code)
		return nil
	})
	if err != nil || len(codes) == 0 {
		t.Fatalf("%s: %d frames: %v", path, len(codes), err)
	}
	var gap float64
	for i := 1; i < len(pts); i++ {
		gap = max(gap, pts[i]-pts[i-1])
	}
	t.Logf("recorded %d frames of drawings %d..%d (%d drawings not recorded), longest frame gap %.0f ms", len(codes), lo, hi, int(hi-lo)+1-len(codes), gap*1000)
	return codes
}

// patchError is the mean absolute difference of two patch lists' RGB.
func patchError(got, want [][3]float64) float64 {
	var s float64
	for i := range want {
		for k := range 3 {
			s += math.Abs(got[i][k] - want[i][k])
		}
	}
	return s / float64(3*len(want))
}

// chromium finds the headless browser (Debian's chromium package;
// CERES_CHROMIUM overrides), as the page tests do.
func chromium(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("chromium-browser"); err == nil && os.Getenv("CERES_CHROMIUM") == "" {
		return testenv.Tool(t, "chromium-browser", "", "")
	}
	return testenv.Tool(t, "chromium", "CERES_CHROMIUM", "Debian package chromium; `make deps` installs it")
}

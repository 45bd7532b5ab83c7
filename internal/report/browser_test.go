package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/testenv"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	xdraw "golang.org/x/image/draw"
)

// chromiumPath finds the headless browser the page tests drive: Debian's
// chromium package (CERES_CHROMIUM overrides). The Makefile installs it;
// without it the test is skipped, or fails under CERES_TEST_NO_SKIP=1.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("chromium-browser"); err == nil && os.Getenv("CERES_CHROMIUM") == "" {
		return testenv.Tool(t, "chromium-browser", "", "")
	}
	return testenv.Tool(t, "chromium", "CERES_CHROMIUM", "Debian package chromium; `make deps` installs it")
}

// browserResult is what loading a page in Chromium showed.
type browserResult struct {
	problems   []string // console errors and warnings, exceptions, log errors
	requests   []string // every URL the page asked for
	screenshot []byte   // PNG of the viewport
	full       []byte   // PNG of the whole page
	eval       map[string]any
}

// loadPage opens path from a file:// URL in headless Chromium, waits for
// it to load, evaluates the probes (name → JavaScript expression) and
// takes screenshots.
func loadPage(t *testing.T, path string, probes map[string]string) *browserResult {
	t.Helper()
	bin := chromiumPath(t)
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	u := (&url.URL{Scheme: "file", Path: abs}).String()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1300),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()

	res := &browserResult{eval: map[string]any{}}
	var mu sync.Mutex
	// The listener sees every event of the tab from its first command on
	// (chromedp enables the Log and Network domains when it attaches).
	listen := chromedp.WithListener(func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			switch e.Type {
			case runtime.ConsoleAPICalledTypeError, runtime.ConsoleAPICalledTypeWarning, runtime.ConsoleAPICalledTypeAssert:
				var args []string
				for _, a := range e.Args {
					args = append(args, fmt.Sprintf("%s %s", a.Value, a.Description))
				}
				res.problems = append(res.problems, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			res.problems = append(res.problems, fmt.Sprintf("exception: %s", e.ExceptionDetails.Text))
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError || e.Entry.Level == log.EntryLevelWarning {
				res.problems = append(res.problems, fmt.Sprintf("log %s (%s): %s %s", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		case *network.EventRequestWillBeSent:
			res.requests = append(res.requests, e.Request.URL)
		case *network.EventLoadingFailed:
			res.problems = append(res.problems, "loading failed: "+e.ErrorText)
		}
	})
	bctx, bcancel := chromedp.NewContext(actx, listen)
	defer bcancel()
	fail := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("chromium %s: %s: %v", bin, what, err)
		}
	}
	fail("load "+u, chromedp.Do(bctx, chromedp.Navigate(u), chromedp.WaitReady("body")))
	// Let every image decode before the probes and screenshots.
	_, err = chromedp.Run(bctx, chromedp.Evaluate[bool](`Promise.all(Array.from(document.images).map(i => i.decode().catch(() => null))).then(() => true)`, chromedp.EvalAwaitPromise))
	fail("decode images", err)
	for name, expr := range probes {
		v, err := chromedp.Run(bctx, chromedp.Evaluate[any](expr))
		fail(name, err)
		res.eval[name] = v
	}
	res.screenshot, err = chromedp.Run(bctx, chromedp.CaptureScreenshot())
	fail("screenshot", err)
	res.full, err = chromedp.Run(bctx, chromedp.FullScreenshot(100))
	fail("full screenshot", err)
	mu.Lock()
	defer mu.Unlock()
	res.problems = slices.Clone(res.problems)
	res.requests = slices.Clone(res.requests)
	return res
}

// checkRendered asserts what every page must show in the browser: no
// console error, no request but the file itself and its data: URIs, and a
// screenshot that is not blank.
func checkRendered(t *testing.T, res *browserResult) {
	t.Helper()
	for _, p := range res.problems {
		t.Errorf("browser reported: %s", p)
	}
	for _, r := range res.requests {
		if !strings.HasPrefix(r, "file://") && !strings.HasPrefix(r, "data:") {
			t.Errorf("the page requested %s: a report must be self-contained", r)
		}
	}
	img, err := png.Decode(bytes.NewReader(res.full))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	colours, top := colourStats(img)
	b := img.Bounds()
	t.Logf("screenshot %dx%d: %d distinct colours, the commonest covers %.1f%%", b.Dx(), b.Dy(), colours, 100*top)
	if colours < 300 {
		t.Errorf("screenshot has %d distinct colours; a page with charts and pictures has hundreds", colours)
	}
	if top > 0.9 {
		t.Errorf("one colour covers %.0f%% of the screenshot: the page looks blank", 100*top)
	}
}

// colourStats counts the distinct colours of img and the share of its
// commonest one.
func colourStats(img image.Image) (int, float64) {
	counts := map[[4]uint32]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			counts[[4]uint32{r >> 8, g >> 8, bl >> 8, a >> 8}]++
		}
	}
	top := 0
	for _, n := range counts {
		top = max(top, n)
	}
	return len(counts), float64(top) / float64(b.Dx()*b.Dy())
}

// saveReference writes a screenshot, scaled to 1000 pixels wide, as a
// documentation picture (go test -run Browser -update).
func saveReference(t *testing.T, shot []byte, path string) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	w := 1000
	h := b.Dy() * w / b.Dx()
	small := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.CatmullRom.Scale(small, small.Bounds(), img, b, xdraw.Src, nil)
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, small); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", path, buf.Len())
}

// TestBrowserCheckFails proves the browser checks can fail: a page with a
// script error, a console error and a network request is reported.
func TestBrowserCheckFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.html")
	bad := `<!DOCTYPE html><html><body><p>bad</p><img src="http://192.0.2.1/x.png">` +
		`<script>console.error("boom"); throw new Error("thrown");</script></body></html>`
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	res := loadPage(t, path, nil)
	joined := strings.Join(res.problems, "\n")
	for _, want := range []string{"console.error: \"boom\"", "exception:", "loading failed"} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems %q lack %q", res.problems, want)
		}
	}
	if !slices.ContainsFunc(res.requests, func(r string) bool { return strings.HasPrefix(r, "http://192.0.2.1/") }) {
		t.Errorf("requests %q lack the page's http request", res.requests)
	}
	img, err := png.Decode(bytes.NewReader(res.full))
	if err != nil {
		t.Fatal(err)
	}
	if colours, top := colourStats(img); colours >= 300 && top <= 0.9 {
		t.Errorf("a near-empty page passes as non-trivial: %d colours, top %.2f", colours, top)
	}
}

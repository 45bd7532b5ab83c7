package page

import (
	"bytes"
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/internal/synth"
	"github.com/ceres-robotics/ceres-export/internal/verify"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

var update = flag.Bool("update", false, "rewrite the reference screenshots under docs/")

var fixtureDir string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "ceres-report")
	if err != nil {
		panic(err)
	}
	fixtureDir = dir
	video.SetLibraryLogging(false)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fixture is a session with retries, a crash (torn tail, an incomplete
// attempt) and two cameras, exported with the page hook.
type fixture struct {
	session, shard string
	rep            *export.Report
	err            error
}

var (
	fixtureOnce sync.Once
	theFixture  fixture
)

func exported(t *testing.T) fixture {
	t.Helper()
	fixtureOnce.Do(func() {
		f := &theFixture
		f.session = filepath.Join(fixtureDir, "session")
		f.shard = filepath.Join(fixtureDir, "shard")
		ctx := context.Background()
		if _, f.err = synth.Write(ctx, f.session, synth.Options{Seed: 3, Cameras: 2, TimeScale: 0.25, Faults: synth.Faults{Crash: true}}); f.err != nil {
			return
		}
		f.rep, f.err = export.Export(ctx, f.session, f.shard, export.Options{VideoFiles: video.Files{}, Page: ShardPage, Version: "test"})
	})
	if theFixture.err != nil {
		t.Fatal(theFixture.err)
	}
	return theFixture
}

func readPage(t *testing.T, f fixture) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.shard, filepath.FromSlash(layout.SessionPagePath)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFixtureHasWhatThePageMustShow(t *testing.T) {
	f := exported(t)
	if f.rep.Fates[plan.Retried] == 0 || f.rep.Fates[plan.Incomplete] == 0 || f.rep.Journal.Torn == nil || len(f.rep.Cameras) != 2 {
		t.Fatalf("fixture: fates %v, torn %v, %d cameras; want retries, a crash and two cameras", f.rep.Fates, f.rep.Journal.Torn, len(f.rep.Cameras))
	}
}

func TestSessionPageContent(t *testing.T) {
	f := exported(t)
	page := readPage(t, f)
	count := func(re string) int { return len(regexp.MustCompile(re).FindAllStringIndex(page, -1)) }
	attempts := len(f.rep.Attempts)
	checks := []struct {
		what string
		got  int
		want int
	}{
		{"timeline svg", count(`<svg id="timeline"`), 1},
		{"traces svg", count(`<svg id="traces"`), 1},
		{"attempt rows", count(`<tr><td class="num">\d+</td><td>`), attempts},
		{"retried attempts", count(`<span class="fate retried">`), f.rep.Fates[plan.Retried]},
		{"incomplete attempts", count(`<span class="fate incomplete">`), f.rep.Fates[plan.Incomplete]},
		{"episodes", count(`<div class="ep" id="episode-\d+">`), f.rep.Episodes},
		{"thumbnail strips", count(`<img src="data:image/jpeg;base64,`), f.rep.Episodes * len(f.rep.Cameras)},
		{"thumbnail frames", count(`alt="first frame 0, middle frame \d+, last frame \d+"`), f.rep.Episodes * len(f.rep.Cameras)},
		{"torn tail row", count(`<th>torn tail</th>`), 1},
		{"crash badge", count(`crashed: torn journal tail`), 1},
		{"external references", count(`(src|href)="(https?:)?//`), 0},
		{"scripts", count(`<script`), 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
	for _, want := range []string{f.rep.Spec.Hash, "frames in gaps", "session synth-3"} {
		if !strings.Contains(strings.ToLower(page), strings.ToLower(want)) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestShardPageEqualsReportCommand checks that the page export writes
// while the shard is staged (from what it holds in memory) is byte for byte
// the page rendered later from the shard's files: one page, two routes.
func TestShardPageEqualsReportCommand(t *testing.T) {
	f := exported(t)
	r, err := LoadShard(context.Background(), f.session, f.shard)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSession(context.Background(), &buf, r); err != nil {
		t.Fatal(err)
	}
	if page := readPage(t, f); buf.String() != page {
		t.Errorf("report from the shard (%d bytes) differs from the page export wrote (%d bytes)", buf.Len(), len(page))
		t.Log("the pages differ from byte", firstDifference(buf.String(), page))
	}
	var again bytes.Buffer
	if err := WriteSession(context.Background(), &again, r); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two renderings of the same shard differ")
	}
}

func TestVerifyAcceptsThePage(t *testing.T) {
	f := exported(t)
	res, err := verify.Shard(context.Background(), f.shard, verify.Options{Journal: f.session, Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range res.Findings {
		if fd.Severity != verify.SeverityNote {
			t.Errorf("verify: %s", fd)
		}
	}
}

func TestSessionPageWithoutShard(t *testing.T) {
	f := exported(t)
	r, err := LoadSession(context.Background(), f.session, false)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSession(context.Background(), &buf, r); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{`<svg id="timeline"`, "not exported", "has not been exported"} {
		if !strings.Contains(page, want) {
			t.Errorf("page without shard lacks %q", want)
		}
	}
	if strings.Contains(page, "<img") {
		t.Error("a page without shard shows thumbnails")
	}
}

// TestThumbnailsComeFromExportedVideo decodes each thumbnail's code band
// (the synthetic source frame number) and compares it with the same frame
// read straight from the exported mp4.
func TestThumbnailsComeFromExportedVideo(t *testing.T) {
	f := exported(t)
	cams, err := export.ReadCameraResults(f.shard)
	if err != nil {
		t.Fatal(err)
	}
	for stream, res := range cams {
		feature := f.rep.Cameras[stream].Feature
		th, err := thumbnails(context.Background(), f.shard, feature, res, res.Width, 95)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int]uint32{} // frame in file → code (all episodes are in file 0 here)
		path := filepath.Join(f.shard, filepath.FromSlash(layout.VideoPath(feature, 0, 0)))
		err = video.DecodeEach(context.Background(), path, func(df video.DecodedFrame) error {
			if code, ok := video.ReadCode(df.Frame); ok {
				want[df.Index] = code
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for i, st := range th {
			er := res.Episodes[i]
			if er.Chunk != 0 || er.File != 0 {
				t.Fatalf("fixture episode %d in file %d/%d", i, er.Chunk, er.File)
			}
			if len(st.Frames) != 3 {
				t.Errorf("camera %s episode %d: %d frames in the strip, want first, middle, last", stream, i, len(st.Frames))
			}
			img := decodeURI(t, string(st.URI))
			if b := img.Bounds(); b.Dx() != st.Total() || b.Dy() != st.Height {
				t.Errorf("camera %s episode %d: strip %v, want %dx%d", stream, i, b, st.Total(), st.Height)
			}
			for slot, frame := range st.Frames {
				x := slot * st.Slot()
				sub := img.SubImage(image.Rect(x, 0, x+st.Width, st.Height)).(*image.YCbCr)
				code, ok := video.ReadCodeImage(sub)
				w, have := want[er.FirstFrame+frame]
				if !ok || !have || code != w {
					t.Errorf("camera %s episode %d %s frame %d: thumbnail code %d (%v), exported video's %d (%v)", stream, i, st.Captions[slot], frame, code, ok, w, have)
				}
				checked++
			}
		}
		if checked == 0 {
			t.Errorf("camera %s: no thumbnail checked", stream)
		}
	}
}

func decodeURI(t *testing.T, uri string) *image.YCbCr {
	t.Helper()
	b64, ok := strings.CutPrefix(uri, "data:image/jpeg;base64,")
	if !ok {
		t.Fatalf("thumbnail is not a JPEG data URI: %.40s", uri)
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	img, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	y, ok := img.(*image.YCbCr)
	if !ok {
		t.Fatalf("thumbnail decodes to %T", img)
	}
	return y
}

func TestCameraGapsOnTheTimeline(t *testing.T) {
	f := exported(t)
	r, err := LoadShard(context.Background(), f.session, f.shard)
	if err != nil {
		t.Fatal(err)
	}
	cams, err := export.ReadCameraResults(f.shard)
	if err != nil {
		t.Fatal(err)
	}
	lanes := cameraLanes(r.Journal, r.Plan, r.Report, cams)
	if len(lanes) != 2 {
		t.Fatalf("%d camera lanes, want 2", len(lanes))
	}
	for _, l := range lanes {
		frames := 0
		for _, g := range l.gaps {
			frames += lerobot.Length(g.from, g.to, r.Plan.FPS)
			if g.to <= g.from {
				t.Errorf("camera %s: empty gap interval %v", l.stream, g)
			}
		}
		if want := r.Report.Cameras[l.stream].Gaps; want == 0 || len(l.gaps) == 0 {
			t.Errorf("camera %s: %d gap frames reported, %d gap runs on the timeline; the fixture has gaps", l.stream, want, len(l.gaps))
		}
		if len(l.files) != 1 || l.files[0].to <= l.files[0].from {
			t.Errorf("camera %s: file coverage %v", l.stream, l.files)
		}
	}
}

func TestFrameRunsPlaceFramesOnTheClock(t *testing.T) {
	p := &plan.Plan{FPS: 10, Episodes: []plan.Episode{{Index: 0, Start: 5e9, Length: 100}}}
	clk := clock{origin: 0, end: 20e9, axis: timeAxisFor(20)}
	r := frameRuns([]export.FrameRun{{State: export.RunBackFilled, Episode: 0, From: 0, Frames: 3}, {State: export.RunStale, Episode: 0, From: 10, Frames: 5}, {State: export.RunStale, Episode: 7, From: 0, Frames: 1}}, p, clk)
	if len(r.list) != 2 {
		t.Fatalf("%d marks, want 2 (a run of an unknown episode is dropped)", len(r.list))
	}
	if got := r.list[0]; got.x0 != 5 || got.x1 != 5.3 || got.fill != colBackFill {
		t.Errorf("back-filled run at %v–%v (%v), want 5–5.3 s", got.x0, got.x1, got.fill)
	}
	if got := r.list[1]; got.x0 != 6 || got.x1 != 6.5 || got.fill != colStale {
		t.Errorf("stale run at %v–%v (%v), want 6–6.5 s", got.x0, got.x1, got.fill)
	}
}

func TestSessionPageInBrowser(t *testing.T) {
	f := exported(t)
	want := f.rep.Episodes * len(f.rep.Cameras) // one strip per episode and camera
	res := loadPage(t, filepath.Join(f.shard, filepath.FromSlash(layout.SessionPagePath)), map[string]string{
		"timelineShapes": `document.querySelectorAll('#timeline path').length`,
		"timelineWidth":  `document.querySelector('#timeline').getBoundingClientRect().width`,
		"traces":         `document.querySelectorAll('#traces path').length`,
		"images":         `document.images.length`,
		"decoded":        `Array.from(document.images).filter(i => i.complete && i.naturalWidth > 0).length`,
	})
	checkRendered(t, res)
	if n, _ := res.eval["timelineShapes"].(float64); n < 30 {
		t.Errorf("timeline has %v shapes; attempts, resets, pauses and lanes make dozens", res.eval["timelineShapes"])
	}
	if w, _ := res.eval["timelineWidth"].(float64); w < 600 {
		t.Errorf("timeline is %v px wide", res.eval["timelineWidth"])
	}
	if n, _ := res.eval["traces"].(float64); n < 10 {
		t.Errorf("traces have %v shapes", res.eval["traces"])
	}
	if res.eval["images"] != float64(want) || res.eval["decoded"] != float64(want) {
		t.Errorf("%v images, %v decoded; want %d", res.eval["images"], res.eval["decoded"], want)
	}
	if *update {
		saveReference(t, res.screenshot, filepath.Join("..", "..", "docs", "report-session.png"))
	}
}

// campaignFixture is a campaign of three cases: one task retried after a
// failure, one that failed for good, a merge.
func campaignFixture() *CampaignPage {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	at := func(min, sec float64) time.Time { return t0.Add(time.Duration((min*60 + sec) * float64(time.Second))) }
	return &CampaignPage{
		ID: "lab-week-48",
		Tasks: []CampaignTask{
			{TaskID: "lab-week-48__pick-red__rig-a__run-1", CaseID: "pick-red", SettingID: "rig-a", RunID: "1", State: StateSucceeded,
				Attempts: []CampaignAttempt{{No: 1, State: StateSucceeded, Start: at(0, 0), End: at(3, 20)}},
				Episodes: 42, Frames: 15120, Page: "lab-week-48__pick-red__rig-a__run-1/" + layout.SessionPagePath},
			{TaskID: "lab-week-48__pick-red__rig-b__run-1", CaseID: "pick-red", SettingID: "rig-b", RunID: "1", State: StateSucceeded,
				Attempts: []CampaignAttempt{
					{No: 1, State: StateFailed, Start: at(0, 5), End: at(0, 40), ExitStatus: 4, Error: "camera wrist: encoder: out of memory"},
					{No: 2, State: StateSucceeded, Start: at(3, 30), End: at(6, 45)}},
				Episodes: 38, Frames: 13680, Page: "lab-week-48__pick-red__rig-b__run-1/" + layout.SessionPagePath},
			{TaskID: "lab-week-48__stack__rig-a__run-2", CaseID: "stack", SettingID: "rig-a", RunID: "2", State: StateSucceeded,
				Attempts: []CampaignAttempt{{No: 1, State: StateSucceeded, Start: at(0, 50), End: at(5, 10)}},
				Episodes: 55, Frames: 24750, Page: "lab-week-48__stack__rig-a__run-2/" + layout.SessionPagePath},
			{TaskID: "lab-week-48__pour__rig-c__run-1", CaseID: "pour", SettingID: "rig-c", RunID: "1", State: StateFailed,
				Attempts: []CampaignAttempt{
					{No: 1, State: StateFailed, Start: at(1, 0), End: at(1, 5), ExitStatus: 3, Error: "segment 000002.cjl offset 81920: crc mismatch"},
					{No: 2, State: StateFailed, Start: at(6, 50), End: at(6, 54), ExitStatus: 3, Error: "segment 000002.cjl offset 81920: crc mismatch"}},
				Error: "segment 000002.cjl offset 81920: crc mismatch (use --salvage)"},
		},
		Merges: []CampaignMerge{
			{SettingID: "rig-a", Path: "merged/rig-a", State: StateSucceeded, Shards: 2, Episodes: 97, Frames: 39870},
			{SettingID: "rig-b", Path: "merged/rig-b", State: StateSucceeded, Shards: 1, Episodes: 38, Frames: 13680}},
	}
}

func TestCampaignPage(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCampaign(&buf, campaignFixture()); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		`<svg id="cases"`, `<svg id="timeline"`,
		`<a href="lab-week-48__pick-red__rig-a__run-1/` + layout.SessionPagePath + `">`,
		`<span class="state failed">failed</span>`, "crc mismatch (use --salvage)",
		"135", "merged/rig-a", "merged/rig-b",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("campaign page lacks %q", want)
		}
	}
	if n := strings.Count(page, `<td class="mono">lab-week-48__`); n != 4 {
		t.Errorf("%d task rows, want 4", n)
	}
	var again bytes.Buffer
	if err := WriteCampaign(&again, campaignFixture()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two renderings of the same campaign differ")
	}
}

func TestCampaignPageInBrowser(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.html")
	if err := WriteFile(path, func(w io.Writer) error { return WriteCampaign(w, campaignFixture()) }); err != nil {
		t.Fatal(err)
	}
	res := loadPage(t, path, map[string]string{
		"bars":     `document.querySelectorAll('#cases path').length`,
		"timeline": `document.querySelectorAll('#timeline path').length`,
		"links":    `document.querySelectorAll('#tasks a').length`,
	})
	checkRendered(t, res)
	if n, _ := res.eval["bars"].(float64); n < 6 {
		t.Errorf("case chart has %v shapes", res.eval["bars"])
	}
	if n, _ := res.eval["timeline"].(float64); n < 6 {
		t.Errorf("campaign timeline has %v shapes", res.eval["timeline"])
	}
	if res.eval["links"] != float64(3) {
		t.Errorf("%v session links, want 3", res.eval["links"])
	}
	if *update {
		saveReference(t, res.screenshot, filepath.Join("..", "..", "docs", "report-campaign.png"))
	}
}

// firstDifference returns the offset of the first byte where a and b
// differ, with some context of a.
func firstDifference(a, b string) string {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return fmt.Sprintf("%d: %q", i, a[max(0, i-80):min(len(a), i+40)])
		}
	}
	return fmt.Sprintf("%d (one is a prefix of the other)", min(len(a), len(b)))
}

//go:build cgo

package merge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"maps"
	"math/big"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/output"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/internal/synth"
	"github.com/ceres-robotics/ceres-export/internal/verify"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// shardSpec describes one fixture shard: a synthetic session and how it
// is exported.
type shardSpec struct {
	synth   synth.Options
	codec   string
	fps     int
	license string
}

// The fixture shards, built once per test binary.
var fixtureSpecs = map[string]shardSpec{
	// Retries (synth's default) and one camera, H.264.
	"h264-a": {synth: synth.Options{Seed: 1, TimeScale: 0.1, Cameras: 1, Width: 64, Height: 48}, codec: "h264"},
	// A recorder crash mid-attempt.
	"h264-crash": {synth: synth.Options{Seed: 2, TimeScale: 0.1, Cameras: 1, Width: 64, Height: 48, Faults: synth.Faults{Crash: true}}, codec: "h264"},
	// Another specification (cycle count changed, so another hash).
	"h264-spec2": {synth: synth.Options{Seed: 3, TimeScale: 0.1, Cameras: 1, Width: 64, Height: 48, Cycles: 1}, codec: "h264"},
	// Two cameras, AV1.
	"av1-a": {synth: synth.Options{Seed: 4, TimeScale: 0.1, Cameras: 2, Width: 64, Height: 64}, codec: "av1"},
	"av1-b": {synth: synth.Options{Seed: 5, TimeScale: 0.1, Cameras: 2, Width: 64, Height: 64, Faults: synth.Faults{Crash: true}}, codec: "av1"},
	// Same sessions as h264-a's kind, other fps / codec: not mergeable.
	"h264-15fps": {synth: synth.Options{Seed: 6, TimeScale: 0.1, Cameras: 1, Width: 64, Height: 48}, codec: "h264", fps: 15},
	"av1-1cam":   {synth: synth.Options{Seed: 7, TimeScale: 0.1, Cameras: 1, Width: 64, Height: 64}, codec: "av1"},
	// Two more of h264-a's kind, for merges in a tree.
	"h264-b": {synth: synth.Options{Seed: 8, TimeScale: 0.1, Cameras: 1, Width: 64, Height: 48}, codec: "h264"},
	"h264-c": {synth: synth.Options{Seed: 9, TimeScale: 0.1, Cameras: 1, Width: 64, Height: 48, Cycles: 1}, codec: "h264"},
	// h264-a's kind under licences (export --license).
	"h264-mit-a": {synth: synth.Options{Seed: 10, TimeScale: 0.1, Cameras: 1, Width: 64, Height: 48, Cycles: 1}, codec: "h264", license: "mit"},
	"h264-mit-b": {synth: synth.Options{Seed: 11, TimeScale: 0.1, Cameras: 1, Width: 64, Height: 48, Cycles: 1}, codec: "h264", license: "mit"},
	"h264-cc-by": {synth: synth.Options{Seed: 12, TimeScale: 0.1, Cameras: 1, Width: 64, Height: 48, Cycles: 1}, codec: "h264", license: "cc-by-4.0"},
}

var (
	fixtureMu    sync.Mutex
	fixtureDirs  = map[string]string{}
	fixtureRoot  string
	fixtureError error
)

func TestMain(m *testing.M) {
	video.SetLibraryLogging(false)
	code := m.Run()
	if fixtureRoot != "" {
		os.RemoveAll(fixtureRoot)
	}
	os.Exit(code)
}

// fixtureShard returns the directory of fixture shard name, exporting it
// on first use. Tests must not modify it.
func fixtureShard(t testing.TB, name string) string {
	t.Helper()
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	if d, ok := fixtureDirs[name]; ok {
		return d
	}
	if fixtureRoot == "" {
		if fixtureRoot, fixtureError = os.MkdirTemp("", "merge-test-"); fixtureError != nil {
			t.Fatal(fixtureError)
		}
	}
	spec, ok := fixtureSpecs[name]
	if !ok {
		t.Fatalf("no fixture %s", name)
	}
	ctx := context.Background()
	session := filepath.Join(fixtureRoot, name+"-session")
	dir := filepath.Join(fixtureRoot, name)
	if _, err := synth.Write(ctx, session, spec.synth); err != nil {
		t.Fatalf("synth %s: %v", name, err)
	}
	if _, err := export.Export(ctx, session, dir, export.Options{VideoFiles: video.Files{}, FPS: spec.fps, Video: export.VideoOptions{Codec: spec.codec}, License: spec.license}); err != nil {
		t.Fatalf("export %s: %v", name, err)
	}
	fixtureDirs[name] = dir
	return dir
}

func shards(t testing.TB, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fixtureShard(t, n)
	}
	return out
}

// mustVerify runs the full verify (every frame decoded, stats recomputed).
func mustVerify(t *testing.T, dir string) {
	t.Helper()
	res, err := verify.Shard(context.Background(), dir, verify.Options{Video: video.Files{}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Sound {
		for _, f := range res.Findings {
			t.Log(f)
		}
		t.Fatalf("%s is not sound", dir)
	}
}

// dataset is a dataset read back for comparison through shard.Open:
// episodes, rows by episode, tasks.
type dataset struct {
	src   *source
	rows  []*shard.EpisodeRows // per episode, the data features' rows
	tasks []string
}

func readDataset(t *testing.T, dir string) *dataset {
	t.Helper()
	s, err := openSource(context.Background(), dir, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataset{src: s, tasks: s.tasks}
	var data []shard.Feature
	for _, f := range s.features {
		if f.Dtype != lerobot.Video {
			data = append(data, f)
		}
	}
	rows := s.ds.NewRowReader(data)
	defer rows.Close()
	for i := range s.episodes {
		b := shard.NewEpisodeRows(data, int(s.episodes[i].Length))
		if err := rows.Read(context.Background(), &s.episodes[i].Episode, b); err != nil {
			t.Fatal(err)
		}
		d.rows = append(d.rows, b)
	}
	return d
}

// compareRows checks that merged episodes [first, first+len(src episodes))
// hold, row by row, exactly the source's rows, re-indexed. (The default
// columns, re-indexed, are verify's: mustVerify checks them.)
func compareRows(t *testing.T, merged *dataset, src *dataset, firstEpisode int, firstIndex int64) {
	t.Helper()
	for k, se := range src.src.episodes {
		me := merged.src.episodes[firstEpisode+k]
		if me.Length != se.Length || me.Tasks[0] != se.Tasks[0] {
			t.Fatalf("episode %d: length %d task %q, source episode %d has %d %q", firstEpisode+k, me.Length, me.Tasks[0], k, se.Length, se.Tasks[0])
		}
		if me.Data.FromIndex != firstIndex+se.Data.FromIndex {
			t.Fatalf("episode %d: rows from %d, want %d + %d", firstEpisode+k, me.Data.FromIndex, firstIndex, se.Data.FromIndex)
		}
		if me.Ceres.Source == nil || me.Ceres.Source.EpisodeIndex != se.Index || me.Ceres.SessionID != se.Ceres.SessionID ||
			me.Ceres.TaskID != se.Ceres.TaskID || me.Ceres.Attempt != se.Ceres.Attempt || me.Ceres.SpecHash != se.Ceres.SpecHash ||
			me.Ceres.RecordedSpecHash != se.Ceres.RecordedSpecHash || me.Ceres.StartNS != se.Ceres.StartNS {
			t.Fatalf("episode %d: provenance %+v, source %+v", firstEpisode+k, me.Ceres, se.Ceres)
		}
		if !reflect.DeepEqual(merged.rows[firstEpisode+k], src.rows[k]) {
			t.Fatalf("episode %d: rows differ from source episode %d", firstEpisode+k, k)
		}
	}
}

// frameHashes decodes every frame of an mp4 and returns its pixels' hashes
// and presentation times.
func frameHashes(t *testing.T, path string) ([][32]byte, []*big.Rat) {
	t.Helper()
	var hashes [][32]byte
	var times []*big.Rat
	err := video.DecodeEach(context.Background(), path, func(f video.DecodedFrame) error {
		b, err := f.Frame.Data().Bytes(1)
		if err != nil {
			return err
		}
		hashes = append(hashes, sha256.Sum256(b))
		times = append(times, f.Seconds())
		return nil
	})
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return hashes, times
}

// compareFrames checks, frame by frame, that every frame of every merged
// episode is the frame the source shard had at that episode and index, and
// that frame k of every merged file is at exactly k/fps.
func compareFrames(t *testing.T, merged *dataset, sources []*dataset, firsts []int) {
	t.Helper()
	fps := int64(merged.src.fps)
	decoded := map[string][][32]byte{}
	get := func(d *dataset, key string, vp shard.VideoSegment) [][32]byte {
		p := d.src.path(layout.VideoPath(key, vp.ChunkIndex, vp.FileIndex))
		if h, ok := decoded[p]; ok {
			return h
		}
		h, times := frameHashes(t, p)
		for k, ts := range times {
			if ts.Cmp(big.NewRat(int64(k), fps)) != 0 {
				t.Fatalf("%s frame %d at %s s, want %d/%d", p, k, ts.RatString(), k, fps)
			}
		}
		decoded[p] = h
		return h
	}
	compared := 0
	for si, src := range sources {
		for _, f := range src.src.ds.Info.VideoFeatures() {
			for k, se := range src.src.episodes {
				me := merged.src.episodes[firsts[si]+k]
				mh := get(merged, f.Name, me.Videos[f.Name])
				sh := get(src, f.Name, se.Videos[f.Name])
				mf, sf := me.firstFrame[f.Name], se.firstFrame[f.Name]
				for j := 0; j < int(se.Length); j++ {
					if mf+j >= len(mh) || sf+j >= len(sh) || mh[mf+j] != sh[sf+j] {
						t.Fatalf("%s episode %d frame %d differs from source %d episode %d frame %d", f.Name, firsts[si]+k, j, si, k, j)
					}
					compared++
				}
			}
		}
	}
	if compared == 0 {
		t.Fatal("no frame compared")
	}
}

// checkMerge verifies a merged dataset fully and compares it with its
// sources row by row and frame by frame.
func checkMerge(t *testing.T, out string, srcDirs []string) *dataset {
	t.Helper()
	mustVerify(t, out)
	merged := readDataset(t, out)
	var sources []*dataset
	var firsts []int
	ep, idx := 0, int64(0)
	for _, d := range srcDirs {
		s := readDataset(t, d)
		compareRows(t, merged, s, ep, idx)
		sources = append(sources, s)
		firsts = append(firsts, ep)
		ep += len(s.src.episodes)
		idx += s.src.frames
	}
	if ep != len(merged.src.episodes) {
		t.Fatalf("merged dataset has %d episodes, the sources %d", len(merged.src.episodes), ep)
	}
	compareFrames(t, merged, sources, firsts)
	return merged
}

func TestMergeH264RetriesCrashSpecs(t *testing.T) {
	src := shards(t, "h264-a", "h264-crash", "h264-spec2")
	out := filepath.Join(t.TempDir(), "merged")
	res, err := mergeVideo(context.Background(), Options{Sources: src, Output: out, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sources != 3 || res.Added != 3 || res.VideoFiles != 1 {
		t.Fatalf("result %+v, want 3 sources in one video file", res)
	}
	merged := checkMerge(t, out, src)
	// Both specifications are stored, and every episode names its own.
	specs := map[string]bool{}
	for _, e := range merged.src.episodes {
		specs[e.Ceres.SpecHash] = true
	}
	if len(specs) != 2 || len(merged.src.specs) != 2 {
		t.Fatalf("specifications named %v, stored %d; want 2 and 2", specs, len(merged.src.specs))
	}
	if kind, ok := output.KindOf(out); !ok || kind != output.KindMerged {
		t.Fatalf("output marker kind %q %v, want merged", kind, ok)
	}
}

func TestMergeAV1TwoCamerasRotation(t *testing.T) {
	src := shards(t, "av1-a", "av1-b")
	for _, tc := range []struct {
		name      string
		opts      Options
		wantFiles int // per camera
	}{
		{"joined", Options{}, 1},
		{"no-concat", Options{NoConcat: true}, 2},
		{"rotated", Options{VideoFileSizeBytes: 1}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "merged")
			opts := tc.opts
			opts.Sources, opts.Output = src, out
			res, err := mergeVideo(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.VideoFiles != 2*tc.wantFiles {
				t.Fatalf("%d video files, want %d per camera for 2 cameras", res.VideoFiles, tc.wantFiles)
			}
			checkMerge(t, out, src)
		})
	}
}

func TestMergeInto(t *testing.T) {
	src := shards(t, "h264-a", "h264-crash", "h264-spec2")
	dir := t.TempDir()
	out := filepath.Join(dir, "merged")
	if _, err := mergeVideo(context.Background(), Options{Sources: src[:2], Output: out}); err != nil {
		t.Fatal(err)
	}
	// A hard link keeps the dataset appended to reachable after the swap.
	before := filepath.Join(dir, "before")
	if err := os.MkdirAll(filepath.Join(before, "data", "chunk-000"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(out, "data", "chunk-000", "file-000.parquet"), filepath.Join(before, "data", "chunk-000", "file-000.parquet")); err != nil {
		t.Fatal(err)
	}
	res, err := mergeVideo(context.Background(), Options{Sources: src[2:], Into: out})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sources != 3 || res.Added != 1 {
		t.Fatalf("result %+v, want 3 sources, 1 added", res)
	}
	merged := checkMerge(t, out, src)
	if n := len(merged.src.merged.Runs); n != 2 {
		t.Fatalf("%d runs in the report, want 2", n)
	}
	// Appending rewrites nothing of what is there: the data file of the
	// dataset appended to is the same inode in the new one, and the new
	// episodes' rows are in a file of their own.
	if !sameInode(t, filepath.Join(before, "data", "chunk-000", "file-000.parquet"), filepath.Join(out, "data", "chunk-000", "file-000.parquet")) {
		t.Error("the appended-to dataset's data file was rewritten, not carried over")
	}
	if _, err := os.Stat(filepath.Join(out, "data", "chunk-000", "file-001.parquet")); err != nil {
		t.Errorf("the appended episodes' data file: %v", err)
	}
	// The statistics are those of one merge of all three.
	flat := filepath.Join(dir, "flat")
	if _, err := mergeVideo(context.Background(), Options{Sources: src, Output: flat}); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"meta/stats.json", "meta/tasks.parquet"} {
		a, _ := os.ReadFile(filepath.Join(flat, rel))
		b, _ := os.ReadFile(filepath.Join(out, rel))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s after --into differs from a merge of all the shards at once", rel)
		}
	}
	// The same shard again is refused, also when it is already inside.
	if _, err := mergeVideo(context.Background(), Options{Sources: src[:1], Into: out}); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "same shard") {
		t.Fatalf("appending a shard already merged: %v, want a usage error naming the same shard", err)
	}
}

func TestMergeRefusals(t *testing.T) {
	a, b := fixtureShard(t, "h264-a"), fixtureShard(t, "h264-crash")
	dir := t.TempDir()
	notShard := filepath.Join(dir, "not-a-shard")
	if err := os.MkdirAll(notShard, 0o755); err != nil {
		t.Fatal(err)
	}
	// The same shard under another path (a link to it).
	aLink := filepath.Join(dir, "a-link")
	if err := os.Symlink(a, aLink); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts Options
		want error
		text string
	}{
		{"no sources", Options{Output: filepath.Join(dir, "o1")}, ErrUsage, "no shards"},
		{"not a shard", Options{Sources: []string{a, notShard}, Output: filepath.Join(dir, "o2")}, ErrUsage, "not a ceres-export shard"},
		{"twice", Options{Sources: []string{a, a}, Output: filepath.Join(dir, "o3")}, ErrUsage, "given twice"},
		{"twice under another path", Options{Sources: []string{a, b, aLink}, Output: filepath.Join(dir, "o3")}, ErrUsage, "shard " + aLink + " is given twice (also as " + a + ")"},
		{"output inside input", Options{Sources: []string{a, b}, Output: filepath.Join(a, "out")}, output.ErrDestinationRefused, "inside the input"},
		{"into a shard", Options{Sources: []string{b}, Into: a}, ErrUsage, "not a merged dataset"},
		{"other fps", Options{Sources: []string{a, fixtureShard(t, "h264-15fps")}, Output: filepath.Join(dir, "o4")}, ErrMismatch, "fps 15, want 30"},
		{"other codec", Options{Sources: []string{a, fixtureShard(t, "av1-1cam")}, Output: filepath.Join(dir, "o5")}, ErrMismatch, `video.codec "av1", want "h264"`},
		{"other cameras", Options{Sources: []string{a, fixtureShard(t, "av1-a")}, Output: filepath.Join(dir, "o6")}, ErrMismatch, "not in the first source"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mergeVideo(context.Background(), tc.opts)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("error %v, want %v containing %q", err, tc.want, tc.text)
			}
			if tc.opts.Output != "" && !strings.HasPrefix(tc.opts.Output, a) {
				if _, err := os.Stat(tc.opts.Output); err == nil {
					t.Fatalf("%s was written", tc.opts.Output)
				}
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.Contains(e.Name(), "ceres-tmp") {
					t.Fatalf("staging left behind: %s", e.Name())
				}
			}
		})
	}
}

// A source that fails a quick verify is refused before anything is written.
func TestMergeRefusesUnsoundSource(t *testing.T) {
	a := fixtureShard(t, "h264-a")
	bad := filepath.Join(t.TempDir(), "bad")
	if err := copyTree(fixtureShard(t, "h264-crash"), bad); err != nil {
		t.Fatal(err)
	}
	// Drop the last episode's rows: the metadata no longer matches the data.
	info := filepath.Join(bad, layout.InfoPath)
	b, err := os.ReadFile(info)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(info, []byte(strings.Replace(string(b), `"total_frames": `, `"total_frames": 1`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	_, err = mergeVideo(context.Background(), Options{Sources: []string{a, bad}, Output: out})
	if !errors.Is(err, ErrUnsound) || !strings.Contains(err.Error(), "info.total-frames") {
		t.Fatalf("error %v, want ErrUnsound naming info.total-frames", err)
	}
}

func copyTree(src, dst string) error {
	return filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// A shard made by a campaign task carries ceres/campaign.json: every
// episode of it names the task and attempt, and verify checks them
// against the merge report.
func TestMergeCampaignProvenance(t *testing.T) {
	a := fixtureShard(t, "h264-a")
	b := filepath.Join(t.TempDir(), "campaign-shard")
	if err := copyTree(fixtureShard(t, "h264-crash"), b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b, filepath.FromSlash(layout.CampaignPath)), []byte(`{"campaign_id": "c1", "task_id": "c1__case-2__s__run-1", "attempt_no": 2}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "merged")
	res, err := mergeVideo(context.Background(), Options{Sources: []string{a, b}, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	mustVerify(t, out)
	merged := readDataset(t, out)
	first := int(res.Report.Sources[1].FirstEpisode)
	for i, e := range merged.src.episodes {
		src := e.Ceres.Source
		fromCampaign := src.CampaignTaskID != nil
		if fromCampaign != (i >= first) {
			t.Fatalf("episode %d: campaign task %v, want one exactly for the second shard's episodes (from %d)", i, src.CampaignTaskID, first)
		}
		if fromCampaign && (*src.CampaignTaskID != "c1__case-2__s__run-1" || *src.CampaignAttempt != 2) {
			t.Fatalf("episode %d: campaign %q attempt %d", i, *src.CampaignTaskID, *src.CampaignAttempt)
		}
	}
	if r := res.Report.Sources[1]; r.CampaignTaskID != "c1__case-2__s__run-1" || r.CampaignAttempt != 2 {
		t.Fatalf("report source %+v lacks the campaign identity", r)
	}
	if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(layout.SourcePath(1, layout.CampaignPath)))); err != nil {
		t.Fatalf("the campaign file is not kept: %v", err)
	}
	// A tampered report no longer matches the episodes: verify says so.
	rp := filepath.Join(out, filepath.FromSlash(layout.MergeReportPath))
	body, err := os.ReadFile(rp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rp, []byte(strings.Replace(string(body), `"campaignAttempt": 2`, `"campaignAttempt": 3`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	vr, err := verify.Shard(context.Background(), out, verify.Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if vr.Sound || !slices.Contains(vr.Codes(), "ceres.source") {
		t.Fatalf("verify of a tampered merge report: sound %v codes %v, want ceres.source", vr.Sound, vr.Codes())
	}
}

// lerobotFiles hashes every file of dir under data/, meta/ and videos/:
// what LeRobot reads of a dataset.
func lerobotFiles(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := treeHashes(t, dir)
	for rel := range out {
		top, _, _ := strings.Cut(rel, "/")
		if top != layout.DataDir && top != path.Dir(layout.InfoPath) && top != layout.VideosDir {
			delete(out, rel)
		}
	}
	return out
}

// Merging merged datasets gives the bytes a flat merge of the same shards
// in the same order gives, in data/, meta/ and videos/, for every tree
// shape and file size limit: the campaign merge can run as a tree.
func TestMergeOfMergesEqualsFlat(t *testing.T) {
	names := []string{"h264-a", "h264-crash", "h264-spec2", "h264-b", "h264-c"}
	src := shards(t, names...)
	ctx := context.Background()
	for _, size := range []struct {
		name string
		opts Options
	}{
		{"default sizes", Options{}},
		{"small files", Options{VideoFileSizeBytes: 60 << 10, DataFileSizeBytes: 8 << 10, ChunksSize: 2}},
		{"no concat", Options{NoConcat: true}},
	} {
		t.Run(size.name, func(t *testing.T) {
			dir := t.TempDir()
			if d := os.Getenv("KEEP_MM"); d != "" {
				dir = filepath.Join(d, strings.ReplaceAll(size.name, " ", "-"))
				_ = os.MkdirAll(dir, 0o755)
			}
			merge := func(out string, sources []string) string {
				t.Helper()
				o := size.opts
				o.Sources, o.Output = sources, filepath.Join(dir, out)
				if _, err := mergeVideo(ctx, o); err != nil {
					t.Fatalf("merge %s: %v", out, err)
				}
				return o.Output
			}
			flat := merge("flat", src)
			want := lerobotFiles(t, flat)
			if !slices.ContainsFunc(slices.Collect(maps.Keys(want)), func(k string) bool { return strings.HasPrefix(k, layout.VideosDir+"/") }) {
				t.Fatal("the flat merge has no video")
			}
			g1 := merge("g1", src[:2])
			g2 := merge("g2", src[2:])
			a3 := merge("a3", src[2:3])
			b3 := merge("b3", src[3:])
			for _, tree := range []struct {
				name    string
				sources []string
			}{
				{"two groups", []string{g1, g2}},
				{"three groups", []string{g1, a3, b3}},
				{"groups and shards", []string{src[0], src[1], a3, src[3], src[4]}},
				{"a merge of merges merged again", []string{merge("g12", []string{g1, a3}), b3}},
			} {
				out := merge("tree-"+strings.ReplaceAll(tree.name, " ", "-"), tree.sources)
				got := lerobotFiles(t, out)
				for rel, sum := range want {
					if g, ok := got[rel]; !ok {
						t.Errorf("%s: %s missing", tree.name, rel)
					} else if g != sum {
						t.Errorf("%s: %s differs from the flat merge's", tree.name, rel)
					}
				}
				for rel := range got {
					if _, ok := want[rel]; !ok {
						t.Errorf("%s: %s is not in the flat merge", tree.name, rel)
					}
				}
				// The provenance names every shard, in order, at its place.
				var fr, tr Report
				readJSON(t, filepath.Join(flat, filepath.FromSlash(layout.MergeReportPath)), &fr)
				readJSON(t, filepath.Join(out, filepath.FromSlash(layout.MergeReportPath)), &tr)
				if len(tr.Sources) != len(fr.Sources) {
					t.Fatalf("%s: %d sources, flat %d", tree.name, len(tr.Sources), len(fr.Sources))
				}
				for i := range fr.Sources {
					f, g := fr.Sources[i], tr.Sources[i]
					f.Run, g.Run = 0, 0
					if !reflect.DeepEqual(f, g) {
						t.Errorf("%s: source %d\n got %+v\nwant %+v", tree.name, i, g, f)
					}
				}
				for n := range fr.Sources {
					if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(layout.SourcePath(n, layout.ExportReportPath)))); err != nil {
						t.Errorf("%s: %v", tree.name, err)
					}
				}
			}
			mustVerify(t, filepath.Join(dir, "tree-two-groups"))
		})
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// sameInode says whether a and b are one file.
func sameInode(t *testing.T, a, b string) bool {
	t.Helper()
	sa, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(sa, sb)
}

// mergeVideo is Merge with the FFmpeg video the CLI wires in.
func mergeVideo(ctx context.Context, opts Options) (*Result, error) {
	opts.Video = video.Files{}
	return Merge(ctx, opts)
}

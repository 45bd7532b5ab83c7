//go:build cgo

package export

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/synth"
	"github.com/ceres-robotics/ceres-export/internal/testtree"
	"github.com/ceres-robotics/ceres-export/internal/video"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// fixedSpec is the contract's example with a corrected instruction and
// label for "pick", and a different duration: nothing that moves a window.
var fixedSpec = strings.NewReplacer(
	`"instructions": "Pick one sample"`, `"instructions": "Pick exactly one sample"`,
	`"label": "Pick sample"`, `"label": "Pick a sample"`,
	`"durationS": 12.5`, `"durationS": 12`,
).Replace(synth.ExampleSpec)

// countingEncoder is video.Files counting its ExportCamera calls.
type countingEncoder struct {
	video.Files
	calls atomic.Int32
}

func (c *countingEncoder) ExportCamera(ctx context.Context, s []video.Source, e []video.EpisodeTimes, o video.ExportOptions) (video.CameraResult, error) {
	c.calls.Add(1)
	return c.Files.ExportCamera(ctx, s, e, o)
}

func TestReexportTextFix(t *testing.T) {
	ctx := context.Background()
	session := smallSession(t, synth.Options{Seed: 61, Cameras: 2})
	dest := filepath.Join(t.TempDir(), "shard")
	enc := &countingEncoder{}
	opts := Options{Video: VideoOptions{Codec: "h264"}, VideoFiles: enc}
	first, err := exportWithVideo(ctx, session, dest, opts)
	if err != nil {
		t.Fatal(err)
	}
	if enc.calls.Load() != 2 {
		t.Fatalf("first export encoded %d cameras, want 2", enc.calls.Load())
	}
	before := testtree.Files(t, dest)

	opts.TaskSpec, opts.Replace = []byte(fixedSpec), true
	rep, err := exportWithVideo(ctx, session, dest, opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := enc.calls.Load(); n != 2 {
		t.Errorf("a text-only fix called the encoder %d more times, want none", n-2)
	}
	if len(rep.VideoReused) != 2 {
		t.Errorf("video reused for %v, want both cameras", rep.VideoReused)
	}
	after := testtree.Files(t, dest)
	for name, b := range before {
		if strings.HasPrefix(name, layout.VideosDir+"/") && !bytes.Equal(b, after[name]) {
			t.Errorf("%s changed in a text-only re-export", name)
		}
	}
	fixed, err := taskspec.Parse([]byte(fixedSpec))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Spec.Hash != fixed.Hash() || rep.Spec.RecordedHash != first.Spec.Hash || rep.Spec.Hash == rep.Spec.RecordedHash {
		t.Errorf("hashes: applied %s recorded %s; want %s and %s", rep.Spec.Hash, rep.Spec.RecordedHash, fixed.Hash(), first.Spec.Hash)
	}
	for _, h := range []string{rep.Spec.Hash, rep.Spec.RecordedHash} {
		if _, ok := after[layout.SpecPath(h)]; !ok {
			t.Errorf("canonical specification %s not stored", h)
		}
	}
	wantDiffs := map[string]bool{`tasks[id="pick"].instructions`: true, `tasks[id="pick"].label`: true, `tasks[id="pick"].durationS`: true}
	for _, d := range rep.Spec.Differences {
		delete(wantDiffs, d.Path)
	}
	if len(wantDiffs) != 0 {
		t.Errorf("differences %+v miss %v", rep.Spec.Differences, wantDiffs)
	}
	eps := readTable(t, filepath.Join(dest, filepath.FromSlash(layout.EpisodesPath(0, 0))))
	hashes := eps.Column(eps.Schema().FieldIndices(layout.ColSpecHash)[0]).Data().Chunks()[0].String()
	recorded := eps.Column(eps.Schema().FieldIndices(layout.ColRecordedSpecHash)[0]).Data().Chunks()[0].String()
	if !strings.Contains(hashes, fixed.Hash()) || strings.Contains(hashes, first.Spec.Hash) || !strings.Contains(recorded, first.Spec.Hash) {
		t.Errorf("episode hashes %s recorded %s", hashes, recorded)
	}
	tasks := readTable(t, filepath.Join(dest, filepath.FromSlash(layout.TasksPath)))
	if s := tasks.Column(tasks.Schema().FieldIndices("task")[0]).Data().Chunks()[0].String(); !strings.Contains(s, "Pick exactly one sample") {
		t.Errorf("tasks %s lack the corrected instructions", s)
	}

	// Idempotent: the same re-export again gives byte-identical files.
	if _, err := exportWithVideo(ctx, session, dest, opts); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "two identical re-exports", after, testtree.Files(t, dest))
	checkShard(t, session, dest, rep)
}

func TestReexportWindowChangeReencodes(t *testing.T) {
	ctx := context.Background()
	session := smallSession(t, synth.Options{Seed: 62, Cameras: 1})
	dest := filepath.Join(t.TempDir(), "shard")
	enc := &countingEncoder{}
	opts := Options{Video: VideoOptions{Codec: "h264"}, VideoFiles: enc}
	if _, err := exportWithVideo(ctx, session, dest, opts); err != nil {
		t.Fatal(err)
	}
	// Another frame rate moves every frame: the whole video is encoded
	// again rather than patched.
	opts.FPS, opts.Replace = 15, true
	rep, err := exportWithVideo(ctx, session, dest, opts)
	if err != nil {
		t.Fatal(err)
	}
	if enc.calls.Load() != 2 || len(rep.VideoReused) != 0 {
		t.Errorf("encoder calls %d, reused %v; want a second encode and no reuse", enc.calls.Load(), rep.VideoReused)
	}
}

func TestReexportRefused(t *testing.T) {
	ctx := context.Background()
	session := smallSession(t, synth.Options{Seed: 63})
	dest := filepath.Join(t.TempDir(), "shard")
	if _, err := exportWithVideo(ctx, session, dest, Options{}); err != nil {
		t.Fatal(err)
	}
	before := testtree.Files(t, dest)
	cases := map[string]string{
		"task-missing": strings.Replace(synth.ExampleSpec, `"id": "inspect"`, `"id": "look"`, 1),
		"type-changed": strings.Replace(strings.Replace(synth.ExampleSpec, `"type": "open"`, `"type": "timed"`, 1),
			`"repeatCount": 1,`, `"durationS": 3, "repeatCount": 1,`, 1),
		"invalid": `{"schema": "ceres-task-specification"}`,
	}
	for name, spec := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := exportWithVideo(ctx, session, dest, Options{TaskSpec: []byte(spec), Replace: true})
			if !errors.Is(err, ErrSpecMismatch) {
				t.Fatalf("err = %v, want ErrSpecMismatch", err)
			}
			if name != "invalid" && !strings.Contains(err.Error(), map[string]string{"task-missing": "inspect", "type-changed": "open"}[name]) {
				t.Errorf("error %q does not name the offending task", err)
			}
			after := testtree.Files(t, dest)
			for f, b := range before {
				if !bytes.Equal(b, after[f]) {
					t.Errorf("refused re-export changed %s", f)
				}
			}
		})
	}
	entries, _ := os.ReadDir(filepath.Dir(dest))
	if len(entries) != 1 {
		t.Errorf("refused re-exports left %d entries beside the shard", len(entries)-1)
	}
}

// A re-export reuses only video bytes whose SHA-256 is the one
// ceres/videos.json recorded; any other damage to the old shard's video or
// its record means encoding again, and the report says why.
func TestReexportReusesOnlyVerifiedVideo(t *testing.T) {
	ctx := context.Background()
	session := smallSession(t, synth.Options{Seed: 63, Cameras: 1})
	base := filepath.Join(t.TempDir(), "shard")
	enc := &countingEncoder{}
	opts := Options{Video: VideoOptions{Codec: "h264"}, VideoFiles: enc}
	if _, err := exportWithVideo(ctx, session, base, opts); err != nil {
		t.Fatal(err)
	}
	mp4s, _ := filepath.Glob(filepath.Join(base, layout.VideosDir, "*", "chunk-*", "file-*"+layout.VideoExt))
	if len(mp4s) == 0 {
		t.Fatal("no video file")
	}
	videoRel, _ := filepath.Rel(base, mp4s[0])
	manifest := filepath.FromSlash(layout.VideosPath)
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		reuse  bool
		why    string
	}{
		{"untouched", func(*testing.T, string) {}, true, ""},
		{"a flipped byte, same size", func(t *testing.T, dir string) { flipByte(t, filepath.Join(dir, videoRel), 0.5) }, false, "SHA-256"},
		{"a flipped byte near the end", func(t *testing.T, dir string) { flipByte(t, filepath.Join(dir, videoRel), 0.99) }, false, "SHA-256"},
		{"zeroed, same size", func(t *testing.T, dir string) {
			fi, _ := os.Stat(filepath.Join(dir, videoRel))
			must(t, os.WriteFile(filepath.Join(dir, videoRel), make([]byte, fi.Size()), 0o644))
		}, false, "SHA-256"},
		{"cut short", func(t *testing.T, dir string) { must(t, os.Truncate(filepath.Join(dir, videoRel), 100)) }, false, "bytes"},
		{"missing", func(t *testing.T, dir string) { must(t, os.Remove(filepath.Join(dir, videoRel))) }, false, "no such file"},
		{"hashes dropped from the record", func(t *testing.T, dir string) {
			b, err := os.ReadFile(filepath.Join(dir, manifest))
			must(t, err)
			b = regexpHashes.ReplaceAll(b, []byte(`"fileSha256": []`))
			must(t, os.WriteFile(filepath.Join(dir, manifest), b, 0o644))
		}, false, "hashes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "shard")
			copyDir(t, base, dest)
			c.damage(t, dest)
			calls := enc.calls.Load()
			o := opts
			o.TaskSpec, o.Replace = []byte(fixedSpec), true
			rep, err := exportWithVideo(ctx, session, dest, o)
			if err != nil {
				t.Fatal(err)
			}
			encoded := enc.calls.Load() - calls
			if c.reuse != (encoded == 0) || c.reuse != (len(rep.VideoReused) == 1) {
				t.Fatalf("encoded %d times, reused %v; want reuse %v", encoded, rep.VideoReused, c.reuse)
			}
			if !c.reuse && !strings.Contains(strings.Join(rep.Notes, "\n"), c.why) {
				t.Errorf("notes %q do not say why (%q)", rep.Notes, c.why)
			}
			checkShard(t, session, dest, rep)
		})
	}
}

var regexpHashes = regexp.MustCompile(`"fileSha256": \[[^\]]*\]`)

func flipByte(t *testing.T, path string, at float64) {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	b[int(float64(len(b)-1)*at)] ^= 0x55
	must(t, os.WriteFile(path, b, 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
}

package merge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/media"
)

// joinCall is one Join a fakeJoin was asked for.
type joinCall struct {
	dst         string
	fps, frames int
	ranges      []media.JoinRange
}

// fakeJoin is the join half of Video, recording what the merge asks of it
// (its other methods are not called by a plan's execution).
type fakeJoin struct {
	Video
	calls *[]joinCall
	err   error
}

func (f fakeJoin) Join(_ context.Context, dst string, fps, frames int, ranges []media.JoinRange) error {
	*f.calls = append(*f.calls, joinCall{dst, fps, frames, ranges})
	return f.err
}

// TestExecuteJoinsPlannedRanges: a plan's execution carries a kept file
// over as it is and asks the video library, once per joined file, for the
// parts in order, consecutive parts of one source file read as one range;
// the library's error ends the merge.
func TestExecuteJoinsPlannedRanges(t *testing.T) {
	src := t.TempDir()
	kept := filepath.Join(src, "kept.mp4")
	if err := os.WriteFile(kept, []byte("kept bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &videoPlan{key: "observation.images.front", files: []*plannedFile{
		{rel: "videos/f/chunk-000/file-000.mp4", keep: kept, frames: 9},
		{rel: "videos/f/chunk-000/file-001.mp4", frames: 12, parts: []plannedPart{
			{path: "a.mp4", from: 0, frames: 4}, {path: "a.mp4", from: 4, frames: 3},
			{path: "b.mp4", from: 0, frames: 2}, {path: "a.mp4", from: 9, frames: 3},
		}},
	}}
	dir := t.TempDir()
	for _, f := range p.files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f.rel)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var calls []joinCall
	if err := p.execute(context.Background(), fakeJoin{calls: &calls}, dir, 30); err != nil {
		t.Fatal(err)
	}
	want := []joinCall{{dst: filepath.Join(dir, "videos/f/chunk-000/file-001.mp4"), fps: 30, frames: 12, ranges: []media.JoinRange{
		{Path: "a.mp4", From: 0, Frames: 7}, {Path: "b.mp4", From: 0, Frames: 2}, {Path: "a.mp4", From: 9, Frames: 3},
	}}}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("joins %+v, want %+v", calls, want)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "videos/f/chunk-000/file-000.mp4")); err != nil || string(b) != "kept bytes" {
		t.Errorf("kept file: %q, %v; want its bytes carried over", b, err)
	}
	broken := errors.New("source is not on the frame grid")
	calls = nil
	if err := p.execute(context.Background(), fakeJoin{calls: &calls, err: broken}, t.TempDir(), 30); !errors.Is(err, broken) {
		t.Errorf("execute with a failing join: %v, want %v", err, broken)
	}
}

// TestMergeNeedsVideo: a merge without the video library is refused
// before it reads anything.
func TestMergeNeedsVideo(t *testing.T) {
	if _, err := Merge(context.Background(), Options{Sources: []string{t.TempDir()}, Output: filepath.Join(t.TempDir(), "out")}); err == nil {
		t.Fatal("Merge without Options.Video ran")
	}
}

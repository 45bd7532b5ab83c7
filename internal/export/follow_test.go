//go:build cgo

package export

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/synth"
	"github.com/ceres-robotics/ceres-export/internal/testenv"
	"github.com/ceres-robotics/ceres-export/internal/testtree"
)

// sameTree fails unless the shards at got and want hold the same files
// with the same bytes.
func sameTree(t *testing.T, got, want string) {
	t.Helper()
	w := testtree.Files(t, want)
	if len(w) == 0 {
		t.Error("the batch export wrote no files")
	}
	for _, name := range testtree.Differing(testtree.Files(t, got), w) {
		t.Errorf("%s: the followed shard's differs from the batch export's (or is in one of them only)", name)
	}
}

// followCase is one live session followed.
type followCase struct {
	name string
	opts synth.Options
	// startAfter delays the follow: 0 starts it before the session's
	// directory exists; > 0 once the session has run that long (a follow
	// started late).
	startAfter time.Duration
	// encodesWhileRecording: episodes are encoded before the session ends
	// (false where the camera files can only be read at their end).
	encodesWhileRecording bool
}

// A followed export of a live session, whatever happens in it, is the
// batch export of the finished session, byte for byte; and where the
// containers allow it, the episodes are encoded while the session records.
func TestFollowEqualsBatch(t *testing.T) {
	testenv.Short(t, "records live sessions in accelerated real time")
	cases := []followCase{
		{name: "two cameras, retries during and after attempts, pauses, several segments",
			opts:                  synth.Options{Seed: 21, TimeScale: 0.15, Cameras: 2, Width: 64, Height: 64, SegmentSize: 64 << 10},
			encodesWhileRecording: true},
		{name: "recorder crash with a cut camera",
			opts:                  synth.Options{Seed: 22, TimeScale: 0.15, Cameras: 1, Width: 64, Height: 64, Faults: synth.Faults{Crash: true, CutCamera: true}},
			encodesWhileRecording: true},
		{name: "fragmented mp4 camera, read as it grows",
			opts:                  synth.Options{Seed: 28, TimeScale: 0.15, Cameras: 1, Width: 64, Height: 64, CameraCodec: "h264"},
			encodesWhileRecording: true},
		{name: "mp4 camera with its moov at the end, readable only at its end",
			opts: synth.Options{Seed: 23, TimeScale: 0.15, Cameras: 1, Width: 64, Height: 64, CameraCodec: "h264", IndexedCameras: true}},
		{name: "indexed webm camera, recorder restarts (a file is read once the next is named)",
			opts:                  synth.Options{Seed: 24, TimeScale: 0.15, Cameras: 1, Width: 64, Height: 64, IndexedCameras: true, CameraFiles: 2},
			encodesWhileRecording: true},
		{name: "streaming camera, recorder restarts",
			opts:                  synth.Options{Seed: 25, TimeScale: 0.15, Cameras: 1, Width: 64, Height: 64, CameraFiles: 2},
			encodesWhileRecording: true},
		{name: "started with the session half written",
			opts:       synth.Options{Seed: 26, TimeScale: 0.15, Cameras: 1, Width: 64, Height: 64},
			startAfter: 2 * time.Second, encodesWhileRecording: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			followAndCompare(t, c)
		})
	}
}

func followAndCompare(t *testing.T, c followCase) {
	ctx := context.Background()
	root := t.TempDir()
	session := filepath.Join(root, "session")
	const speed = 6.0
	var wg sync.WaitGroup
	var liveErr error
	var liveEnd time.Time
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, liveErr = synth.WriteLive(ctx, session, c.opts, speed)
		liveEnd = time.Now()
	}()
	if c.startAfter > 0 {
		time.Sleep(c.startAfter)
	}
	var mu sync.Mutex
	var statuses []FollowStatus
	fo := FollowOptions{Idle: 2 * time.Second, Poll: 50 * time.Millisecond, Status: func(s FollowStatus) {
		mu.Lock()
		statuses = append(statuses, s)
		mu.Unlock()
	}}
	followed := filepath.Join(root, "followed")
	if _, err := followWithVideo(ctx, session, followed, Options{Version: "test"}, fo); err != nil {
		wg.Wait()
		t.Fatalf("follow: %v (recorder: %v)", err, liveErr)
	}
	done := time.Now()
	wg.Wait()
	if liveErr != nil {
		t.Fatal(liveErr)
	}
	if !c.opts.Faults.Crash && done.Before(liveEnd) {
		t.Errorf("the follow committed before the session ended")
	}
	batch := filepath.Join(root, "batch")
	if _, err := exportWithVideo(ctx, session, batch, Options{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	sameTree(t, followed, batch)
	if entries, _ := os.ReadDir(root); len(entries) != 3 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("beside the shards: %v, want session, followed, batch only (work left behind?)", names)
	}
	if c.startAfter == 0 && (len(statuses) == 0 || !statuses[0].Waiting) {
		t.Errorf("the follow did not start before the session's journal existed")
	}
	// Before the session ended, what had the follow encoded?
	before := 0
	for _, s := range statuses {
		if !s.Ended {
			before = max(before, s.Encoded)
		}
	}
	if c.encodesWhileRecording && before == 0 {
		t.Errorf("no episode was encoded while the session recorded")
	}
	if !c.encodesWhileRecording && before != 0 {
		t.Errorf("%d episodes encoded before camera files that can only be read whole were complete", before)
	}
	t.Logf("%d status reports; %d episodes encoded before the end; follow committed %v after the recorder finished",
		len(statuses), before, done.Sub(liveEnd).Round(time.Millisecond))
}

// A follow cancelled (SIGINT, SIGTERM) leaves no shard and no work files.
func TestFollowCancelledLeavesNothing(t *testing.T) {
	testenv.Short(t, "records a live session")
	root := t.TempDir()
	session := filepath.Join(root, "session")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = synth.WriteLive(ctx, session, synth.Options{Seed: 27, TimeScale: 0.15, Cameras: 1, Width: 64, Height: 64}, 4)
	}()
	var once sync.Once
	// Cancelled once an episode is encoded, or at the latest when the
	// session ends: on a loaded machine the follow may encode nothing
	// before END, and the test then cancelled nothing (the follow
	// committed, CI of 2026-12-05).
	fo := FollowOptions{Poll: 50 * time.Millisecond, Status: func(s FollowStatus) {
		if s.Encoded > 0 || s.Ended {
			once.Do(cancel)
		}
	}}
	_, err := followWithVideo(ctx, session, filepath.Join(root, "shard"), Options{}, fo)
	wg.Wait()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("follow cancelled: %v, want context.Canceled", err)
	}
	entries, _ := os.ReadDir(root)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"session"}) {
		t.Errorf("after a cancelled follow: %v, want the session only", names)
	}
}

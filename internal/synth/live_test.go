package synth

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/testtree"
)

// A live session is the session Write makes, byte for byte, written as a
// recorder writes it: the journal and the streaming camera file grow while
// the session's time passes at the speed asked for (a fragmented MP4 too), an
// MP4 with its moov at the end appears whole at
// its end, and the faults land where a recorder's would.
func TestWriteLive(t *testing.T) {
	for _, c := range []struct {
		name string
		opts Options
	}{
		{"webm, retries, a pause", camera(5)},
		{"two cameras, a crash, a cut camera", Options{Seed: 6, TimeScale: 0.1, Cameras: 2, Width: 64, Height: 48, Faults: Faults{Crash: true, CutCamera: true}}},
		{"fragmented mp4 grows", Options{Seed: 7, TimeScale: 0.1, Cameras: 1, Width: 64, Height: 48, CameraCodec: "h264"}},
		{"mp4 with its moov at the end readable only whole", Options{Seed: 8, TimeScale: 0.1, Cameras: 1, Width: 64, Height: 48, CameraCodec: "h264", IndexedCameras: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			batch, live := filepath.Join(t.TempDir(), "batch"), filepath.Join(t.TempDir(), "live")
			res, err := Write(ctx, batch, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			const speed = 25.0
			// Watch the live session grow: the journal's and every camera
			// file's sizes, as a follower polling it would see them.
			var mu sync.Mutex
			sizes := map[string]map[int64]bool{}
			done := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					_ = filepath.WalkDir(live, func(p string, d fs.DirEntry, err error) error {
						if err == nil && !d.IsDir() {
							if st, err := os.Stat(p); err == nil {
								rel, _ := filepath.Rel(live, p)
								mu.Lock()
								if sizes[rel] == nil {
									sizes[rel] = map[int64]bool{}
								}
								sizes[rel][st.Size()] = true
								mu.Unlock()
							}
						}
						return nil
					})
					select {
					case <-done:
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			}()
			start := time.Now()
			if _, err := WriteLive(ctx, live, c.opts, speed); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			close(done)
			wg.Wait()
			if want := time.Duration(float64(res.End) / speed); took < want*9/10 {
				t.Errorf("a session of %v at speed %v took %v, want at least %v", time.Duration(res.End), speed, took, want)
			}
			a, b := testtree.Files(t, batch), testtree.Files(t, live)
			if len(a) != len(b) {
				t.Fatalf("batch wrote %d files, live %d", len(a), len(b))
			}
			for rel, x := range a {
				if !bytes.Equal(x, b[rel]) {
					t.Errorf("%s: live (%d bytes) differs from batch (%d bytes)", rel, len(b[rel]), len(x))
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if n := len(sizes[filepath.FromSlash("journal/000001.cjl")]); n < 3 {
				t.Errorf("the journal was seen at %d sizes, want it growing", n)
			}
			for _, m := range res.Media {
				seen := sizes[filepath.FromSlash(m)]
				streams := !c.opts.IndexedCameras
				if streams && len(seen) < 3 {
					t.Errorf("%s was seen at %d sizes, want it growing", m, len(seen))
				}
				for size := range seen {
					if !streams && size != int64(len(a[m])) {
						t.Errorf("%s was seen at %d bytes, want it whole (%d) or not at all", m, size, len(a[m]))
					}
				}
			}
		})
	}
	if _, err := WriteLive(context.Background(), t.TempDir(), camera(1), 0); err == nil {
		t.Error("speed 0 accepted")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := WriteLive(ctx, filepath.Join(t.TempDir(), "s"), camera(1), 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a cancelled live session: %v, want the context's error", err)
	}
}

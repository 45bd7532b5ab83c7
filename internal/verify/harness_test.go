//go:build cgo

package verify

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/synth"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// fixture is one synthetic session and its exported shard, built once per
// test binary; tests that change the shard work on a copy.
type fixture struct {
	session string
	shard   string
	synth   *synth.Result
	err     error
}

var (
	fixtureOnce sync.Once
	theFixture  fixture
	fixtureRoot string
)

// TestMain removes the fixture, which goodShard creates on first use (so
// that fuzz workers, which never use it, leave nothing behind).
func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureRoot != "" {
		os.RemoveAll(fixtureRoot)
	}
	os.Exit(code)
}

// goodShard returns the session and shard of the fixture, exported with the
// real exporter from a tiny synthetic session with one camera.
func goodShard(t testing.TB) fixture {
	t.Helper()
	fixtureOnce.Do(func() {
		ctx := context.Background()
		root, err := os.MkdirTemp("", "verify-test-")
		if err != nil {
			theFixture = fixture{err: err}
			return
		}
		fixtureRoot = root
		f := fixture{session: filepath.Join(fixtureRoot, "session"), shard: filepath.Join(fixtureRoot, "shard")}
		f.synth, f.err = synth.Write(ctx, f.session, synth.Options{Seed: 7, TimeScale: 0.1, Cameras: 1, Width: 64, Height: 48})
		if f.err == nil {
			_, f.err = export.Export(ctx, f.session, f.shard, export.Options{VideoFiles: video.Files{}, Video: export.VideoOptions{Codec: "h264"}})
		}
		theFixture = f
	})
	if theFixture.err != nil {
		t.Fatalf("building the fixture: %v", theFixture.err)
	}
	return theFixture
}

// copyShard copies the good shard to a fresh directory for a mutation.
func copyShard(t testing.TB) string {
	t.Helper()
	f := goodShard(t)
	dst := filepath.Join(t.TempDir(), "shard")
	err := filepath.Walk(f.shard, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(f.shard, path)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// shardVideo is Shard with the FFmpeg decoder the CLI wires in.
func shardVideo(ctx context.Context, dir string, opts Options) (*Result, error) {
	opts.Video = video.Files{}
	return Shard(ctx, dir, opts)
}

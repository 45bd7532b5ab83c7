//go:build cgo

package merge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/pqcolumns"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// renamedCopies makes n shards under dir from copies of src, each a shard
// of its own (another session in its export report, its seal written
// anew), as a lab's many short takes of one rig are.
func renamedCopies(t *testing.T, src, dir string, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range out {
		dst := filepath.Join(dir, fmt.Sprintf("copy-%03d", i))
		if err := copyTree(src, dst); err != nil {
			t.Fatal(err)
		}
		report := filepath.Join(dst, filepath.FromSlash(layout.ExportReportPath))
		var r map[string]any
		readJSON(t, report, &r)
		r["sessionId"] = fmt.Sprintf("%v-copy-%03d", r["sessionId"], i)
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(report, b, 0o644); err != nil {
			t.Fatal(err)
		}
		seal, err := shard.SealOf(context.Background(), dst, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b, err = json.MarshalIndent(seal, "", "  "); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, filepath.FromSlash(layout.SealPath)), b, 0o644); err != nil {
			t.Fatal(err)
		}
		out[i] = dst
	}
	return out
}

// retainedOpen opens and verifies dirs as a merge does (no rows held) and
// returns the heap in use once they are all open, with what the merge
// keeps of them until it writes them: the sources and the file sums.
func retainedOpen(t *testing.T, dirs []string) uint64 {
	t.Helper()
	sums := newFileSums()
	opts := Options{HeldRowsBytes: -1, Video: video.Files{}}
	sources, openErrs, verifyErrs, _ := openSources(context.Background(), opts, dirs, nil, sums, &pqcolumns.PagePool{}, slog.New(slog.DiscardHandler))
	for i := range dirs {
		if openErrs[i] != nil || verifyErrs[i] != nil {
			t.Fatalf("%s: open: %v; verify: %v", dirs[i], openErrs[i], verifyErrs[i])
		}
	}
	// Twice: page buffers pooled by the reads (sync.Pool) go at the second.
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	runtime.KeepAlive(sources)
	runtime.KeepAlive(sums)
	return ms.HeapAlloc
}

// TestOpenSourcesKeepLittleOfEach: a merge keeps every source from its
// verify to its writing, so what it keeps of each is what its peak memory
// grows by with the number of shards (a thousand small shards took the
// peak RSS 1.7 times the 8-shard merge's). What planning needs is kept in
// a compact form; the episodes, specifications and task descriptors are
// read again when the source is written.
func TestOpenSourcesKeepLittleOfEach(t *testing.T) {
	// Not parallel: it reads the process's heap.
	const few, many = 8, 32
	dirs := renamedCopies(t, fixtureShard(t, "h264-a"), t.TempDir(), many)
	retainedOpen(t, dirs[:few])
	a, b := retainedOpen(t, dirs[:few]), retainedOpen(t, dirs)
	perSource := (float64(b) - float64(a)) / (many - few)
	t.Logf("%d sources open: %.2f MiB; %d: %.2f MiB; %.0f bytes a source", few, float64(a)/(1<<20), many, float64(b)/(1<<20), perSource)
	if perSource > 4096 {
		t.Errorf("a merge keeps %.0f bytes of each source from its verify to its writing, want at most 4096", perSource)
	}
}

// TestReloadedSourceIsWhatWasVerified: a shard's episodes, specifications
// and task descriptors are read again when it is written; what is read
// then must be what its verify saw, or nothing is written from it.
func TestReloadedSourceIsWhatWasVerified(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		change func(t *testing.T, s *source)
	}{
		{"unchanged", func(*testing.T, *source) {}},
		{"specification", func(t *testing.T, s *source) {
			entries, err := os.ReadDir(s.path(s.ds.SpecsDir()))
			if err != nil || len(entries) == 0 {
				t.Fatalf("%s: %v, %d entries", s.ds.SpecsDir(), err, len(entries))
			}
			p := filepath.Join(s.path(s.ds.SpecsDir()), entries[0].Name())
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, append(b, ' '), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"descriptors", func(t *testing.T, s *source) {
			var f map[string]any
			p := s.path(layout.DescriptorsPath)
			readJSON(t, p, &f)
			f["tasks"].([]any)[0].(map[string]any)["title"] = "Another title"
			b, err := json.Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"episodes", func(t *testing.T, s *source) {
			// Another shard's meta/episodes in its place.
			other := fixtureShard(t, "h264-b")
			rel := layout.EpisodesPath(0, 0)
			if err := copyTree(filepath.Join(other, filepath.FromSlash(rel)), s.path(rel)); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := renamedCopies(t, fixtureShard(t, "h264-a"), t.TempDir(), 1)[0]
			s, err := openSource(ctx, dir, nil, true)
			if err != nil {
				t.Fatal(err)
			}
			episodes, specs, descriptors := s.episodes, s.specs, s.descriptors
			s.release()
			if !s.released || s.episodes != nil || s.specs != nil || s.descriptors != nil {
				t.Fatalf("released: %v; still holds %d episodes, %d specifications, %d descriptors", s.released, len(s.episodes), len(s.specs), len(s.descriptors))
			}
			tc.change(t, s)
			err = s.reload(ctx)
			if tc.name == "unchanged" {
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(s.episodes, episodes) || !reflect.DeepEqual(s.specs, specs) || !reflect.DeepEqual(s.descriptors, descriptors) {
					t.Error("read again, the shard's episodes, specifications or descriptors differ from those first read")
				}
				return
			}
			if !errors.Is(err, ErrUnsound) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("reload after changing the %s: %v, want ErrUnsound naming %s", tc.name, err, dir)
			}
			if s.episodes != nil {
				t.Error("a source that changed keeps what was read again")
			}
		})
	}
}

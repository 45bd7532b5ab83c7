//go:build cgo

package merge

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/verify"
)

// An append trusts the dataset it appends to only while that dataset's
// files are, byte for byte, what its merge sealed: a changed, unsealed,
// badly sealed or legacy-sealed one is verified in full, and refused when
// unsound.
func TestMergeIntoTrustsOnlyAHoldingSeal(t *testing.T) {
	src := shards(t, "h264-a", "h264-crash", "h264-spec2")
	base := filepath.Join(t.TempDir(), "base")
	if _, err := mergeVideo(context.Background(), Options{Sources: src[:2], Output: base}); err != nil {
		t.Fatal(err)
	}
	if ok, why := sealHolds(context.Background(), base, nil); !ok {
		t.Fatalf("a merged dataset's seal does not hold for it: %v", why)
	}
	seal := filepath.FromSlash(layout.SealPath)
	for _, tc := range []struct {
		name    string
		change  func(t *testing.T, dir string)
		trusted bool
		want    error
		text    string
	}{
		{name: "sealed", trusted: true},
		{name: "unsealed", change: func(t *testing.T, dir string) { mustRemove(t, filepath.Join(dir, seal)) }},
		// A damaged seal is a damaged file: the full verify refuses it.
		{name: "seal not JSON", change: func(t *testing.T, dir string) { mustWrite(t, filepath.Join(dir, seal), []byte("{")) },
			want: ErrUnsound, text: "seal.invalid"},
		{name: "a video byte changed", change: func(t *testing.T, dir string) {
			p := filepath.Join(dir, filepath.FromSlash(layout.VideoPath("observation.images.front", 0, 0)))
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 1
			mustWrite(t, p, b)
		}, want: ErrUnsound, text: "seal.mismatch"},
		{name: "legacy seal", change: func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, seal), []byte(`{"contentDigest": "`+strings.Repeat("0", 64)+`"}`))
		}},
		{name: "a stray file added", change: func(t *testing.T, dir string) { mustWrite(t, filepath.Join(dir, "meta", "notes.txt"), []byte("x")) }},
		{name: "metadata changed", change: func(t *testing.T, dir string) {
			// Drop a frame from the total: unsound, and the seal no longer holds.
			info := filepath.Join(dir, layout.InfoPath)
			b, err := os.ReadFile(info)
			if err != nil {
				t.Fatal(err)
			}
			mustWrite(t, info, []byte(strings.Replace(string(b), `"total_frames": `, `"total_frames": 1`, 1)))
		}, want: ErrUnsound, text: "info.total-frames"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "into")
			if err := copyTree(base, dir); err != nil {
				t.Fatal(err)
			}
			if tc.change != nil {
				tc.change(t, dir)
			}
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			_, err := mergeVideo(context.Background(), Options{Sources: src[2:], Into: dir, Logger: log})
			if tc.want != nil {
				if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
					t.Fatalf("error %v, want %v naming %s", err, tc.want, tc.text)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			trusted := strings.Contains(logs.String(), "as its merge sealed it")
			verified := strings.Contains(logs.String(), "verifying in full")
			if trusted != tc.trusted || verified == tc.trusted {
				t.Fatalf("trusted %v, verified %v, want trusted %v:\n%s", trusted, verified, tc.trusted, logs.String())
			}
			if ok, why := sealHolds(context.Background(), dir, nil); !ok {
				t.Fatalf("the appended dataset's seal does not hold for it: %v", why)
			}
		})
	}
}

// A merged dataset written before its sources' files were flat
// (ceres/sources/NNNN/<file>) is read as it is: verify finds its
// provenance, and merging it, or appending to it, writes the bytes the
// flat form gives, in the flat form.
func TestMergeReadsLegacySourceLayout(t *testing.T) {
	src := shards(t, "h264-a", "h264-crash", "h264-spec2")
	dir := t.TempDir()
	flat := filepath.Join(dir, "flat")
	if _, err := mergeVideo(context.Background(), Options{Sources: src[:2], Output: flat}); err != nil {
		t.Fatal(err)
	}
	legacy := filepath.Join(dir, "legacy")
	if err := copyTree(flat, legacy); err != nil {
		t.Fatal(err)
	}
	mustRemove(t, filepath.Join(legacy, layout.SealPath)) // there were no seals either
	entries, err := os.ReadDir(filepath.Join(flat, layout.SourcesDir))
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for _, e := range entries {
		n, name, ok := layout.ParseSourcePath(layout.SourcesDir + "/" + e.Name())
		if !ok || e.IsDir() {
			t.Fatalf("%s/%s is not a flat source file", layout.SourcesDir, e.Name())
		}
		to := filepath.Join(legacy, filepath.FromSlash(layout.LegacySourcePath(n, name)))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(legacy, layout.SourcesDir, e.Name()), to); err != nil {
			t.Fatal(err)
		}
		moved++
	}
	if moved < 2 {
		t.Fatalf("%d source files moved, want one export report per source at least", moved)
	}
	mustVerify(t, legacy)
	res, err := verify.Shard(context.Background(), legacy, verify.Options{Quick: true, Journal: filepath.Join(fixtureRoot, "h264-a-session")})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Sound {
		t.Fatalf("verify --journal of the legacy dataset: %v", res.Findings)
	}

	for _, tc := range []struct {
		name string
		run  func(base, out string) error
	}{
		{"into", func(base, out string) error {
			if err := copyTree(base, out); err != nil {
				return err
			}
			_, err := mergeVideo(context.Background(), Options{Sources: src[2:], Into: out})
			return err
		}},
		{"as a source", func(base, out string) error {
			_, err := mergeVideo(context.Background(), Options{Sources: []string{base, src[2]}, Output: out})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fromFlat, fromLegacy := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
			if err := tc.run(flat, fromFlat); err != nil {
				t.Fatal(err)
			}
			if err := tc.run(legacy, fromLegacy); err != nil {
				t.Fatal(err)
			}
			if a, b := lerobotFiles(t, fromFlat), lerobotFiles(t, fromLegacy); !maps.Equal(a, b) {
				t.Error("data/, meta/ or videos/ differ between the flat and the legacy dataset's merge")
			}
			a, b := sourceFiles(t, fromFlat), sourceFiles(t, fromLegacy)
			if len(a) < 3 || !maps.Equal(a, b) {
				t.Errorf("the sources' files differ: %d from the flat dataset, %d from the legacy one", len(a), len(b))
			}
			mustVerify(t, fromLegacy)
		})
	}
}

// sourceFiles reads a merged dataset's ceres/sources, which must be flat.
func sourceFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, layout.SourcesDir))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if e.IsDir() {
			t.Fatalf("%s: a directory %s/%s; the sources' files are flat", dir, layout.SourcesDir, e.Name())
		}
		b, err := os.ReadFile(filepath.Join(dir, layout.SourcesDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func mustRemove(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

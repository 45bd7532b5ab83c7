//go:build cgo

package merge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/shard"
)

// An append's work is what it adds: the meta/episodes files of the
// dataset appended to stay as they are (the same files, linked), the new
// episodes' rows go into a file after its last, and the statistics are
// still those of one merge of every shard. Rewriting meta/episodes made
// an append to a 1,000-shard dataset 5.7 times a merge of two.
func TestMergeIntoKeepsEpisodesFiles(t *testing.T) {
	src := shards(t, "h264-a", "h264-crash", "h264-spec2", "h264-b")
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// first makes the dataset appended to; opts every later merge.
		first, opts Options
		// next are the meta/episodes files each append adds.
		next []string
		// change, when set, changes the dataset before the first append.
		change func(t *testing.T, dir string)
	}{
		{"default sizes", Options{}, Options{}, []string{layout.EpisodesPath(0, 1), layout.EpisodesPath(0, 2)}, nil},
		{"two files a chunk", Options{ChunksSize: 2}, Options{ChunksSize: 2}, []string{layout.EpisodesPath(0, 1), layout.EpisodesPath(1, 0)}, nil},
		// Its meta/stats.json aggregated otherwise: the per-episode
		// statistics are aggregated again.
		{"quantiles aggregated otherwise", Options{}, Options{Quantiles: shard.QuantileEnvelope}, []string{layout.EpisodesPath(0, 1), layout.EpisodesPath(0, 2)}, nil},
		// Its meta/stats.json holds other values than its writer's (here
		// rounded, and sealed again): not taken for the aggregate.
		{"stats.json rounded", Options{}, Options{}, []string{layout.EpisodesPath(0, 1), layout.EpisodesPath(0, 2)}, roundStats},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "merged")
			o := tc.first
			o.Sources, o.Output = src[:2], out
			if _, err := mergeVideo(ctx, o); err != nil {
				t.Fatal(err)
			}
			if tc.change != nil {
				tc.change(t, out)
			}
			// Hard links keep each state's files reachable after the swap.
			kept := []string{layout.EpisodesPath(0, 0)}
			for i, s := range src[2:] {
				before := filepath.Join(dir, fmt.Sprint("before-", i))
				for _, rel := range kept {
					linkInto(t, out, before, rel)
				}
				o := tc.opts
				o.Sources, o.Into = []string{s}, out
				if _, err := mergeVideo(ctx, o); err != nil {
					t.Fatal(err)
				}
				for _, rel := range kept {
					if !sameInode(t, filepath.Join(before, rel), filepath.Join(out, rel)) {
						t.Errorf("append %d: %s was rewritten, not carried over", i+1, rel)
					}
				}
				if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(tc.next[i]))); err != nil {
					t.Errorf("append %d: the new episodes' file: %v", i+1, err)
				}
				kept = append(kept, tc.next[i])
			}
			checkMerge(t, out, src)
			// The statistics are those of one merge of all the shards.
			flat := filepath.Join(dir, "flat")
			o = tc.opts
			o.Sources, o.Output = src, flat
			if _, err := mergeVideo(ctx, o); err != nil {
				t.Fatal(err)
			}
			a, _ := os.ReadFile(filepath.Join(flat, layout.StatsPath))
			b, _ := os.ReadFile(filepath.Join(out, layout.StatsPath))
			if len(a) == 0 || !bytes.Equal(a, b) {
				t.Errorf("%s after appending differs from a merge of all the shards at once", layout.StatsPath)
			}
		})
	}
}

// roundStats rounds every number of dir's meta/stats.json to four
// significant digits and seals dir again, so that its seal holds.
func roundStats(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(layout.StatsPath))
	var stats map[string]map[string]any
	readJSON(t, p, &stats)
	var round func(v any) any
	round = func(v any) any {
		switch v := v.(type) {
		case float64:
			r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
			return r
		case []any:
			for i := range v {
				v[i] = round(v[i])
			}
		}
		return v
	}
	for _, f := range stats {
		for k, v := range f {
			f[k] = round(v)
		}
	}
	b, err := json.MarshalIndent(stats, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, p, b)
	sealAgain(t, dir)
}

// sealAgain writes dir's seal anew, so that it holds for what dir holds.
func sealAgain(t *testing.T, dir string) {
	t.Helper()
	seal, err := shard.SealOf(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(seal, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, filepath.FromSlash(layout.SealPath)), b)
	if ok, why := sealHolds(context.Background(), dir, nil); !ok {
		t.Fatalf("sealed again, the seal does not hold: %v", why)
	}
}

// An append reads none of the episodes of the dataset it goes into while
// that dataset's seal holds: their count, frames, files and each task's
// episodes are in its info.json, merge report and card, which the seal
// vouches for. Reading every episode's places was the largest part of an
// append that grew with the dataset. The dataset's first meta/episodes
// file is replaced here by bytes that are no Parquet file, and sealed
// again: the append must neither read it nor change it. The card's rows
// and the merge report's entries of the sources already there are written
// again as they are, the same bytes as formatting them again. Where the
// card does not give the tasks' episodes (its table edited, sealed
// again), the episodes are read, and the dataset is still the right one.
func TestMergeIntoReadsNoEpisodeOfTheDataset(t *testing.T) {
	src := shards(t, "h264-a", "h264-crash", "h264-b")
	ctx := context.Background()
	first := layout.EpisodesPath(0, 0)
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string)
		// unread: the dataset's first meta/episodes file is no longer
		// one (the append may not read it).
		unread bool
	}{
		{"as merged", func(*testing.T, string) {}, false},
		{"meta/episodes not read", func(t *testing.T, dir string) {
			p := filepath.Join(dir, filepath.FromSlash(first))
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, p, []byte("not a Parquet file: an append must not read the episodes of the dataset it goes into"))
			sealAgain(t, dir)
		}, true},
		{"card without its tasks", func(t *testing.T, dir string) {
			p := filepath.Join(dir, layout.CardPath)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			edited := bytes.Replace(b, []byte("\nTasks:\n"), []byte("\nTasks (edited):\n"), 1)
			if bytes.Equal(edited, b) {
				t.Fatalf("%s has no table of tasks", p)
			}
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, p, edited)
			sealAgain(t, dir)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "merged")
			if _, err := mergeVideo(ctx, Options{Sources: src[:2], Output: out}); err != nil {
				t.Fatal(err)
			}
			tc.change(t, out)
			before := filepath.Join(dir, "before")
			linkInto(t, out, before, first)
			if _, err := mergeVideo(ctx, Options{Sources: src[2:], Into: out}); err != nil {
				t.Fatalf("append: %v", err)
			}
			if !sameInode(t, filepath.Join(before, first), filepath.Join(out, first)) {
				t.Errorf("%s was rewritten, not carried over", first)
			}
			if tc.unread {
				return // the dataset is as damaged as it was made
			}
			checkMerge(t, out, src)
			flat := filepath.Join(dir, "flat")
			if _, err := mergeVideo(ctx, Options{Sources: src, Output: flat}); err != nil {
				t.Fatal(err)
			}
			// The report is what encoding it whole gives, though an
			// append copies the entries of the sources already there.
			got, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(layout.MergeReportPath)))
			if err != nil {
				t.Fatal(err)
			}
			var r Report
			if err := json.Unmarshal(got, &r); err != nil {
				t.Fatal(err)
			}
			if want, err := shard.MarshalCeresJSON(&r); err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s is not as encoded whole (%v):\n%s\nwant\n%s", layout.MergeReportPath, err, got, want)
			}
			if len(r.Sources) != len(src) || len(r.Runs) != 2 {
				t.Errorf("%s: %d sources in %d runs, want %d in 2", layout.MergeReportPath, len(r.Sources), len(r.Runs), len(src))
			}
			for _, rel := range []string{layout.StatsPath, layout.InfoPath, layout.TasksPath} {
				a, _ := os.ReadFile(filepath.Join(flat, filepath.FromSlash(rel)))
				b, _ := os.ReadFile(filepath.Join(out, filepath.FromSlash(rel)))
				if len(a) == 0 || !bytes.Equal(a, b) {
					t.Errorf("%s after appending differs from a merge of all the shards at once", rel)
				}
			}
		})
	}
}

// linkInto hard-links dir's file rel to the same place under to.
func linkInto(t *testing.T, dir, to, rel string) {
	t.Helper()
	dst := filepath.Join(to, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, filepath.FromSlash(rel)), dst); err != nil {
		t.Fatal(err)
	}
}

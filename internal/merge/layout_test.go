//go:build cgo

package merge

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/page"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/internal/synth"
	"github.com/ceres-robotics/ceres-export/internal/verify"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// TestLayoutIsTheOneHome adds one ceres/* episode column and one CERES file
// in one place, internal/layout's tables, and sees every reader and writer
// pick them up with no other change: export writes the column and carries
// the file, shard.Open reads the column back (and page.LoadShard, the
// session page's reader, reads the shard through it), merge carries the
// column's values and keeps the file per source, and verify requires the
// column of every dataset and knows the file, where before the change it
// called such a file a stray. (Not parallel: it changes the tables for
// its duration.)
func TestLayoutIsTheOneHome(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	note := layout.CeresDir + "/lab-note.json"
	sessions := make([]string, 2)
	for i := range sessions {
		sessions[i] = filepath.Join(root, "session"+string(rune('a'+i)))
		if _, err := synth.Write(ctx, sessions[i], synth.Options{Seed: uint64(40 + i), TimeScale: 0.1}); err != nil {
			t.Fatal(err)
		}
	}
	// Before: a shard exported under today's layout, with the note written
	// beside its files by hand: verify calls the note a stray.
	before := filepath.Join(root, "before")
	if _, err := export.Export(ctx, sessions[0], before, export.Options{VideoFiles: video.Files{}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(before, filepath.FromSlash(note)), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if codes := verifyCodes(t, before); !slices.Contains(codes, "layout.stray-file") {
		t.Fatalf("an unknown CERES file: codes %v, want layout.stray-file", codes)
	}

	// The change, in one place: a column (the attempt's task id again,
	// under a new name) and a file a campaign carries, kept per source.
	column := layout.EpisodeColumn{Name: layout.CeresPrefix + "task_id_copy", Dtype: lerobot.String,
		Field: func(e *layout.CeresEpisode) any { return &e.TaskID }}
	savedColumns, savedFiles := layout.EpisodeColumns, layout.CeresFiles
	t.Cleanup(func() { layout.EpisodeColumns, layout.CeresFiles = savedColumns, savedFiles })
	layout.EpisodeColumns = append(slices.Clone(savedColumns), column)
	layout.CeresFiles = append(slices.Clone(savedFiles), layout.CeresFile{Path: note, Merge: layout.MergePerSource, InShard: true, Carried: true})

	// verify picks them up: the old shard lacks the column, and its note is
	// no stray any more.
	codes := verifyCodes(t, before)
	if !slices.Contains(codes, "ceres.missing-column") || slices.Contains(codes, "layout.stray-file") {
		t.Fatalf("the shard of the old layout: codes %v, want ceres.missing-column and no layout.stray-file", codes)
	}

	// export writes the column and carries the file; the reader reads the
	// column back on every episode; verify finds the shards sound.
	shards := make([]string, len(sessions))
	for i, s := range sessions {
		shards[i] = filepath.Join(root, "shard"+string(rune('a'+i)))
		o := export.Options{VideoFiles: video.Files{}, CeresFiles: map[string]any{note: map[string]int{"shard": i}}}
		if _, err := export.Export(ctx, s, shards[i], o); err != nil {
			t.Fatal(err)
		}
		if codes := verifyCodes(t, shards[i]); len(codes) != 0 {
			t.Fatalf("shard %d: codes %v, want a sound shard", i, codes)
		}
		ds, err := shard.Open(shards[i])
		if err != nil {
			t.Fatal(err)
		}
		eps, err := ds.Episodes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range eps {
			if got := column.Get(&e.Ceres); got != e.Ceres.TaskID || got == "" {
				t.Fatalf("shard %d episode %d: %s read back as %v, want %q", i, e.Index, column.Name, got, e.Ceres.TaskID)
			}
		}
		if _, err := page.LoadShard(ctx, s, shards[i]); err != nil {
			t.Fatalf("the session page's reader: %v", err)
		}
	}

	// merge carries the column's values and keeps the file per source.
	out := filepath.Join(root, "merged")
	if _, err := mergeVideo(ctx, Options{Sources: shards, Output: out}); err != nil {
		t.Fatal(err)
	}
	if codes := verifyCodes(t, out); len(codes) != 0 {
		t.Fatalf("merged: codes %v, want a sound dataset", codes)
	}
	merged := readDataset(t, out)
	for _, e := range merged.src.episodes {
		if got := column.Get(&e.Ceres); got != e.Ceres.TaskID {
			t.Fatalf("merged episode %d: %s = %v, want %q", e.Index, column.Name, got, e.Ceres.TaskID)
		}
	}
	for i := range shards {
		b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(layout.SourcePath(i, note))))
		if err != nil || len(b) == 0 {
			t.Fatalf("merged: source %d's %s not kept: %v", i, note, err)
		}
	}
}

// verifyCodes returns the codes of verify's quick check's findings of
// severity error and warning.
func verifyCodes(t *testing.T, dir string) []string {
	t.Helper()
	res, err := verify.Shard(context.Background(), dir, verify.Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, f := range res.Findings {
		if f.Severity == verify.SeverityError || f.Severity == verify.SeverityWarning {
			codes = append(codes, f.Code)
		}
	}
	return codes
}

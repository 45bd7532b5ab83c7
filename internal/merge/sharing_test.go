//go:build cgo

package merge

import (
	"context"
	"crypto/sha256"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/pqcolumns"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// A source is opened and quick-verified through one set of Parquet files:
// each of its Parquet files is opened (its footer parsed) once for both,
// whatever path spelling the shard reader and verify each build.
func TestSourceOpenAndVerifyShareParquetFiles(t *testing.T) {
	for _, name := range []string{"h264-a", "h264-crash"} {
		t.Run(name, func(t *testing.T) {
			dir := fixtureShard(t, name)
			var parquets int
			if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
					parquets++
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			files := pqcolumns.NewFiles(&pqcolumns.PagePool{})
			defer files.Close()
			// As Merge gives it: a path with a trailing separator.
			given := dir + string(filepath.Separator)
			s, err := openSource(context.Background(), given, files, true)
			if err != nil {
				t.Fatal(err)
			}
			opened := files.Opened()
			holds, why := sealHolds(context.Background(), given, newFileSums())
			if err := verifySource(context.Background(), s, false, holds, why, files, video.Files{}, slog.New(slog.DiscardHandler)); err != nil {
				t.Fatal(err)
			}
			if opened == 0 || files.Opened() != parquets {
				t.Errorf("opened %d Parquet files to read the source, %d after verifying it; the shard has %d, each to be opened once", opened, files.Opened(), parquets)
			}
		})
	}
}

// The writer's decoder stopped by a cancellation never leaves the writer
// waiting for a source it will not decode.
func TestDecodeAheadCancelledNeverBlocks(t *testing.T) {
	var sources []*source
	for _, name := range []string{"h264-a", "h264-crash", "h264-a", "h264-crash"} {
		s, err := openSource(context.Background(), fixtureShard(t, name), nil, true)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, s)
	}
	for round := range 40 {
		ctx, cancel := context.WithCancel(context.Background())
		m := &merger{sources: sources, pages: &pqcolumns.PagePool{}}
		d := m.decodeAhead(ctx)
		d.wait(0)
		d.done(0)
		if round%2 == 1 {
			time.Sleep(time.Millisecond) // let it decode the next one first
		}
		cancel()
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			for si := 1; si < len(sources); si++ {
				d.wait(si)
				d.done(si)
			}
			d.stop()
		}()
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the writer still waits for its decoder 10 s after a cancellation", round)
		}
	}
}

// Rows held from the sources' quick verify, all, some or none of them,
// make the same dataset, byte for byte: holding changes only when the rows
// are decoded. The merge's debug line says how much it held.
func TestHeldRowsChangeNothing(t *testing.T) {
	src := shards(t, "h264-a", "h264-crash", "h264-spec2", "h264-b")
	dir := t.TempDir()
	merge := func(name string, budget int64) (map[string][32]byte, int64) {
		t.Helper()
		var log strings.Builder
		out := filepath.Join(dir, name)
		_, err := mergeVideo(context.Background(), Options{Sources: src, Output: out, HeldRowsBytes: budget,
			Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		if err != nil {
			t.Fatalf("merge %s: %v", name, err)
		}
		m := regexp.MustCompile(`msg="merge: sources read".* rows_held_bytes=(\d+)`).FindStringSubmatch(log.String())
		if m == nil {
			t.Fatalf("merge %s: no rows_held_bytes in its debug log", name)
		}
		held, _ := strconv.ParseInt(m[1], 10, 64)
		return treeHashes(t, out), held
	}
	all, heldAll := merge("all", 0)
	none, heldNone := merge("none", -1)
	if heldAll == 0 || heldNone != 0 {
		t.Fatalf("held %d bytes by default and %d with none allowed", heldAll, heldNone)
	}
	// A budget for about half of them: the first sources' rows fit.
	some, heldSome := merge("some", heldAll/2)
	if heldSome == 0 || heldSome >= heldAll {
		t.Fatalf("held %d bytes of %d with a budget of half", heldSome, heldAll)
	}
	for name, got := range map[string]map[string][32]byte{"none": none, "some": some} {
		if !maps.Equal(got, all) {
			t.Errorf("the dataset with %s of the rows held differs from the one with all held", name)
		}
	}
}

// treeHashes hashes every file under dir by its relative path.
func treeHashes(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

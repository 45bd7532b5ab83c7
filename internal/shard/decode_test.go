package shard

import (
	"context"
	"reflect"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/pqcolumns"
)

// DecodeDataFiles decodes, through the dataset's Parquet files, exactly
// the data files a RowReader then reads: the reader opens none itself and
// reads the same rows as a reader of its own.
func TestDecodeDataFilesIsWhatRowReaderReads(t *testing.T) {
	t.Parallel()
	dir, ds, eps := severalDataFiles(t)
	files := map[DataLocation]bool{}
	for i := range eps {
		files[eps[i].dataFile()] = true
	}
	if len(files) < 2 {
		t.Fatalf("the fixture's %d episodes lie in %d data file(s), want several", len(eps), len(files))
	}
	shared := pqcolumns.NewFiles(&pqcolumns.PagePool{})
	defer shared.Close()
	ds.Parquet = shared
	if err := ds.DecodeDataFiles(context.Background(), eps); err != nil {
		t.Fatal(err)
	}
	if shared.Opened() != len(files) {
		t.Fatalf("decoded %d files, the episodes lie in %d", shared.Opened(), len(files))
	}
	own, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	sharedRows, ownRows := ds.NewRowReader(nil), own.NewRowReader(nil)
	defer sharedRows.Close()
	defer ownRows.Close()
	for i := range eps {
		got := NewEpisodeRows(ds.Info.DataFeatures(), int(eps[i].Length))
		want := NewEpisodeRows(ds.Info.DataFeatures(), int(eps[i].Length))
		if err := sharedRows.Read(context.Background(), &eps[i], got); err != nil {
			t.Fatal(err)
		}
		if err := ownRows.Read(context.Background(), &eps[i], want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("episode %d: rows through the decoded files differ", i)
		}
	}
	if shared.Opened() != len(files) {
		t.Errorf("the reader opened %d more files after they were decoded", shared.Opened()-len(files))
	}
}

// HoldDataFiles keeps the decoded columns past the Parquet files' close:
// a RowReader then opens nothing and reads the rows a reader of its own
// reads, also after the page pool served other files' reads; the held
// bytes are those of the columns; ReleaseDataFiles lets them go, and the
// reader reads through the files again.
func TestHoldDataFilesOutlivesTheFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, ds, eps := severalDataFiles(t)
	pages := &pqcolumns.PagePool{}
	shared := pqcolumns.NewFiles(pages)
	ds.Parquet = shared
	held, err := ds.HoldDataFiles(ctx, eps)
	if err != nil {
		t.Fatal(err)
	}
	var frames int64
	for _, e := range eps {
		frames += e.Length
	}
	// At least the int64 index column of every row.
	if held < 8*frames {
		t.Fatalf("held %d bytes for %d rows", held, frames)
	}
	if again, err := ds.HoldDataFiles(ctx, eps); err != nil || again != 0 {
		t.Fatalf("holding the same files again: %d more bytes, %v", again, err)
	}
	opened := shared.Opened()
	shared.Close()
	ds.Parquet = nil
	// Other reads take the pool's buffers, and would show in rows that
	// still pointed into them.
	other, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	other.Parquet = pqcolumns.NewFiles(pages)
	if err := other.DecodeDataFiles(ctx, eps); err != nil {
		t.Fatal(err)
	}
	other.Parquet.Close()

	counting := pqcolumns.NewFiles(pages)
	defer counting.Close()
	ds.Parquet = counting
	own, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	readAll := func(what string) {
		heldRows, ownRows := ds.NewRowReader(nil), own.NewRowReader(nil)
		defer heldRows.Close()
		defer ownRows.Close()
		for i := range eps {
			got := NewEpisodeRows(ds.Info.DataFeatures(), int(eps[i].Length))
			want := NewEpisodeRows(ds.Info.DataFeatures(), int(eps[i].Length))
			if err := heldRows.Read(ctx, &eps[i], got); err != nil {
				t.Fatal(err)
			}
			if err := ownRows.Read(ctx, &eps[i], want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: episode %d: rows differ from a reader's of its own", what, i)
			}
		}
	}
	readAll("held")
	if counting.Opened() != 0 {
		t.Errorf("the reader opened %d files; %d were held", counting.Opened(), opened)
	}
	ds.ReleaseDataFiles()
	readAll("released")
	if counting.Opened() != opened {
		t.Errorf("after the release the reader opened %d files, want the %d", counting.Opened(), opened)
	}
}

// severalDataFiles builds the fixture with a data file per episode and
// opens it.
func severalDataFiles(t *testing.T) (string, *Dataset, []Episode) {
	t.Helper()
	dir := t.TempDir()
	opts := fixtureOptions
	opts.DataFileSizeBytes = 1
	buildFixture(t, dir, opts)
	ds, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := ds.Episodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return dir, ds, eps
}

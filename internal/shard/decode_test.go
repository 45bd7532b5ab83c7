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
	dir := t.TempDir()
	opts := fixtureOptions
	opts.DataFileSizeBytes = 1 // a data file per episode: several files
	buildFixture(t, dir, opts)
	ds, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := ds.Episodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
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

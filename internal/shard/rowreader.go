package shard

import (
	"context"
	"fmt"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// RowReader reads episodes' rows back from a dataset's data files into an
// EpisodeRows (one ColumnData per data feature, Info.DataFeatures order).
// It holds the data file of the episode read last, so that reading the
// episodes in order opens each file once. Close releases it.
type RowReader struct {
	d          *Dataset
	features   []Feature
	tbl        *table
	key        DataLocation // ChunkIndex and FileIndex of tbl
	firstIndex int64
}

// NewRowReader returns a reader of the dataset's rows of features, data
// features in the order of the rows it fills (nil: Info.DataFeatures()).
func (d *Dataset) NewRowReader(features []Feature) *RowReader {
	if features == nil {
		features = d.Info.DataFeatures()
	}
	return &RowReader{d: d, features: features}
}

// dataFile is the data file that holds the episode's rows.
func (e *Episode) dataFile() DataLocation {
	return DataLocation{ChunkIndex: e.Data.ChunkIndex, FileIndex: e.Data.FileIndex}
}

// readDataFile reads every column of a data file, through d.Parquet, or
// hands out the columns HoldDataFiles kept of it.
func (d *Dataset) readDataFile(ctx context.Context, loc DataLocation) (*table, error) {
	if t := d.held[loc]; t != nil {
		return t.retain(), nil
	}
	return readTable(ctx, d.Parquet, d.Path(layout.DataPath(loc.ChunkIndex, loc.FileIndex)))
}

// dataFiles are the data files that hold eps' rows, each once, in the
// order the episodes come to them.
func dataFiles(eps []Episode) []DataLocation {
	var locs []DataLocation
	seen := map[DataLocation]bool{}
	for i := range eps {
		if loc := eps[i].dataFile(); !seen[loc] {
			seen[loc] = true
			locs = append(locs, loc)
		}
	}
	return locs
}

// HoldDataFiles decodes, through d.Parquet, the data files that hold eps'
// rows, and keeps their columns for the dataset's RowReaders after
// d.Parquet is closed, until ReleaseDataFiles. It returns the bytes the
// columns hold. A merge keeps, within a budget, the rows its quick verify
// of a source decoded anyway, instead of decoding them again when it
// writes them.
func (d *Dataset) HoldDataFiles(ctx context.Context, eps []Episode) (int64, error) {
	var n int64
	for _, loc := range dataFiles(eps) {
		if d.held[loc] != nil {
			continue
		}
		t, err := d.readDataFile(ctx, loc)
		if err != nil {
			d.ReleaseDataFiles()
			return 0, err
		}
		if d.held == nil {
			d.held = map[DataLocation]*table{}
		}
		d.held[loc] = t
		n += t.bytes()
	}
	return n, nil
}

// ReleaseDataFiles lets go of the columns HoldDataFiles kept.
func (d *Dataset) ReleaseDataFiles() {
	for loc, t := range d.held {
		t.release()
		delete(d.held, loc)
	}
}

// DecodeDataFiles decodes, through d.Parquet, the data files that hold
// eps' rows, as a RowReader reads them: a RowReader of the dataset then
// finds them decoded (a merge decodes its next source's rows while it
// writes the current one's). Without d.Parquet it only reads them.
func (d *Dataset) DecodeDataFiles(ctx context.Context, eps []Episode) error {
	for _, loc := range dataFiles(eps) {
		t, err := d.readDataFile(ctx, loc)
		if err != nil {
			return err
		}
		t.release()
	}
	return nil
}

// Read fills rows with episode e's rows, checking that the rows it finds
// are that episode's (episode_index and index at both ends).
func (r *RowReader) Read(ctx context.Context, e *Episode, rows *EpisodeRows) error {
	if key := e.dataFile(); r.tbl == nil || key != r.key {
		r.Close()
		t, err := r.d.readDataFile(ctx, key)
		if err != nil {
			return err
		}
		r.tbl, r.key = t, key
		idx, err := t.int64s("index")
		if err != nil {
			return err
		}
		if t.rows == 0 {
			return fmt.Errorf("%s: no rows", t.path)
		}
		r.firstIndex = idx.Value(0)
	}
	t := r.tbl
	lo := int(e.Data.FromIndex - r.firstIndex)
	hi := lo + int(e.Length)
	if err := checkEpisodeRows(t, e, lo, hi); err != nil {
		return err
	}
	rows.Len = int(e.Length)
	for ci, f := range r.features {
		col, ok := t.cols[f.Name]
		if !ok {
			return fmt.Errorf("%s: no column %s", t.path, f.Name)
		}
		if err := fillColumn(f, col, lo, hi, &rows.Columns[ci]); err != nil {
			return fmt.Errorf("%s episode %d: %w", t.path, e.Index, err)
		}
	}
	return nil
}

// Close releases the data file held; the reader may be used again.
func (r *RowReader) Close() {
	if r.tbl != nil {
		r.tbl.release()
		r.tbl = nil
	}
}

// checkEpisodeRows checks that rows [lo, hi) of a data file are episode e.
func checkEpisodeRows(t *table, e *Episode, lo, hi int) error {
	if lo < 0 || hi > t.rows {
		return fmt.Errorf("%s: episode %d rows [%d, %d) are not in the file's %d rows", t.path, e.Index, e.Data.FromIndex, e.Data.ToIndex, t.rows)
	}
	idx, err := t.int64s("index")
	if err != nil {
		return err
	}
	ep, err := t.int64s("episode_index")
	if err != nil {
		return err
	}
	for _, row := range []int{lo, hi - 1} {
		if ep.Value(row) != e.Index || idx.Value(row) != e.Data.FromIndex+int64(row-lo) {
			return fmt.Errorf("%s row %d: episode_index %d index %d, want episode %d index %d", t.path, row, ep.Value(row), idx.Value(row), e.Index, e.Data.FromIndex+int64(row-lo))
		}
	}
	return nil
}

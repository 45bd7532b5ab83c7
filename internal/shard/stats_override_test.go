package shard

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// An episode that brings its own statistics (a foreign merge source's, as
// its writer computed them) keeps them for its features; LeRobot's default
// columns are computed from where the episode lands, and the dataset's
// statistics aggregate what the episodes hold.
func TestEpisodeBringsItsStats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := NewBuilder(dir, fixtureFeatures, fixtureOptions)
	if err != nil {
		t.Fatal(err)
	}
	own := Stats{Min: []float64{-9, -9, -9}, Max: []float64{9, 9, 9}, Mean: []float64{1, 2, 3}, Std: []float64{4, 5, 6}, Count: 5}
	for q := range own.Quantiles {
		own.Quantiles[q] = []float64{float64(q) - 2, float64(q) - 2, float64(q) - 2}
	}
	batch := b.NewRows(16)
	var from float64
	for e, n := range fixtureEpisodeLens {
		fillFixtureBatch(batch, e, n)
		to := from + float64(n)/float64(fixtureOptions.FPS)
		meta := EpisodeMeta{
			Task:   "Pick the red cube",
			Videos: map[string]VideoSegment{"observation.images.front": {FromTimestamp: from, ToTimestamp: to, Stats: fixtureVideoStats(e)}},
			Ceres: layout.CeresEpisode{SessionID: "s", TaskID: fmt.Sprint(e), TaskLabel: "l", TaskType: "timed", Attempt: 1, SpecVersion: 1,
				SpecHash: strings.Repeat("ab", 32), RecordedSpecHash: strings.Repeat("ab", 32)},
		}
		if e == 1 {
			meta.Stats = map[string]Stats{"observation.state": own, "index": own}
		}
		if err := b.WriteEpisode(meta, batch); err != nil {
			t.Fatal(err)
		}
		from = to
	}
	if err := b.Finish(struct{}{}); err != nil {
		t.Fatal(err)
	}
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, stats, err := d.EpisodesWithStats(context.Background(), []Feature{fixtureFeatures[0], {Name: "index", Dtype: "int64", Shape: []int{1}}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(stats[1][0], own) {
		t.Errorf("episode 1 observation.state stats %+v, want its own %+v", stats[1][0], own)
	}
	if reflect.DeepEqual(stats[0][0], own) || stats[1][1].Count == own.Count {
		t.Errorf("stats brought by episode 1 reached episode 0's state or episode 1's index: %+v, %+v", stats[0][0], stats[1][1])
	}
}

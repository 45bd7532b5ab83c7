package shard

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// writeBringing writes the fixture's episodes, episode 1 bringing stats
// for observation.state and index, and returns the dataset's directory.
func writeBringing(t *testing.T, stats map[string]Stats) (string, error) {
	t.Helper()
	dir := t.TempDir()
	b, err := NewBuilder(dir, fixtureFeatures, fixtureOptions)
	if err != nil {
		t.Fatal(err)
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
			meta.Stats = stats
		}
		if err := b.WriteEpisode(meta, batch); err != nil {
			return "", err
		}
		from = to
	}
	if err := b.Finish(struct{}{}); err != nil {
		t.Fatal(err)
	}
	return dir, nil
}

// episodeStatsOf reads the stats of observation.state and index of every
// episode of dir.
func episodeStatsOf(t *testing.T, dir string) [][]Stats {
	t.Helper()
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, stats, err := d.EpisodesWithStats(context.Background(), []Feature{fixtureFeatures[0], {Name: "index", Dtype: "int64", Shape: []int{1}}})
	if err != nil {
		t.Fatal(err)
	}
	return stats
}

// An episode that brings its own statistics (a foreign merge source's, as
// its writer computed them) keeps them for its features while its rows
// bear them out (count, min, max, mean, std; quantiles, which writers
// estimate differently, within min and max); LeRobot's default columns
// are computed from where the episode lands, and the dataset's statistics
// aggregate what the episodes hold. Statistics the rows contradict are
// replaced by those the rows give.
func TestEpisodeBringsItsStats(t *testing.T) {
	t.Parallel()
	plain, err := writeBringing(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := episodeStatsOf(t, plain)[1][0]
	own := rows.clone()
	for q := range own.Quantiles {
		for i := range own.Quantiles[q] {
			own.Quantiles[q][i] = own.Min[i] + (own.Max[i]-own.Min[i])*float64(q)/8
		}
	}
	index := own.clone()
	index.Count = 99
	dir, err := writeBringing(t, map[string]Stats{"observation.state": own, "index": index})
	if err != nil {
		t.Fatal(err)
	}
	stats := episodeStatsOf(t, dir)
	if !reflect.DeepEqual(stats[1][0], own) {
		t.Errorf("episode 1 observation.state stats %+v, want its own %+v", stats[1][0], own)
	}
	if reflect.DeepEqual(stats[0][0], own) || stats[1][1].Count == index.Count {
		t.Errorf("stats brought by episode 1 reached episode 0's state or episode 1's index: %+v, %+v", stats[0][0], stats[1][1])
	}
	for _, tc := range []struct {
		name string
		edit func(s *Stats)
		text string
	}{
		{"mean", func(s *Stats) { s.Mean[1] += 0.5 }, "mean[1]"},
		{"count", func(s *Stats) { s.Count++ }, "count"},
		{"NaN", func(s *Stats) { s.Std[0] = math.NaN() }, "std[0]"},
		{"quantile beyond max", func(s *Stats) { s.Quantiles[4][2] = s.Max[2] + 1 }, "q99[2]"},
	} {
		bad := own.clone()
		tc.edit(&bad)
		dir, err := writeBringing(t, map[string]Stats{"observation.state": bad})
		if err != nil {
			t.Errorf("%s: %v, want the rows' statistics written instead", tc.name, err)
			continue
		}
		if got := episodeStatsOf(t, dir)[1][0]; !reflect.DeepEqual(got, rows) {
			t.Errorf("%s: episode 1 observation.state stats %+v, want the rows' %+v", tc.name, got, rows)
		}
	}
}

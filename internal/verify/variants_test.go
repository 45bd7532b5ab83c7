//go:build cgo

package verify

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/profile"
	"github.com/ceres-robotics/ceres-export/internal/synth"
	"github.com/ceres-robotics/ceres-export/internal/video"
	"github.com/ceres-robotics/ceres-export/profiles"
)

// mappedState is the --map observation.state=imu.accel,gripper.force,gripper.counter.
var mappedState = &profile.Profile{Schema: profile.Schema, Version: profile.Version, Features: []profile.Feature{{
	Name:   "observation.state",
	Fields: []profile.FieldRef{{Stream: "imu", Field: "accel"}, {Stream: "gripper", Field: "force"}, {Stream: "gripper", Field: "counter"}},
}}}

// TestExportVariants exports the fixture session (or one without camera)
// with other options and checks that verify finds those shards sound too,
// and still catches a changed value in them.
func TestExportVariants(t *testing.T) {
	fx := goodShard(t)
	noCamera := filepath.Join(t.TempDir(), "session")
	if _, err := synth.Write(context.Background(), noCamera, synth.Options{Seed: 11, TimeScale: 0.1}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		session string
		opts    export.Options
		check   func(t *testing.T, shard string)
		// mutate changes one held value; the journal comparison must catch it.
		feature string
	}{
		{
			name: "mapped features, several data files", session: fx.session,
			opts: export.Options{
				VideoFiles:        video.Files{},
				Profile:           mappedState,
				DataFileSizeBytes: 4096,
				Video:             export.VideoOptions{Codec: "h264"},
			},
			check: func(t *testing.T, shard string) {
				files, _ := filepath.Glob(filepath.Join(shard, "data/chunk-*/file-*.parquet"))
				if len(files) < 2 {
					t.Errorf("want several data files, have %d", len(files))
				}
			},
			feature: "observation.state",
		},
		{
			name: "synth profile: state and next-frame action", session: fx.session,
			opts:    export.Options{VideoFiles: video.Files{}, Profile: profiles.Synth(), Video: export.VideoOptions{Codec: "h264"}},
			feature: "action",
		},
		{
			name: "no camera", session: noCamera,
			check: func(t *testing.T, shard string) {
				if _, err := os.Stat(filepath.Join(shard, "videos")); err == nil {
					t.Errorf("a shard without camera has videos/")
				}
			},
			feature: "observation.imu.accel",
		},
		{
			name: "20 fps, no camera", session: noCamera,
			opts:    export.Options{VideoFiles: video.Files{}, FPS: 20},
			feature: "observation.imu.gyro",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			shard := filepath.Join(t.TempDir(), "shard")
			if _, err := export.Export(context.Background(), tc.session, shard, tc.opts); err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, shard)
			}
			res, err := shardVideo(context.Background(), shard, Options{Journal: tc.session})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Sound || len(res.Findings) != 0 {
				t.Fatalf("sound=%v, findings:\n%s", res.Sound, findingLines(res))
			}
			files, _ := filepath.Glob(filepath.Join(shard, "data/chunk-*/file-*.parquet"))
			last := files[len(files)-1]
			mutateParquet(t, last, func(m *mtable) {
				m.mapFixedFloat32(tc.feature, func(r, e int, v float32) float32 {
					if r == 2 && e == 0 {
						return v + 1
					}
					return v
				})
			})
			res, err = shardVideo(context.Background(), shard, Options{Journal: tc.session})
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(shard, last)
			found := false
			for _, f := range res.Findings {
				if f.Code == "journal.sensor-value" && f.File == filepath.ToSlash(rel) {
					found = true
				}
			}
			if !found {
				t.Errorf("no journal.sensor-value finding in %s; findings:\n%s", rel, findingLines(res))
			}
		})
	}
}

//go:build cgo

package export

import (
	"context"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/synth"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// testVideo is FFmpeg (video.Files), which a cgo build links.
func testVideo() Video { return video.Files{} }

// writeSession synthesises a session into dir, camera files included.
func writeSession(tb testing.TB, dir string, o synth.Options) {
	tb.Helper()
	if _, err := synth.Write(context.Background(), dir, o); err != nil {
		tb.Fatal(err)
	}
}

// followWithVideo is Follow with FFmpeg unless opts names its own Video.
func followWithVideo(ctx context.Context, sessionDir, shardDir string, opts Options, fo FollowOptions) (*Report, error) {
	if opts.VideoFiles == nil {
		opts.VideoFiles = testVideo()
	}
	return Follow(ctx, sessionDir, shardDir, opts, fo)
}

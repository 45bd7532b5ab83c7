// Package synth writes realistic synthetic CERES sessions: a journal driven
// by a task specification, with sensor streams at nominal rates with jitter,
// camera files encoded the way browsers record them, retries, annotations and
// optional faults. Every value is traceable: camera frames carry their source
// frame number in a code band (video.ReadCode), and sensor values carry the
// index of the sample they came from, so tests can prove which source frame
// and sample ended up in each exported row.
//
// The session itself (journal, sensor streams, camera plan) is package
// session's, which compiles without FFmpeg; this package encodes its
// camera files. A session is deterministic for a given seed and options.
package synth

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ceres-robotics/ceres-export/internal/synth/session"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// Options, Faults and Result are the session's (package session).
type (
	Options = session.Options
	Faults  = session.Faults
	Result  = session.Result
)

// ExampleSpec is the default specification of a synthetic session.
const ExampleSpec = session.ExampleSpec

// Write synthesises a session into dir, which must not exist or be empty:
// its journal, then its camera files.
func Write(ctx context.Context, dir string, opts Options) (*Result, error) {
	res, _, err := write(ctx, dir, opts)
	return res, err
}

func write(ctx context.Context, dir string, opts Options) (*Result, []session.CameraFile, error) {
	res, cams, err := session.Write(dir, opts)
	if err != nil {
		return nil, nil, err
	}
	if err := writeCameras(ctx, dir, cams, opts, res); err != nil {
		return nil, nil, err
	}
	return res, cams, nil
}

// writeCameras encodes every planned camera file.
func writeCameras(ctx context.Context, dir string, cams []session.CameraFile, opts Options, res *Result) error {
	for _, cf := range cams {
		path := filepath.Join(dir, filepath.FromSlash(cf.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		so := video.SynthOptions{
			Codec:      video.SynthCodec(opts.CameraCodec),
			Indexed:    opts.IndexedCameras,
			Width:      opts.Width,
			Height:     opts.Height,
			PTS:        cf.PTS,
			FirstCode:  cf.FirstCode,
			NominalFPS: opts.NominalFPS(),
			Scene:      video.SynthScene(opts.CameraScene),
			FullRange:  opts.CameraFullRange,
		}
		r, err := video.WriteSynthetic(ctx, path, so)
		if err != nil {
			return fmt.Errorf("synth: camera file %s: %w", cf.Path, err)
		}
		res.Media = append(res.Media, cf.Path)
		res.Frames[cf.Stream] += len(r.PTS)
		if cf.CutBytes {
			// Cut off the last third: a crash leaves a file whose tail never
			// reached the disk.
			cut := r.Bytes / 3
			if err := os.Truncate(path, r.Bytes-cut); err != nil {
				return fmt.Errorf("synth: cutting camera file %s: %w", cf.Path, err)
			}
			res.Truncated[cf.Path] = cut
			res.Faults = append(res.Faults, fmt.Sprintf("camera file %s cut short by %d bytes", cf.Path, cut))
		}
	}
	return nil
}

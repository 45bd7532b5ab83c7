package synth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/output"
	"github.com/ceres-robotics/ceres-export/internal/synth/session"
)

// WriteLive writes the session Write writes, byte for byte, the way a
// recorder does while it records: journal records appended as their time
// passes (a batch about every half second of the session, fsynced at every
// attempt boundary and at least once a second, as the journal writer
// promises), and camera files growing as their frames are recorded. speed
// is how many seconds of the session pass per second of the wall clock (1:
// real time). A file that streams (the default: WebM as MediaRecorder
// writes it, H.264 in a fragmented MP4) grows in proportion to the time it
// covers; a file that can only be read whole (IndexedCameras': WebM with
// Cues, MP4 with its moov after the media) appears at its last frame's
// time. Faults land as a recorder's would: the torn tail
// and the cut camera file at the end, the corrupt byte (a bad disk) after
// everything was written.
//
// The pictures take encoding, which a recorder does as it records, so the
// whole session is made first in a staging directory beside dir (under
// dir's lock, output.Scratch) and then replayed into dir at its pace. A
// cancelled ctx stops the replay.
func WriteLive(ctx context.Context, dir string, opts Options, speed float64) (*Result, error) {
	if speed <= 0 || math.IsInf(speed, 0) || math.IsNaN(speed) {
		return nil, fmt.Errorf("synth: speed %v: want a positive number (1 is real time)", speed)
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(dir)), 0o755); err != nil {
		return nil, err
	}
	// The whole session is made in a staging directory of dir, under dir's
	// lock: a killed run's is removed by the next run into dir.
	scratch, err := output.Scratch(dir)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	defer func() { _ = scratch.Abort() }()
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("synth: %s is not empty", dir)
	}
	whole := filepath.Join(scratch.Dir(), "session")
	res, cams, err := write(ctx, whole, opts)
	if err != nil {
		return nil, err
	}
	// WebM as MediaRecorder writes it and fragmented MP4 grow by appending;
	// a file with its index at the end can only be read whole.
	streams := !opts.IndexedCameras
	grow := func(t int64) error {
		for _, cf := range cams {
			if err := growCamera(filepath.Join(whole, filepath.FromSlash(cf.Path)), filepath.Join(dir, filepath.FromSlash(cf.Path)), cf, t, streams); err != nil {
				return err
			}
		}
		return nil
	}
	start := time.Now()
	pace := func(t int64) error {
		wait := time.Until(start.Add(time.Duration(float64(t) / speed)))
		if wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				return ctx.Err()
			case <-timer.C:
			}
		}
		return grow(t)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if _, _, err := session.WritePaced(dir, opts, pace); err != nil {
		return nil, err
	}
	if err := grow(math.MaxInt64); err != nil {
		return nil, err
	}
	res.Dir = dir
	return res, nil
}

// growCamera appends to dst the bytes of src (the camera file whole) that
// the recording has written by session time t.
func growCamera(src, dst string, cf session.CameraFile, t int64, streams bool) error {
	if t < cf.StartT {
		return nil
	}
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	size := st.Size()
	end := cf.StartT + cf.PTS[len(cf.PTS)-1]
	want := size
	switch {
	case t >= end:
	case streams:
		want = int64(float64(size) * float64(t-cf.StartT) / float64(end-cf.StartT))
	default:
		return nil // readable only whole: it appears at its end
	}
	have := int64(0)
	if st, err := os.Stat(dst); err == nil {
		have = st.Size()
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if want <= have {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, io.NewSectionReader(in, have, want-have))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("synth: growing camera file %s: %w", cf.Path, err)
	}
	return nil
}

package report

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"html/template"
	"image"
	"image/jpeg"
	"path/filepath"
	"slices"

	xdraw "golang.org/x/image/draw"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// thumb is one frame of an exported episode, as a data URI.
type thumb struct {
	URI     template.URL
	Caption string // "first", "middle", "last"
	Frame   int    // frame index in the episode
}

// thumbSize picks the thumbnails' width and JPEG quality from how many
// there are, so that a long session's page stays small: about 3 kB each up
// to a few hundred, about 1.5 kB beyond.
func thumbSize(count int) (width, quality int) {
	switch {
	case count <= 120:
		return 128, 72
	case count <= 600:
		return 112, 62
	}
	return 96, 55
}

// slotFrames are the frames a strip shows: first, middle and last.
func slotFrames(frames int) []int {
	if frames <= 0 {
		return nil
	}
	out := []int{0}
	if frames > 2 {
		out = append(out, (frames-1)/2)
	}
	if frames > 1 {
		out = append(out, frames-1)
	}
	return out
}

var slotNames = map[int]string{0: "first", 1: "middle", 2: "last"}

// thumbnails decodes, from the exported mp4 files of one camera in
// shardDir, the first, middle and last frame of every episode, and returns
// them per episode. Only the wanted frames are converted; each file is
// decoded once.
func thumbnails(ctx context.Context, shardDir, feature string, res video.CameraResult, width, quality int) ([][]thumb, error) {
	type want struct{ episode, slot, frame int }
	type fileKey struct{ chunk, file int }
	byFile := map[fileKey]map[int][]want{} // file → frame index in file → wants
	out := make([][]thumb, len(res.Episodes))
	for i, er := range res.Episodes {
		slots := slotFrames(er.Frames)
		out[i] = make([]thumb, len(slots))
		k := fileKey{er.Chunk, er.File}
		if byFile[k] == nil {
			byFile[k] = map[int][]want{}
		}
		for s, f := range slots {
			name := slotNames[s]
			if len(slots) == 2 && s == 1 {
				name = "last"
			}
			out[i][s] = thumb{Caption: name, Frame: f}
			byFile[k][er.FirstFrame+f] = append(byFile[k][er.FirstFrame+f], want{i, s, f})
		}
	}
	keys := make([]fileKey, 0, len(byFile))
	for k := range byFile {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b fileKey) int {
		if a.chunk != b.chunk {
			return a.chunk - b.chunk
		}
		return a.file - b.file
	})
	for _, k := range keys {
		wants := byFile[k]
		last := 0
		for f := range wants {
			last = max(last, f)
		}
		path := filepath.Join(shardDir, filepath.FromSlash(lerobot.VideoPath(feature, k.chunk, k.file)))
		found := 0
		errStop := fmt.Errorf("done")
		err := video.DecodeEach(ctx, path, func(df video.DecodedFrame) error {
			ws, ok := wants[df.Index]
			if ok {
				img, err := df.RGBA()
				if err != nil {
					return err
				}
				uri, err := jpegURI(img, width, quality)
				if err != nil {
					return fmt.Errorf("%s frame %d: %w", path, df.Index, err)
				}
				for _, w := range ws {
					out[w.episode][w.slot].URI = uri
				}
				found++
			}
			if df.Index >= last {
				return errStop
			}
			return nil
		})
		if err != nil && err != errStop {
			return nil, fmt.Errorf("report: thumbnails: %w", err)
		}
		if found != len(wants) {
			return nil, fmt.Errorf("report: thumbnails: %s holds %d of the %d frames the episodes name", path, found, len(wants))
		}
	}
	return out, nil
}

// jpegURI scales img to width (keeping its aspect) and encodes it as a
// JPEG data URI.
func jpegURI(img image.Image, width, quality int) (template.URL, error) {
	b := img.Bounds()
	h := max(1, b.Dy()*width/max(1, b.Dx()))
	small := image.NewRGBA(image.Rect(0, 0, width, h))
	xdraw.CatmullRom.Scale(small, small.Bounds(), img, b, xdraw.Src, nil)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, small, &jpeg.Options{Quality: quality}); err != nil {
		return "", err
	}
	return template.URL("data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())), nil // #nosec: our own bytes
}

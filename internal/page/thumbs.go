package page

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"html/template"
	"image"
	"image/draw"
	"image/jpeg"
	"path/filepath"
	"slices"
	"strings"

	xdraw "golang.org/x/image/draw"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// strip is the first, middle and last frame of one episode of one
// camera, side by side in one JPEG (one image, one set of JPEG tables,
// instead of three), as a data URI.
type strip struct {
	URI           template.URL
	Width, Height int   // of one frame in the strip
	Frames        []int // frame index in the episode of each slot
	Captions      []string

	imgs []*image.RGBA // scaled frames until the strip is encoded
}

// Total is the strip's width in pixels.
func (s strip) Total() int { return len(s.Frames)*(s.Width+stripGap) - stripGap }

// Slot is the width of one frame and its gap, for the frame labels.
func (s strip) Slot() int { return s.Width + stripGap }

// Alt describes the strip for screen readers and tests.
func (s strip) Alt() string {
	var parts []string
	for i, f := range s.Frames {
		parts = append(parts, fmt.Sprintf("%s frame %d", s.Captions[i], f))
	}
	return strings.Join(parts, ", ")
}

// stripGap is the white gap between the frames of a strip, in pixels.
const stripGap = 2

// thumbSize picks the thumbnails' width and JPEG quality from how many
// frames the page shows, so that a long session's page stays small (a
// one-hour session's 1320 frames weigh 1.8 MiB at 80 px, docs/reports.md).
func thumbSize(count int) (width, quality int) {
	switch {
	case count <= 120:
		return 128, 72
	case count <= 600:
		return 112, 62
	case count <= 1000:
		return 96, 55
	}
	return 80, 50
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
// one strip per episode. Only the wanted frames are decoded (each from the
// key frame before it) and converted.
func thumbnails(ctx context.Context, shardDir, feature string, res video.CameraResult, width, quality int) ([]strip, error) {
	type want struct{ episode, slot int }
	type fileKey struct{ chunk, file int }
	byFile := map[fileKey]map[int][]want{} // file → frame index in file → wants
	out := make([]strip, len(res.Episodes))
	// missing counts each strip's frames not yet decoded: a strip is
	// encoded as soon as it is whole, so that only the strips being filled
	// hold pictures, not a whole session's (a one-hour session's 1,320
	// scaled frames would otherwise stay live until the last file is read).
	missing := make([]int, len(res.Episodes))
	for i, er := range res.Episodes {
		slots := slotFrames(er.Frames)
		out[i] = strip{Frames: slots, imgs: make([]*image.RGBA, len(slots))}
		missing[i] = len(slots)
		k := fileKey{er.Chunk, er.File}
		if byFile[k] == nil {
			byFile[k] = map[int][]want{}
		}
		for s, f := range slots {
			name := slotNames[s]
			if len(slots) == 2 && s == 1 {
				name = "last"
			}
			out[i].Captions = append(out[i].Captions, name)
			byFile[k][er.FirstFrame+f] = append(byFile[k][er.FirstFrame+f], want{i, s})
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
	var sc scaler
	for i := range out {
		if missing[i] == 0 { // an episode without frames: nothing to decode
			if err := out[i].encode(quality); err != nil {
				return nil, fmt.Errorf("page: thumbnails: episode %d: %w", i, err)
			}
		}
	}
	for _, k := range keys {
		wants := byFile[k]
		frames := make([]int, 0, len(wants))
		for f := range wants {
			frames = append(frames, f)
		}
		slices.Sort(frames)
		path := filepath.Join(shardDir, filepath.FromSlash(layout.VideoPath(feature, k.chunk, k.file)))
		// Only the wanted frames are decoded, each from the key frame
		// before it: a long session's page shows a few hundred of its
		// hundred thousand frames.
		err := video.DecodeFrames(ctx, path, frames, func(df video.DecodedFrame) error {
			var small *image.RGBA
			if df.Frame.Width() > width {
				var err error
				if small, err = df.Thumbnail(width); err != nil {
					return err
				}
			} else {
				img, err := df.RGBA()
				if err != nil {
					return err
				}
				small = sc.scaled(img, width)
			}
			for _, w := range wants[df.Index] {
				out[w.episode].imgs[w.slot] = small
				if missing[w.episode]--; missing[w.episode] == 0 {
					if err := out[w.episode].encode(quality); err != nil {
						return fmt.Errorf("episode %d: %w", w.episode, err)
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("page: thumbnails: %w", err)
		}
	}
	return out, nil
}

// encode lays the strip's frames side by side and encodes them as one
// JPEG data URI.
func (s *strip) encode(quality int) error {
	if len(s.imgs) == 0 {
		return nil
	}
	b := s.imgs[0].Bounds()
	s.Width, s.Height = b.Dx(), b.Dy()
	all := image.NewRGBA(image.Rect(0, 0, len(s.imgs)*(s.Width+stripGap)-stripGap, s.Height))
	draw.Draw(all, all.Bounds(), image.White, image.Point{}, draw.Src)
	for i, img := range s.imgs {
		at := image.Rect(i*(s.Width+stripGap), 0, i*(s.Width+stripGap)+s.Width, s.Height)
		draw.Draw(all, at, img, img.Bounds().Min, draw.Src)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, all, &jpeg.Options{Quality: quality}); err != nil {
		return err
	}
	s.URI = template.URL("data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())) // #nosec: our own bytes
	s.imgs = nil
	return nil
}

// scaler scales a camera's frames, keeping the Catmull-Rom weights and
// working buffer of the last size it scaled: CatmullRom.Scale makes them
// anew for every frame (a frame's worth of float64s each time), which
// xdraw.Kernel.NewScaler avoids with the same arithmetic.
type scaler struct {
	sw, sh, dw, dh int
	s              xdraw.Scaler
}

// scaled returns img scaled to width pixels, keeping its aspect.
func (sc *scaler) scaled(img image.Image, width int) *image.RGBA {
	b := img.Bounds()
	h := max(1, b.Dy()*width/max(1, b.Dx()))
	if sc.s == nil || sc.sw != b.Dx() || sc.sh != b.Dy() || sc.dw != width || sc.dh != h {
		sc.sw, sc.sh, sc.dw, sc.dh = b.Dx(), b.Dy(), width, h
		sc.s = xdraw.CatmullRom.NewScaler(width, h, b.Dx(), b.Dy())
	}
	small := image.NewRGBA(image.Rect(0, 0, width, h))
	sc.s.Scale(small, small.Bounds(), img, b, xdraw.Src, nil)
	return small
}

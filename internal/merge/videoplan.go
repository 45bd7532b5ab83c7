package merge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// videoPlan says, for one video feature, which source files go into which
// file of the merged dataset, decided before anything is copied so that the
// rows can be written while the video is.
type videoPlan struct {
	key   string
	files []*plannedFile
	place map[placeKey]placement
}

// placeKey names a source video file: source position, chunk, file.
type placeKey struct{ source, chunk, file int }

// placement is where a source file's frames start in the merged dataset.
type placement struct{ chunk, file, firstFrame int }

type plannedFile struct {
	chunk, file int
	rel         string
	// keep is a file of the dataset appended to, carried over unchanged
	// (hard-linked, or copied where links are not possible).
	keep   string
	parts  []plannedPart
	frames int
}

type plannedPart struct {
	label  string // "<report source index>:<relative path>"
	path   string
	frames int
}

// sourceFile is one video file of a source and the frames its episodes use.
type sourceFile struct {
	chunk, file int
	rel         string
	frames      int
}

// sourceVideoFiles lists a source's files of feature key in (chunk, file)
// order with their frame counts, and checks that the episodes in each file
// tile it from frame 0 without gaps or overlaps.
func sourceVideoFiles(s *source, key string) ([]sourceFile, error) {
	type span struct{ first, n int }
	spans := map[[2]int][]span{}
	for i := range s.episodes {
		e := &s.episodes[i]
		vp := e.Videos[key]
		k := [2]int{vp.ChunkIndex, vp.FileIndex}
		spans[k] = append(spans[k], span{e.firstFrame[key], int(e.Length)})
	}
	keys := make([][2]int, 0, len(spans))
	for k := range spans {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	var out []sourceFile
	for _, k := range keys {
		rel := layout.VideoPath(key, k[0], k[1])
		next := 0
		for _, sp := range spans[k] {
			if sp.first != next {
				return nil, fmt.Errorf("%s: %s: an episode starts at frame %d, want %d (episodes must tile the file in order)", s.dir, rel, sp.first, next)
			}
			next += sp.n
		}
		out = append(out, sourceFile{chunk: k[0], file: k[1], rel: rel, frames: next})
	}
	return out, nil
}

// planVideos plans every video feature. Files are joined in source order
// and a new one starts, as LeRobot's merge does, when the joined size plus
// the next source file's would reach the limit, and also when the next
// file's stream cannot continue the current one (another codec
// configuration) or with NoConcat. The dataset appended to keeps its files.
func (m *merger) planVideos(features []shard.Feature) ([]*videoPlan, error) {
	limit := int64(m.opts.VideoFileSizeMB) * 1024 * 1024
	if m.opts.VideoFileSizeBytes > 0 {
		limit = m.opts.VideoFileSizeBytes
	}
	var plans []*videoPlan
	for _, f := range features {
		if f.Dtype != lerobot.Video {
			continue
		}
		p := &videoPlan{key: f.Name, place: map[placeKey]placement{}}
		var cur *plannedFile
		var curSize int64
		var curSig video.StreamSignature
		chunk, file, started := 0, 0, false
		step := func() {
			if started {
				if file == m.opts.ChunksSize-1 {
					chunk, file = chunk+1, 0
				} else {
					file++
				}
			}
			started = true
		}
		for si, s := range m.sources {
			files, err := sourceVideoFiles(s, f.Name)
			if err != nil {
				return nil, err
			}
			for _, sf := range files {
				path := s.path(sf.rel)
				if m.into && si == 0 {
					// Carried over at the same index; later sources start after it.
					kf := &plannedFile{chunk: sf.chunk, file: sf.file, rel: sf.rel, keep: path, frames: sf.frames}
					p.files = append(p.files, kf)
					p.place[placeKey{si, sf.chunk, sf.file}] = placement{sf.chunk, sf.file, 0}
					if !started || sf.chunk > chunk || (sf.chunk == chunk && sf.file > file) {
						chunk, file, started = sf.chunk, sf.file, true
					}
					cur = nil
					continue
				}
				st, err := os.Stat(path)
				if err != nil {
					return nil, fmt.Errorf("source %w", err)
				}
				sig, err := video.ReadStreamSignature(path)
				if err != nil {
					return nil, err
				}
				if cur == nil || m.opts.NoConcat || curSig.Differs(sig) != "" || curSize+st.Size() >= limit {
					step()
					cur = &plannedFile{chunk: chunk, file: file, rel: layout.VideoPath(f.Name, chunk, file)}
					p.files = append(p.files, cur)
					curSize, curSig = 0, sig
				}
				p.place[placeKey{si, sf.chunk, sf.file}] = placement{cur.chunk, cur.file, cur.frames}
				cur.parts = append(cur.parts, plannedPart{label: fmt.Sprintf("%d:%s", m.reportIndex[si], sf.rel), path: path, frames: sf.frames})
				cur.frames += sf.frames
				curSize += st.Size()
			}
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// segment is where episode e of source si lies in the merged files.
func (p *videoPlan) segment(si int, e *sourceEpisode, fps int) (shard.VideoSegment, error) {
	vp := e.Videos[p.key]
	pl, ok := p.place[placeKey{si, vp.ChunkIndex, vp.FileIndex}]
	if !ok {
		return shard.VideoSegment{}, fmt.Errorf("merge: episode %d of source %d: video %s file (%d, %d) not planned", e.Index, si, p.key, vp.ChunkIndex, vp.FileIndex)
	}
	first := pl.firstFrame + e.firstFrame[p.key]
	return shard.VideoSegment{
		ChunkIndex: pl.chunk, FileIndex: pl.file,
		FromTimestamp: float64(first) / float64(fps),
		ToTimestamp:   float64(first+int(e.Length)) / float64(fps),
		Stats:         vp.Stats,
	}, nil
}

// execute writes the planned files under dir.
func (p *videoPlan) execute(ctx context.Context, dir string, fps int) error {
	for _, f := range p.files {
		dst := filepath.Join(dir, filepath.FromSlash(f.rel))
		if f.keep != "" {
			if err := linkOrCopy(f.keep, dst); err != nil {
				return err
			}
			continue
		}
		j, err := video.NewJoiner(dst, fps, f.frames)
		if err != nil {
			return err
		}
		for _, part := range f.parts {
			got, err := j.Append(ctx, part.path)
			if err == nil && got.Frames != part.frames {
				err = fmt.Errorf("merge: %s holds %d frames, its episodes %d", part.path, got.Frames, part.frames)
			}
			if err != nil {
				j.Abort()
				return err
			}
		}
		if err := j.Close(); err != nil {
			return err
		}
	}
	return nil
}

// report describes the plan's files for the merge report.
func (p *videoPlan) report() VideoReport {
	r := VideoReport{Joined: map[string][]string{}}
	for _, f := range p.files {
		r.Files = append(r.Files, f.rel)
		if f.keep != "" {
			r.Joined[f.rel] = []string{"kept"}
			continue
		}
		for _, part := range f.parts {
			r.Joined[f.rel] = append(r.Joined[f.rel], part.label)
		}
	}
	return r
}

// linkOrCopy makes dst a hard link of src, or a copy where the file system
// cannot link. Nothing ever writes into a file of a dataset, so sharing
// the inode with the dataset being replaced is safe.
func linkOrCopy(src, dst string) error {
	// link(2) does not follow a symbolic link: it would link the link,
	// which may point out of the dataset.
	if err := input.CheckEntry(src); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := input.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errors.Join(fmt.Errorf("copy %s: %w", src, err), os.Remove(dst))
	}
	return nil
}

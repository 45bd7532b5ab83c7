package merge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/media"
	"github.com/ceres-robotics/ceres-export/internal/output"
	"github.com/ceres-robotics/ceres-export/internal/shard"
)

// videoPlan says, for one video feature, which source files go into which
// file of the merged dataset, decided before anything is copied so that the
// rows can be written while the video is.
type videoPlan struct {
	key   string
	files []*plannedFile
	place map[placeKey][]placement
}

// placeKey names a source video file: source position, chunk, file.
type placeKey struct{ source, chunk, file int }

// placement is where frames [from, from+frames) of a source file lie in
// the merged dataset: from frame firstFrame of file (chunk, file). A
// shard's file has one; a merged source's file one per part it was joined
// from, since its parts may go to different files.
type placement struct{ from, frames, chunk, file, firstFrame int }

type plannedFile struct {
	chunk, file int
	rel         string
	// keep is a file of the dataset appended to, carried over unchanged
	// (hard-linked, or copied where links are not possible); keptParts are
	// its parts as that dataset's report lists them.
	keep      string
	keptParts []PartReport
	parts     []plannedPart
	frames    int
}

// plannedPart is frames [from, from+frames) of the file at path: a whole
// shard's file, or one part of a merged source's joined file. bytes is the
// size of the shard file the part was first joined from: the size the
// plan's file limit counts, whatever it was joined into since, so that a
// merge of merged datasets plans the files a merge of their shards does.
type plannedPart struct {
	label        string // "<report source index>:<shard-relative path>"
	path         string
	from, frames int
	bytes        int64
}

// sourceFile is one video file of a source and the frames its episodes use.
type sourceFile struct {
	chunk, file int
	rel         string
	frames      int
	// starts are the frames its episodes start at, in order.
	starts []int
}

// sourceVideoFiles lists a source's files of feature key in (chunk, file)
// order with their frame counts, and checks that the episodes in each file
// tile it from frame 0 without gaps or overlaps.
func sourceVideoFiles(s *source, key string) ([]sourceFile, error) {
	if s.kept != nil {
		return s.kept.videos[key], nil
	}
	if s.released {
		for _, kf := range s.videoFiles {
			if kf.key == key {
				return kf.files, nil
			}
		}
		return nil, nil
	}
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
		var starts []int
		for _, sp := range spans[k] {
			if sp.first != next {
				return nil, fmt.Errorf("%s: %s: an episode starts at frame %d, want %d (episodes must tile the file in order)", s.dir, rel, sp.first, next)
			}
			starts = append(starts, next)
			next += sp.n
		}
		out = append(out, sourceFile{chunk: k[0], file: k[1], rel: rel, frames: next, starts: starts})
	}
	return out, nil
}

// planVideos plans every video feature. Files are joined in source order
// and a new one starts, as LeRobot's merge does, when the joined size plus
// the next source file's would reach the limit, and also when the next
// file's stream cannot continue the current one (another codec
// configuration) or with NoConcat. A merged source is planned part by
// part (the shard files its files were joined from, with their sizes, as
// its report lists them), so that merging merged datasets writes the files
// a merge of all their shards in the same order writes. The dataset
// appended to keeps its files.
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
		p := &videoPlan{key: f.Name, place: map[placeKey][]placement{}}
		var cur *plannedFile
		var curSize int64
		var curSig media.StreamSignature
		chunk, file, started := 0, 0, false
		step := func() {
			if started {
				chunk, file = lerobot.NextChunkFile(chunk, file, m.opts.ChunksSize)
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
				k := placeKey{si, sf.chunk, sf.file}
				if m.into && si == 0 {
					// Carried over at the same index; later sources start after it.
					kf := &plannedFile{chunk: sf.chunk, file: sf.file, rel: sf.rel, keep: path, frames: sf.frames,
						keptParts: s.merged.Videos[f.Name].Parts[sf.rel]}
					p.files = append(p.files, kf)
					p.place[k] = []placement{{0, sf.frames, sf.chunk, sf.file, 0}}
					if !started || sf.chunk > chunk || (sf.chunk == chunk && sf.file > file) {
						chunk, file, started = sf.chunk, sf.file, true
					}
					cur = nil
					continue
				}
				parts, err := m.sourceParts(si, f.Name, sf)
				if err != nil {
					return nil, err
				}
				sig, err := m.opts.Video.StreamSignature(path)
				if err != nil {
					return nil, fmt.Errorf("%w: %s: not a video stream the merge can copy: %w", ErrUnsound, path, err)
				}
				if err := streamMatchesInfo(s, f.Name, path, sig); err != nil {
					return nil, err
				}
				for _, part := range parts {
					if cur == nil || m.opts.NoConcat || curSig.Differs(sig) != "" || curSize+part.bytes >= limit {
						step()
						cur = &plannedFile{chunk: chunk, file: file, rel: layout.VideoPath(f.Name, chunk, file)}
						p.files = append(p.files, cur)
						curSize, curSig = 0, sig
					}
					p.place[k] = append(p.place[k], placement{part.from, part.frames, cur.chunk, cur.file, cur.frames})
					cur.parts = append(cur.parts, part)
					cur.frames += part.frames
					curSize += part.bytes
				}
			}
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// streamMatchesInfo checks a source file's stream against what its
// feature's info declares (codec, size): a dataset mixing codecs or sizes
// in one feature is what a merge must never write. A source whose seal
// does not hold was also verified in full, which checks every field of
// info against every file; this check holds for every source, its header
// being read anyway.
func streamMatchesInfo(s *source, key, path string, sig media.StreamSignature) error {
	for _, f := range s.features {
		if f.Name != key {
			continue
		}
		declared := func(k string) any { v, _ := f.Info.Get(k); return v }
		num := func(k string) float64 {
			switch v := declared(k).(type) {
			case float64:
				return v
			case int64:
				return float64(v)
			case int:
				return float64(v)
			}
			return -1
		}
		for _, c := range []struct {
			field string
			bad   bool
			has   any
		}{
			{"video.codec", declared("video.codec") != sig.Codec, sig.Codec},
			{"video.width", num("video.width") != float64(sig.Width), sig.Width},
			{"video.height", num("video.height") != float64(sig.Height), sig.Height},
		} {
			if c.bad {
				return fmt.Errorf("%w: %s: features[%q].info[%q] is %v, but %s has %v", ErrUnsound,
					s.path(layout.InfoPath), key, c.field, declared(c.field), path, c.has)
			}
		}
	}
	return nil
}

// sourceParts are the parts of source si's file sf of feature key, in
// order: the whole file for a shard; for a merged source the parts its
// report lists for the file, relabelled with their place among this
// merge's sources (a report without parts, or whose parts do not tile the
// file, makes the file one part).
func (m *merger) sourceParts(si int, key string, sf sourceFile) ([]plannedPart, error) {
	s := m.sources[si]
	path := s.path(sf.rel)
	if s.isMerged() {
		listed := s.merged.Videos[key].Parts[sf.rel]
		var parts []plannedPart
		from := 0
		// A part is whole episodes: a merge splits files between them only.
		bounds := map[int]bool{sf.frames: true}
		for _, f := range sf.starts {
			bounds[f] = true
		}
		for i, pr := range listed {
			where := fmt.Sprintf("%s: videos.%s.parts[%s][%d]", s.path(layout.MergeReportPath), key, sf.rel, i)
			idx, rel, ok := strings.Cut(pr.Part, ":")
			n, err := strconv.Atoi(idx)
			if !ok || err != nil || n < 0 || pr.Frames <= 0 || pr.Bytes <= 0 {
				return nil, fmt.Errorf("%w: %s: part %q, %d frames, %d bytes: want \"<source index>:<path>\" with frames and bytes", ErrUsage, where, pr.Part, pr.Frames, pr.Bytes)
			}
			if !bounds[from] || !bounds[from+pr.Frames] {
				return nil, fmt.Errorf("%w: %s: part %q holds frames [%d, %d) of %s by the report's frame counts, but that file's episodes (%s) start at frames %v and end at %d: the report's parts disagree with its episodes",
					ErrUsage, where, pr.Part, from, from+pr.Frames, sf.rel, layout.EpisodesDir, sf.starts, sf.frames)
			}
			parts = append(parts, plannedPart{label: fmt.Sprintf("%d:%s", m.reportIndex[si]+n, rel), path: path, from: from, frames: pr.Frames, bytes: pr.Bytes})
			from += pr.Frames
		}
		if len(parts) > 0 && from == sf.frames {
			return parts, nil
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("source %w", err)
	}
	return []plannedPart{{label: fmt.Sprintf("%d:%s", m.reportIndex[si], sf.rel), path: path, frames: sf.frames, bytes: st.Size()}}, nil
}

// segment is where episode e of source si lies in the merged files.
func (p *videoPlan) segment(si int, e *sourceEpisode, fps int) (shard.VideoSegment, error) {
	vp := e.Videos[p.key]
	ff := e.firstFrame[p.key]
	for _, pl := range p.place[placeKey{si, vp.ChunkIndex, vp.FileIndex}] {
		if ff < pl.from || ff+int(e.Length) > pl.from+pl.frames {
			continue
		}
		first := pl.firstFrame + ff - pl.from
		return shard.VideoSegment{
			ChunkIndex: pl.chunk, FileIndex: pl.file,
			FromTimestamp: float64(first) / float64(fps),
			ToTimestamp:   float64(first+int(e.Length)) / float64(fps),
			Stats:         vp.Stats,
		}, nil
	}
	return shard.VideoSegment{}, fmt.Errorf("merge: episode %d of source %d: its frames [%d, %d) of %s lie in no part the merge planned for that file", e.Index, si, ff, ff+int(e.Length), layout.VideoPath(p.key, vp.ChunkIndex, vp.FileIndex))
}

// execute writes the planned files under dir.
func (p *videoPlan) execute(ctx context.Context, vid Video, dir string, fps int) error {
	for _, f := range p.files {
		dst := filepath.Join(dir, filepath.FromSlash(f.rel))
		if f.keep != "" {
			if err := output.LinkOrCopy(f.keep, dst); err != nil {
				return err
			}
			continue
		}
		var ranges []media.JoinRange
		for _, r := range copyRanges(f.parts) {
			ranges = append(ranges, media.JoinRange{Path: r.path, From: r.from, Frames: r.frames})
		}
		if err := vid.Join(ctx, dst, fps, f.frames, ranges); err != nil {
			return err
		}
	}
	return nil
}

// copyRanges joins consecutive parts of one source file into one range, so
// that a merged source's file is read once for all its parts that go into
// the same file.
func copyRanges(parts []plannedPart) []plannedPart {
	var out []plannedPart
	for _, p := range parts {
		if n := len(out); n > 0 && out[n-1].path == p.path && out[n-1].from+out[n-1].frames == p.from {
			out[n-1].frames += p.frames
			continue
		}
		out = append(out, p)
	}
	return out
}

// report describes the plan's files for the merge report.
func (p *videoPlan) report() VideoReport {
	r := VideoReport{Joined: map[string][]string{}, Parts: map[string][]PartReport{}}
	for _, f := range p.files {
		r.Files = append(r.Files, f.rel)
		if f.keep != "" {
			r.Joined[f.rel] = []string{"kept"}
			if f.keptParts != nil {
				r.Parts[f.rel] = f.keptParts
			}
			continue
		}
		for _, part := range f.parts {
			r.Joined[f.rel] = append(r.Joined[f.rel], part.label)
			r.Parts[f.rel] = append(r.Parts[f.rel], PartReport{Part: part.label, Frames: part.frames, Bytes: part.bytes})
		}
	}
	return r
}

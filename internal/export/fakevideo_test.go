package export

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/media"
	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	synthsession "github.com/ceres-robotics/ceres-export/internal/synth/session"
	"github.com/ceres-robotics/ceres-export/journal"
)

// fakeVideo is export's Video without FFmpeg: ExportCamera records what it
// was asked and "encodes" by placing episodesPerFile episodes in each
// output file, whose bytes name the camera and its episodes. A batch
// export never asks for a pass of parts (a followed one does).
type fakeVideo struct {
	episodesPerFile int
	width, height   int
	// fail, when set, is the error of the camera whose first file is
	// failPath's.
	fail     error
	failPath string

	mu    sync.Mutex
	calls map[string]fakeCall // by the first source's path
}

type fakeCall struct {
	sources  []media.Source
	episodes []media.EpisodeTimes
	opts     media.ExportOptions
	result   media.CameraResult
}

func (f *fakeVideo) ExportCamera(ctx context.Context, sources []media.Source, episodes []media.EpisodeTimes, opts media.ExportOptions) (media.CameraResult, error) {
	if f.fail != nil && sources[0].Path == f.failPath {
		return media.CameraResult{}, f.fail
	}
	res := media.CameraResult{Width: f.width, Height: f.height}
	file, inFile := -1, 0
	var content []byte
	flush := func() error {
		if file < 0 {
			return nil
		}
		path := opts.FilePath(0, file)
		if err := os.WriteFile(path, content, 0o644); err != nil {
			return err
		}
		res.Files = append(res.Files, media.OutputFileResult{Chunk: 0, File: file, Path: path, Frames: inFile, Bytes: int64(len(content))})
		return nil
	}
	for e, ep := range episodes {
		if file < 0 || len(res.Episodes)%f.episodesPerFile == 0 {
			if err := flush(); err != nil {
				return res, err
			}
			file, inFile, content = file+1, 0, nil
		}
		from := float64(inFile) / float64(opts.FPS)
		res.Episodes = append(res.Episodes, media.EpisodeResult{
			Chunk: 0, File: file, FirstFrame: inFile, Frames: ep.Length,
			FromTimestamp: from, ToTimestamp: from + float64(ep.Length)/float64(opts.FPS),
			SourceFrames: ep.Length,
			Stats: media.ImageStats{Count: int64(ep.Length), Max: [3]float64{1, 1, 1},
				Mean: [3]float64{0.5, 0.5, 0.5}, Q50: [3]float64{0.5, 0.5, 0.5}, Q90: [3]float64{0.9, 0.9, 0.9}, Q99: [3]float64{1, 1, 1}},
		})
		inFile += ep.Length
		content = fmt.Appendf(content, "%s episode %d at %d, %d frames\n", sources[0].Path, e, ep.Start, ep.Length)
	}
	if err := flush(); err != nil {
		return res, err
	}
	for _, s := range sources {
		res.Sources = append(res.Sources, media.SourceReport{Path: s.Path, Complete: true})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]fakeCall{}
	}
	f.calls[sources[0].Path] = fakeCall{sources: sources, episodes: episodes, opts: opts, result: res}
	return res, nil
}

func (f *fakeVideo) NewCameraEncoder([]media.Source, media.ExportOptions) (media.CameraEncoder, error) {
	return nil, errors.New("fake video: a batch export opens no pass of parts")
}

func (f *fakeVideo) PlaceParts(context.Context, []media.Part, media.ExportOptions) ([]media.EpisodeResult, []media.OutputFileResult, error) {
	return nil, nil, errors.New("fake video: a batch export places no parts")
}

var _ Video = (*fakeVideo)(nil)

// cameraSessionFiles writes a session's journal with cameras, and stand-in
// bytes for its camera files (the fake reads none; the content key hashes
// them), and returns the planned camera files.
func cameraSessionFiles(t *testing.T, o synthsession.Options) (string, []synthsession.CameraFile) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "session")
	_, cams, err := synthsession.Write(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cams {
		path := filepath.Join(dir, filepath.FromSlash(c.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("camera file "+c.Path), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, cams
}

// The rules export keeps between the journal and the camera encoder, on a
// fake encoder: each camera the profile keeps gets its files in journal
// order with their clock offsets, the plan's episodes on the dataset's
// frame clock and the settings a followed export must agree on; and what
// the encoder says it wrote (files, each episode's place in them, its
// statistics, the output size) is what the shard's metadata says.
func TestExportPlansCameraSegments(t *testing.T) {
	ctx := context.Background()
	session, cams := cameraSessionFiles(t, synthsession.Options{Seed: 71, Cameras: 2, CameraFiles: 2, TimeScale: 0.1, Width: 64, Height: 48})
	fake := &fakeVideo{episodesPerFile: 2, width: 32, height: 24}
	dest := filepath.Join(t.TempDir(), "shard")
	rep, err := Export(ctx, session, dest, Options{VideoFiles: fake, Video: VideoOptions{Codec: "h264", CRF: 23}})
	if err != nil {
		t.Fatal(err)
	}
	j, err := journal.Open(ctx, session, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(j.Events, plan.SpecTypes(j.Spec), rep.FPS)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Episodes) < 3 {
		t.Fatalf("the session has %d episodes; the test needs at least 3 to rotate files", len(p.Episodes))
	}
	byStream := map[string][]synthsession.CameraFile{}
	for _, c := range cams {
		byStream[c.Stream] = append(byStream[c.Stream], c)
	}
	if len(byStream) != 2 || len(fake.calls) != 2 {
		t.Fatalf("%d cameras in the session, the encoder was called for %d; want 2 and 2", len(byStream), len(fake.calls))
	}
	eps := readTable(t, filepath.Join(dest, filepath.FromSlash(layout.EpisodesPath(0, 0))))
	var info struct {
		Features map[string]struct {
			Shape []int          `json:"shape"`
			Info  map[string]any `json:"info"`
		} `json:"features"`
	}
	b, err := os.ReadFile(filepath.Join(dest, filepath.FromSlash(layout.InfoPath)))
	if err != nil || json.Unmarshal(b, &info) != nil {
		t.Fatalf("%s: %v", layout.InfoPath, err)
	}
	for stream, files := range byStream {
		first := filepath.Join(session, filepath.FromSlash(files[0].Path))
		call, ok := fake.calls[first]
		if !ok {
			t.Fatalf("camera %s: the encoder was not given its first file %s", stream, first)
		}
		var want []media.Source
		for _, c := range files {
			want = append(want, media.Source{Path: filepath.Join(session, filepath.FromSlash(c.Path)), StartT: c.StartT})
		}
		if !slices.EqualFunc(call.sources, want, func(a, b media.Source) bool { return a.Path == b.Path && a.StartT == b.StartT }) {
			t.Errorf("camera %s: sources %+v, want the journal's files in order %+v", stream, call.sources, want)
		}
		if len(call.episodes) != len(p.Episodes) {
			t.Fatalf("camera %s: %d episodes asked, the plan has %d", stream, len(call.episodes), len(p.Episodes))
		}
		for i, ep := range p.Episodes {
			if got := call.episodes[i]; got.Times != nil || got.Start != ep.Start || got.Length != ep.Length {
				t.Errorf("camera %s episode %d: asked %+v, want the frame clock from %d for %d frames", stream, i, got, ep.Start, ep.Length)
			}
		}
		o, srcFPS := call.opts, int(j.Info.Streams[j.StreamIndex(stream)].FPS+0.5)
		if o.FPS != rep.FPS || o.SourceFPS != srcFPS || o.Encoder.Codec != media.EncoderX264 ||
			o.Encoder.CRF != 23 || o.InfoStyle != media.InfoWithEncoder || !o.DecodeAll {
			t.Errorf("camera %s: options fps %d source fps %d encoder %+v info style %d decode all %v; want %d, %d, libx264 crf 23, with encoder, true",
				stream, o.FPS, o.SourceFPS, o.Encoder, o.InfoStyle, o.DecodeAll, rep.FPS, srcFPS)
		}
		key := rep.Cameras[stream].Feature
		f := info.Features[key]
		if !slices.Equal(f.Shape, []int{24, 32, 3}) || f.Info["video.codec"] != "h264" || f.Info["video.crf"] != float64(23) {
			t.Errorf("camera %s: info.json feature %s shape %v info %v; want the encoder's 24x32 and h264 crf 23", stream, key, f.Shape, f.Info)
		}
		chunks, fileIdx := eps.ints(t, layout.VideoColumn(key, layout.VideoChunkIndex)), eps.ints(t, layout.VideoColumn(key, layout.VideoFileIndex))
		from, to := eps.column(t, layout.VideoColumn(key, layout.VideoFromTimestamp)), eps.column(t, layout.VideoColumn(key, layout.VideoToTimestamp))
		for i, er := range call.result.Episodes {
			if chunks[i] != int64(er.Chunk) || fileIdx[i] != int64(er.File) || from[i][0] != er.FromTimestamp || to[i][0] != er.ToTimestamp {
				t.Errorf("camera %s episode %d: metadata chunk %d file %d from %v to %v; the encoder placed it at %d, %d, %v, %v",
					stream, i, chunks[i], fileIdx[i], from[i][0], to[i][0], er.Chunk, er.File, er.FromTimestamp, er.ToTimestamp)
			}
		}
		for _, of := range call.result.Files {
			got, err := os.ReadFile(filepath.Join(dest, filepath.FromSlash(layout.VideoPath(key, of.Chunk, of.File))))
			if err != nil || int64(len(got)) != of.Bytes {
				t.Errorf("camera %s file %d: %d bytes in the shard (%v), the encoder wrote %d", stream, of.File, len(got), err, of.Bytes)
			}
		}
		if n := len(call.result.Files); n != (len(p.Episodes)+1)/2 {
			t.Errorf("camera %s: %d files for %d episodes at two a file", stream, n, len(p.Episodes))
		}
	}
}

// What export refuses, or does without, around the encoder: cameras to
// encode and no Video is a refusal before anything is written, as is an
// encoder's failure (the staging directory is removed); a metadata-only
// export, and a session without camera files, need no Video at all.
func TestExportCameraRefusals(t *testing.T) {
	ctx := context.Background()
	session, cams := cameraSessionFiles(t, synthsession.Options{Seed: 72, Cameras: 2, TimeScale: 0.1, Width: 64, Height: 48})
	broken := errors.New("fake encoder: broken")
	cases := []struct {
		name    string
		opts    Options
		want    error
		written bool
	}{
		{"no video", Options{}, ErrNoVideo, false},
		{"encoder fails", Options{VideoFiles: &fakeVideo{episodesPerFile: 1, width: 32, height: 24, fail: broken,
			failPath: filepath.Join(session, filepath.FromSlash(cams[len(cams)-1].Path))}}, broken, false},
		{"metadata-only needs none", Options{Privacy: privacy.MetadataOnly, Salt: "pepper"}, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dest := filepath.Join(root, "shard")
			_, err := Export(ctx, session, dest, tc.opts)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			entries, rerr := os.ReadDir(root)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if !tc.written && len(entries) != 0 {
				t.Errorf("a refused export left %s in %s", entries[0].Name(), root)
			}
			if tc.written {
				if _, err := os.Stat(filepath.Join(dest, layout.VideosDir)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("a metadata-only export wrote %s: %v", layout.VideosDir, err)
				}
			}
		})
	}
	noCameras := smallSession(t, synthsession.Options{Seed: 73})
	if _, err := Export(ctx, noCameras, filepath.Join(t.TempDir(), "shard"), Options{}); err != nil {
		t.Errorf("a session without cameras, exported without Video: %v", err)
	}
}

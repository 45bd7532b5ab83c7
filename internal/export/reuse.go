package export

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/media"
	"github.com/ceres-robotics/ceres-export/internal/output"
	"github.com/ceres-robotics/ceres-export/internal/plan"
)

// videoCacheVersion changes whenever the video stage would produce different
// files from the same inputs; old shards' videos are then not reused.
// Version 2 records each file's SHA-256 (FileSHA256).
const videoCacheVersion = 2

// videoManifest is layout.VideosPath: per camera, the content key of its
// encoded video and what the encoder produced, so that a re-export can
// take the video over instead of encoding it again.
type videoManifest struct {
	Version int                   `json:"version"`
	Cameras []videoManifestCamera `json:"cameras"`
}

type videoManifestCamera struct {
	Stream string `json:"stream"`
	// Key is the SHA-256 of everything the camera's video depends on: the
	// episode windows on the frame clock, the source files' bytes and
	// journal offsets, the output size and the encoder settings.
	Key    string             `json:"key"`
	Result media.CameraResult `json:"result"`
	// FileSHA256 holds the SHA-256 of each of Result.Files, in order: a
	// re-export reuses only bytes that still hash to it.
	FileSHA256 []string `json:"fileSha256"`
}

// videoKeyInputs is hashed (as JSON) into a camera's content key.
type videoKeyInputs struct {
	Version   int                  `json:"version"`
	FPS       int                  `json:"fps"`
	SourceFPS int                  `json:"sourceFps"`
	Episodes  [][2]int64           `json:"episodes"` // start, length
	Sources   []videoKeySource     `json:"sources"`
	Encoder   media.EncoderOptions `json:"encoder"`
	Width     int                  `json:"width"`
	Height    int                  `json:"height"`
}

type videoKeySource struct {
	Path   string `json:"path"` // relative to the session
	StartT int64  `json:"startT"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// cameraKey computes the content key of one camera's video.
func cameraKey(sessionDir string, sources []media.Source, p *plan.Plan, sourceFPS int, enc media.EncoderOptions, v VideoOptions) (string, error) {
	in := videoKeyInputs{Version: videoCacheVersion, FPS: p.FPS, SourceFPS: sourceFPS, Encoder: enc, Width: v.Width, Height: v.Height}
	for _, ep := range p.Episodes {
		in.Episodes = append(in.Episodes, [2]int64{ep.Start, int64(ep.Length)})
	}
	for _, s := range sources {
		sum, size, err := input.SHA256(s.Path)
		if err != nil {
			return "", err
		}
		rel, err := filepath.Rel(sessionDir, s.Path)
		if err != nil {
			rel = s.Path
		}
		in.Sources = append(in.Sources, videoKeySource{Path: filepath.ToSlash(rel), StartT: s.StartT, Size: size, SHA256: sum})
	}
	b, err := json.Marshal(in)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// readVideoManifest reads the manifest of the shard at dir; a shard without
// one (or no shard) yields an empty manifest.
func readVideoManifest(dir string) videoManifest {
	var m videoManifest
	b, err := input.ReadFile(filepath.Join(dir, filepath.FromSlash(layout.VideosPath)))
	if err != nil || json.Unmarshal(b, &m) != nil || m.Version != videoCacheVersion {
		return videoManifest{}
	}
	return m
}

// ReadCameraResults returns, per camera stream, what the encoder wrote into
// the shard at dir (ceres/videos.json): its files and where each episode
// lies in them. A shard without cameras yields an empty map.
func ReadCameraResults(dir string) (map[string]media.CameraResult, error) {
	path := filepath.Join(dir, filepath.FromSlash(layout.VideosPath))
	b, err := input.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]media.CameraResult{}, nil
	}
	if err != nil {
		return nil, err
	}
	var m videoManifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.Version != videoCacheVersion {
		return nil, fmt.Errorf("%s: version %d, want %d", path, m.Version, videoCacheVersion)
	}
	out := make(map[string]media.CameraResult, len(m.Cameras))
	for _, c := range m.Cameras {
		out[c.Stream] = c.Result
	}
	return out, nil
}

func (m videoManifest) find(stream, key string) (videoManifestCamera, bool) {
	for _, c := range m.Cameras {
		if c.Stream == stream && c.Key == key {
			return c, true
		}
	}
	return videoManifestCamera{}, false
}

// videoHashes returns the SHA-256 of each encoded file of a camera under dir.
func videoHashes(dir, feature string, res media.CameraResult) ([]string, error) {
	sums := make([]string, len(res.Files))
	for i, f := range res.Files {
		sum, _, err := input.SHA256(filepath.Join(dir, filepath.FromSlash(layout.VideoPath(feature, f.Chunk, f.File))))
		if err != nil {
			return nil, err
		}
		sums[i] = sum
	}
	return sums, nil
}

// reuseFiles links (or, across file systems, copies) the encoded files of a
// camera from the previous shard into the staging directory. Every file must
// be there with the size and the SHA-256 the manifest recorded: a file whose
// bytes rotted is never taken over.
func reuseFiles(prevDir, stageDir, feature string, cam videoManifestCamera) error {
	res := cam.Result
	if len(cam.FileSHA256) != len(res.Files) {
		return fmt.Errorf("the manifest lists %d files and %d hashes", len(res.Files), len(cam.FileSHA256))
	}
	for i, f := range res.Files {
		rel := filepath.FromSlash(layout.VideoPath(feature, f.Chunk, f.File))
		src, dst := filepath.Join(prevDir, rel), filepath.Join(stageDir, rel)
		sum, size, err := input.SHA256(src)
		if err != nil {
			return err
		}
		if size != f.Bytes {
			return fmt.Errorf("%s: %d bytes, the manifest says %d", layout.VideoPath(feature, f.Chunk, f.File), size, f.Bytes)
		}
		if sum != cam.FileSHA256[i] {
			return fmt.Errorf("%s: SHA-256 %s, the manifest says %s", layout.VideoPath(feature, f.Chunk, f.File), sum, cam.FileSHA256[i])
		}
		if err := output.LinkOrCopy(src, dst); err != nil {
			return err
		}
	}
	return nil
}

// relativeSources strips the session directory from the recorded source
// paths, so that the manifest does not depend on where the session lies.
func relativeSources(sessionDir string, res *media.CameraResult) {
	for i := range res.Sources {
		if rel, err := filepath.Rel(sessionDir, res.Sources[i].Path); err == nil {
			res.Sources[i].Path = filepath.ToSlash(rel)
		}
	}
	for i := range res.Files {
		res.Files[i].Path = ""
	}
}

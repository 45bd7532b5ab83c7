package verify

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// videosPath is the exporter's record of each camera's encoded files,
// which a re-export trusts to reuse them.
const videosPath = layout.VideosPath

// videosRecord is what verify reads of ceres/videos.json, independently of
// the exporter's types.
type videosRecord struct {
	Version int `json:"version"`
	Cameras []struct {
		Stream string `json:"stream"`
		Key    string `json:"key"`
		Result struct {
			Files []struct {
				Chunk int   `json:"Chunk"`
				File  int   `json:"File"`
				Bytes int64 `json:"Bytes"`
			} `json:"Files"`
		} `json:"result"`
		FileSHA256 []string `json:"fileSha256"`
	} `json:"cameras"`
}

// checkCeresFiles checks the exporter's own records, which a corrupt copy
// would make a re-export trust: ceres/export-report.json must be a JSON
// object, and ceres/videos.json must list for every camera files that are
// in the shard with the recorded size and SHA-256.
func (c *checker) checkCeresFiles() {
	if slices.Contains(c.files, reportPath) {
		var rep map[string]any
		if b, err := input.ReadFile(filepath.Join(c.dir, reportPath)); err != nil {
			c.errorf("ceres.unreadable", reportPath, loc{}, "%v", err)
		} else if err := json.Unmarshal(b, &rep); err != nil {
			c.errorf("ceres.report", reportPath, loc{}, "not a JSON object: %v", err)
		}
	}
	if !slices.Contains(c.files, videosPath) {
		return
	}
	b, err := input.ReadFile(filepath.Join(c.dir, videosPath))
	if err != nil {
		c.errorf("ceres.unreadable", videosPath, loc{}, "%v", err)
		return
	}
	var rec videosRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		c.errorf("ceres.videos", videosPath, loc{}, "not the exporter's video record: %v", err)
		return
	}
	for i, cam := range rec.Cameras {
		at := fmt.Sprintf("cameras[%d]", i)
		if cam.Stream == "" || len(cam.Key) != 64 {
			c.errorf("ceres.videos", videosPath, loc{}, "%s: stream %q, key %q: want a stream and a 64-digit content key", at, cam.Stream, cam.Key)
			continue
		}
		feature := "observation.images." + cam.Stream
		if c.info != nil {
			if ft := c.info.byName[feature]; ft == nil || !ft.Dtype.Visual() {
				c.errorf("ceres.videos", videosPath, loc{}, "%s: %s is not a video feature of info.json", at, feature)
			}
		}
		if len(cam.FileSHA256) != len(cam.Result.Files) {
			c.errorf("ceres.videos", videosPath, loc{}, "%s: %d files but %d hashes", at, len(cam.Result.Files), len(cam.FileSHA256))
			continue
		}
		for k, f := range cam.Result.Files {
			rel := layout.VideoPath(feature, f.Chunk, f.File)
			sum, size, err := input.SHA256(filepath.Join(c.dir, filepath.FromSlash(rel)))
			switch {
			case err != nil:
				c.errorf("ceres.videos", videosPath, loc{}, "%s.files[%d]: %v", at, k, err)
			case size != f.Bytes:
				c.errorf("ceres.videos", rel, loc{}, "%d bytes, %s records %d", size, videosPath, f.Bytes)
			case sum != cam.FileSHA256[k]:
				c.errorf("ceres.videos", rel, loc{}, "SHA-256 %s, %s records %s", sum, videosPath, cam.FileSHA256[k])
			}
		}
	}
}

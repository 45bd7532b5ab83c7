package verify

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// A shard or merged dataset is sealed by its writer (ceres/seal.json,
// version 2): every file but the seal and the output marker, with the
// SHA-256 of its bytes. Read here independently of the shard package.
const (
	sealPath    = layout.SealPath
	sealVersion = 2
)

// sealFile is the part of ceres/seal.json verify checks.
type sealFile struct {
	Version int `json:"version"`
	Files   []struct {
		Path   string `json:"path"`
		Size   int64  `json:"size"`
		SHA256 string `json:"sha256"`
	} `json:"files"`
}

// checkSeal (full mode) checks every file of the dataset against its
// seal, so that a byte changed anywhere (inside a video, a statistic no
// check recomputes, the session page) is found and the file named. The
// output marker, which the seal does not cover, is checked byte for byte
// by checkOutputMarker.
func (c *checker) checkSeal() {
	b, err := input.ReadFile(filepath.Join(c.dir, sealPath))
	if err != nil {
		if slices.Contains(c.files, sealPath) {
			c.errorf("seal.invalid", sealPath, loc{}, "unreadable: %v", err)
			return
		}
		c.notef("seal.none", "", loc{}, "no %s (written before datasets were sealed): the files' bytes cannot be checked against what was written", sealPath)
		return
	}
	var s sealFile
	if err := json.Unmarshal(b, &s); err != nil {
		c.errorf("seal.invalid", sealPath, loc{}, "not a seal: %v", err)
		return
	}
	if s.Version < sealVersion {
		c.notef("seal.none", sealPath, loc{}, "seal version %d, which named each video by its size only: the files' bytes cannot be checked against what was written", s.Version)
		return
	}
	if s.Version != sealVersion {
		c.errorf("seal.invalid", sealPath, loc{}, "version %d, want %d", s.Version, sealVersion)
		return
	}
	listed := map[string]bool{}
	for i, f := range s.Files {
		if i > 0 && s.Files[i-1].Path >= f.Path {
			c.errorf("seal.invalid", sealPath, loc{}, "files[%d] %q is not after %q: the files are listed once each, in path order", i, f.Path, s.Files[i-1].Path)
		}
		listed[f.Path] = true
		if !slices.Contains(c.files, f.Path) {
			if !c.reportedFile(f.Path, "layout.missing-file", "layout.not-regular") {
				c.errorf("seal.missing-file", f.Path, loc{}, "missing: %s lists it", sealPath)
			}
			continue
		}
		sum, size, err := input.SHA256(filepath.Join(c.dir, filepath.FromSlash(f.Path)))
		switch {
		case err != nil:
			c.errorf("seal.mismatch", f.Path, loc{}, "cannot be hashed: %v", err)
		case sum != f.SHA256 || size != f.Size:
			c.errorf("seal.mismatch", f.Path, loc{}, "SHA-256 %s (%d bytes), but %s records %s (%d bytes): the file changed since it was written", sum, size, sealPath, f.SHA256, f.Size)
		}
	}
	for _, f := range c.files {
		if !listed[f] && f != sealPath && f != layout.OutputMarkerPath {
			c.warnf("seal.unlisted", f, loc{}, "not in %s: added after the dataset was written", sealPath)
		}
	}
}

// checkOutputMarker checks the output marker's bytes: the commit writes
// exactly {"tool":"ceres-export","kind":KIND} and a newline, KIND "shard" for a shard
// and "merged" for a merged dataset.
func (c *checker) checkOutputMarker() {
	if !slices.Contains(c.files, layout.OutputMarkerPath) {
		return
	}
	b, err := input.ReadFile(filepath.Join(c.dir, layout.OutputMarkerPath))
	if err != nil {
		c.errorf("output.marker", layout.OutputMarkerPath, loc{}, "unreadable: %v", err)
		return
	}
	kind := "shard"
	if c.isMerged() {
		kind = "merged"
	}
	want, _ := json.Marshal(struct {
		Tool string `json:"tool"`
		Kind string `json:"kind"`
	}{"ceres-export", kind})
	want = append(want, '\n')
	if !bytes.Equal(b, want) {
		c.errorf("output.marker", layout.OutputMarkerPath, loc{}, "holds %q, want %s", b, want)
	}
}

// reportedFile says whether a finding of one of codes names file already: the
// structure check's, which says the same of a file in its own words.
func (c *checker) reportedFile(file string, codes ...string) bool {
	for _, f := range c.res.Findings {
		if f.File == file && slices.Contains(codes, f.Code) {
			return true
		}
	}
	return false
}

package verify

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/profile"
)

// readProfile reads ceres/profile.json, the feature profile the export
// applied: it must parse, be in canonical form, and be the profile the
// export report names by hash. A shard without one applied the empty
// profile. c.profile is nil when the file is missing or unusable.
func (c *checker) readProfile() {
	rel := layout.ProfilePath
	b, err := input.ReadFile(filepath.Join(c.dir, rel))
	reported := c.reportedProfileHash()
	if errors.Is(err, fs.ErrNotExist) {
		if reported != "" {
			c.errorf("ceres.profile-missing", rel, loc{}, "the export report names profile %s, but the shard does not store it", reported)
		}
		return
	}
	if err != nil {
		c.errorf("ceres.profile", rel, loc{}, "%v", err)
		return
	}
	p, err := profile.Parse(rel, b)
	if err != nil {
		c.errorf("ceres.profile", rel, loc{}, "not a valid feature profile: %v", err)
		return
	}
	if !bytes.Equal(p.Canonical(), b) {
		c.errorf("ceres.profile-canonical", rel, loc{}, "the bytes are not the profile's canonical form (RFC 8785)")
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != reported {
		c.errorf("ceres.profile-hash", rel, loc{}, "the file's SHA-256 is %s, but the export report names profile %q", got, reported)
	}
	c.profile = p
}

// reportedProfileHash is exporter.options.profileHash of the export report
// ("" when absent or unreadable).
func (c *checker) reportedProfileHash() string {
	b, err := input.ReadFile(filepath.Join(c.dir, reportPath))
	if err != nil {
		return ""
	}
	var rep struct {
		Exporter struct {
			Options struct {
				ProfileHash string `json:"profileHash"`
			} `json:"options"`
		} `json:"exporter"`
	}
	_ = json.Unmarshal(b, &rep)
	return rep.Exporter.Options.ProfileHash
}

// checkProfile checks the profile's features against the shard without
// the session: every declared feature is a data feature of info.json with
// the declared names; a derived feature (next) has its source's dtype and
// shape, and in every episode row k holds the source's row k+1 and the
// last row the source's own; a renamed camera's key is a video feature.
func (c *checker) checkProfile() {
	c.readProfile()
	if c.profile == nil || c.info == nil {
		return
	}
	rel := layout.ProfilePath
	for _, f := range c.profile.Features {
		ft := c.info.byName[f.Name]
		if ft == nil || ft.Dtype == "video" || ft.Dtype == "image" {
			c.errorf("info.profile-feature", infoPath, loc{}, "the profile declares data feature %s, which info.json lacks", f.Name)
			continue
		}
		if len(f.Names) > 0 && !slices.Equal(f.Names, ft.Names) {
			c.errorf("info.profile-names", infoPath, loc{}, "feature %s has names %q, but the profile declares %q", f.Name, ft.Names, f.Names)
		}
		if f.Next == "" {
			continue
		}
		src := c.info.byName[f.Next]
		if src == nil {
			continue // reported for the source itself
		}
		if src.Dtype != ft.Dtype || !slices.Equal(src.Shape, ft.Shape) {
			c.errorf("info.profile-next", infoPath, loc{}, "feature %s is %s %v, but it holds the next frame of %s, which is %s %v", f.Name, ft.Dtype, ft.Shape, f.Next, src.Dtype, src.Shape)
			continue
		}
		c.checkNextValues(f.Name, f.Next, ft.width())
	}
	for _, cam := range c.profile.Cameras {
		key := profile.CameraKeyPrefix + cam.Name
		if ft := c.info.byName[key]; ft == nil || ft.Dtype != "video" {
			c.notef("info.profile-camera", rel, loc{}, "the profile names camera %s %s, which the shard has no video feature of (a camera without media files is left out)", cam.Stream, key)
		}
	}
}

// checkNextValues checks, episode by episode, that derived feature name
// holds the next row of src, and the last row src's own.
func (c *checker) checkNextValues(name, src string, w int) {
	if c.data == nil {
		return
	}
	dv, ok1 := c.data.Values[name]
	sv, ok2 := c.data.Values[src]
	if !ok1 || !ok2 {
		return // unusable columns are the data check's findings
	}
	for _, epi := range slices.Sorted(maps.Keys(c.data.Episodes)) {
		de := c.data.Episodes[epi]
		for k := int64(0); k < de.Rows; k++ {
			r := de.FirstRow + k
			from := r + 1
			if k == de.Rows-1 {
				from = r
			}
			if !slices.Equal(dv[r*int64(w):(r+1)*int64(w)], sv[from*int64(w):(from+1)*int64(w)]) {
				c.errorf("data.profile-next", c.data.Files[c.data.RowFile[r]], epRow(epi, r),
					"%s at frame %d is %v, want %s of frame %d of the episode: %v", name, k, dv[r*int64(w):(r+1)*int64(w)], src, from-de.FirstRow, sv[from*int64(w):(from+1)*int64(w)])
				break
			}
		}
	}
}

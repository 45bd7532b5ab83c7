package verify

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/journal"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

const privacyMarkerPath = layout.PrivacyMarkerPath

var redactedSpecFileRe = regexp.MustCompile(`^` + regexp.QuoteMeta(layout.RedactedSpecsDir) + `/([0-9a-f]{64})\.json$`)

// metadataOnly reports whether the dataset declares itself metadata-only
// (ceres/privacy.json).
func (c *checker) metadataOnly() bool {
	b, err := input.ReadFile(filepath.Join(c.dir, filepath.FromSlash(privacyMarkerPath)))
	if err != nil {
		return false
	}
	var m privacy.Marker
	return json.Unmarshal(b, &m) == nil && m.Mode == privacy.MetadataOnly
}

// storedSessionID is the ceres/session_id an episode of session id carries:
// the id, or its salted hash in a metadata-only dataset; ok is false when
// that hash cannot be computed (no Options.Salt).
func (c *checker) storedSessionID(id string) (string, bool) {
	if !c.metadataOnly() {
		return id, true
	}
	if c.opts.Salt == "" {
		return "", false
	}
	return privacy.SaltedHash(c.opts.Salt, id), true
}

// checkPrivacy proves a metadata-only dataset holds nothing private: it is
// marked as such, has no video, no session page and no unredacted
// specification, and (with Options.Journal) none of the session's private
// strings occurs in any byte of any file, nor in any decoded Parquet value
// (pages are compressed, so raw bytes alone could hide a leak).
func (c *checker) checkPrivacy() error {
	if !c.metadataOnly() {
		c.errorf("privacy.marker", privacyMarkerPath, loc{}, "the dataset is not marked metadata-only (%s with mode %q)", privacyMarkerPath, privacy.MetadataOnly)
	}
	for _, rel := range c.files {
		switch {
		case strings.HasPrefix(rel, layout.VideosDir+"/"):
			c.errorf("privacy.video", rel, loc{}, "a metadata-only dataset has no video")
		case specFileRe.MatchString(rel):
			c.errorf("privacy.specification", rel, loc{}, "an unredacted task specification (its instructions and run title); a metadata-only dataset stores %s/<hash>.json", layout.RedactedSpecsDir)
		case rel == layout.SessionPagePath || rel == layout.VideosPath:
			c.errorf("privacy.file", rel, loc{}, "a metadata-only dataset has no session page and no video manifest")
		}
	}
	if c.info != nil {
		for _, f := range c.info.Features {
			if f.Dtype.Visual() {
				c.errorf("privacy.video", infoPath, loc{}, "feature %s is a %s; a metadata-only dataset has no pictures", f.Name, f.Dtype)
			}
		}
	}
	c.checkUserStrings()
	if c.opts.Journal == "" {
		c.notef("privacy.strings", "", loc{}, "no --journal: the session's private strings were not looked for")
		return nil
	}
	j, err := journal.Open(c.ctx, c.opts.Journal, journal.Options{Salvage: true})
	if err != nil {
		return fmt.Errorf("%w journal %s: %w", ErrUnreadable, c.opts.Journal, err)
	}
	specs := []*taskspec.Spec{j.Spec}
	for i, b := range c.opts.TaskSpecs {
		s, err := taskspec.Parse(b)
		if err != nil {
			return fmt.Errorf("%w task specification %d: %w", ErrUnreadable, i+1, err)
		}
		specs = append(specs, s)
	}
	private := privacy.PrivateStrings(j.Info.SessionID, specs...)
	for _, rel := range c.files {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		path := filepath.Join(c.dir, filepath.FromSlash(rel))
		b, err := input.ReadFile(path)
		if err != nil {
			c.errorf("privacy.unreadable", rel, loc{}, "%v", err)
			continue
		}
		c.findPrivate(rel, "", b, private)
		if strings.HasSuffix(rel, ".parquet") {
			c.scanParquet(rel, path, private)
		}
	}
	return nil
}

// checkUserStrings proves that the values a user wrote into a campaign (a
// task's identity, the manifest's extensions; a merge source's name) are
// replaced, since nothing can prove them public: every string value of a
// campaign or extensions file is a salted hash, and a merged dataset names
// its sources by number.
func (c *checker) checkUserStrings() {
	for _, rel := range c.files {
		// A shard's campaign identity and extensions, and a merged
		// dataset's copies of its sources' (layout.SourcePath).
		_, name, ofSource := layout.ParseSourcePath(rel)
		carried := rel == layout.CampaignPath || rel == layout.ExtensionsPath ||
			ofSource && (name == path.Base(layout.CampaignPath) || name == path.Base(layout.ExtensionsPath))
		if !carried {
			continue
		}
		b, err := input.ReadFile(filepath.Join(c.dir, filepath.FromSlash(rel)))
		if err != nil {
			c.errorf("privacy.unreadable", rel, loc{}, "%v", err)
			continue
		}
		at, v, ok, err := privacy.SaltedValuesOnly(b)
		switch {
		case err != nil:
			c.errorf("privacy.user-string", rel, loc{}, "not JSON: %v", err)
		case !ok:
			c.errorf("privacy.user-string", rel, loc{}, "%s is %q, a value a user wrote; a metadata-only dataset carries it only as a salted hash", at, cut(v))
		}
	}
	if !c.isMerged() {
		return
	}
	b, err := input.ReadFile(filepath.Join(c.dir, mergeReportPath))
	var r mergeReport
	if err != nil || json.Unmarshal(b, &r) != nil {
		return // the merge checks report it
	}
	for i, s := range r.Sources {
		if want := privacy.SourceName(i); s.Name != want {
			c.errorf("privacy.user-string", mergeReportPath, loc{}, "sources[%d].name is %q (a directory name, often the session's); a metadata-only dataset names it %s", i, cut(s.Name), want)
		}
		if s.CampaignTaskID != "" && !privacy.IsSaltedHash(s.CampaignTaskID) {
			c.errorf("privacy.user-string", mergeReportPath, loc{}, "sources[%d].campaignTaskId is %q, a value a user wrote; a metadata-only dataset carries it only as a salted hash", i, cut(s.CampaignTaskID))
		}
	}
}

// cut shortens a value quoted in a finding.
func cut(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// findPrivate reports each private string that occurs in b, compared as
// the privacy rules compare (privacy.Find: case-folded, normalised, JSON
// escapes undone, in every decoded string).
func (c *checker) findPrivate(rel, where string, b []byte, private []string) {
	for _, f := range privacy.Find(b, private) {
		c.errorf("privacy.leak", rel, loc{}, "%sprivate string %q %s", where, f.Private, f.Where)
	}
}

// scanParquet looks for private strings in every decoded value and in the
// key-value metadata of a Parquet file.
func (c *checker) scanParquet(rel, path string, private []string) {
	t, err := c.readParquet(path)
	if err != nil {
		c.errorf("privacy.unreadable", rel, loc{}, "cannot decode to look for private strings: %v", err)
		return
	}
	md := t.Schema.Metadata()
	for i, k := range md.Keys() {
		c.findPrivate(rel, "metadata "+k+": ", []byte(md.Values()[i]), private)
	}
	for _, f := range t.Schema.Fields() {
		a := t.col(f.Name)
		if a == nil || !hasText(a.DataType()) {
			continue
		}
		js, err := a.MarshalJSON()
		if err != nil {
			c.errorf("privacy.unreadable", rel, loc{}, "column %s: %v", f.Name, err)
			continue
		}
		c.findPrivate(rel, "column "+f.Name+": ", js, private)
	}
}

// hasText reports whether values of type t can hold text.
func hasText(t arrow.DataType) bool {
	switch t := t.(type) {
	case *arrow.StringType, *arrow.LargeStringType, *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.StringViewType, *arrow.BinaryViewType:
		return true
	case arrow.ListLikeType:
		return hasText(t.Elem())
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if hasText(f.Type) {
				return true
			}
		}
	}
	return false
}

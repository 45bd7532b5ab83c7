package campaign

import (
	"fmt"
	"strings"
)

// MaxTaskIDLength bounds a task id: it names a directory (OUT/<task id>),
// and staging adds about 25 bytes to it, under the 255 most file systems
// allow.
const MaxTaskIDLength = 200

// NormaliseID is the identity rule for one component (campaign_id, case_id,
// setting_id, run_id) of a task id:
//
//  1. surrounding white space is dropped;
//  2. ASCII letters are lower-cased (ids name directories, and two ids that
//     differ only in case would collide on a case-insensitive file system);
//  3. every run of characters other than a-z, 0-9, ".", "_" and "-" becomes
//     one "-";
//  4. every run of "_" becomes one "_", so that the separator "__" can only
//     ever appear between components;
//  5. leading and trailing ".", "_" and "-" are dropped (no hidden
//     directories, no id that ends in a separator).
//
// The result is empty when nothing identifying is left; callers report that.
func NormaliseID(s string) string {
	s = strings.TrimSpace(s)
	var b strings.Builder
	prev := rune(0)
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			r += 'a' - 'A'
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '-':
		case r == '_':
			if prev == '_' {
				continue
			}
		default:
			if prev == '-' {
				continue
			}
			r = '-'
		}
		b.WriteRune(r)
		prev = r
	}
	return strings.Trim(b.String(), "._-")
}

// TaskID is the stable id of one task:
// {campaign_id}__{case_id}__{setting_id}__run-{run_id}, of normalised
// components.
func TaskID(campaignID, caseID, settingID, runID string) string {
	return campaignID + "__" + caseID + "__" + settingID + "__run-" + runID
}

// identity is a record's four components, as written and normalised.
type identity struct {
	campaign, caseID, setting, run string
}

// normalise applies NormaliseID to each component; path prefixes the JSON
// paths of its errors.
func (d decoder) normaliseIdentity(path string, raw identity) (identity, string, error) {
	var n identity
	for _, c := range []struct {
		field string
		in    string
		out   *string
	}{
		{"campaign_id", raw.campaign, &n.campaign},
		{"case_id", raw.caseID, &n.caseID},
		{"setting_id", raw.setting, &n.setting},
		{"run_id", raw.run, &n.run},
	} {
		*c.out = NormaliseID(c.in)
		if *c.out == "" {
			at := member(path, c.field)
			if c.field == "campaign_id" {
				at = c.field // always top-level (a JSONL line's top level too)
			}
			return n, "", d.errorf(at, "%q normalises to nothing; want at least one letter or digit", c.in)
		}
	}
	id := TaskID(n.campaign, n.caseID, n.setting, n.run)
	if len(id) > MaxTaskIDLength {
		return n, "", d.errorf(path, "task id %s is %d bytes long; at most %d fit a directory name", id, len(id), MaxTaskIDLength)
	}
	return n, id, nil
}

// selectionError formats a selection error.
func selectionError(flag, value, msg string) error {
	return fmt.Errorf("--%s %q: %s", flag, cutLong(value), msg)
}

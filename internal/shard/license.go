package shard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/suggest"
)

// Licenses are the licence identifiers the Hugging Face Hub accepts as a
// card's `license:` (its documentation's licence table, "Licenses" in the
// Hub docs, docs/hub/repositories-licenses.md of the hub-docs repository),
// in the table's order. It is the one list: export, merge and batch check
// --license and a manifest's license against it, because the Hub reads a
// dataset with an id it does not know as one without a licence, and
// datasets leave labs. LeRobot's create_lerobot_dataset_card takes the same
// ids ("a valid license identifier" of that page).
var Licenses = []string{
	"apache-2.0", "mit", "openrail", "bigscience-openrail-m", "creativeml-openrail-m",
	"bigscience-bloom-rail-1.0", "bigcode-openrail-m", "afl-3.0", "artistic-2.0", "bsl-1.0",
	"bsd", "bsd-2-clause", "bsd-3-clause", "bsd-3-clause-clear", "c-uda", "cc", "cc0-1.0",
	"cc-by-2.0", "cc-by-2.5", "cc-by-3.0", "cc-by-4.0", "cc-by-sa-3.0", "cc-by-sa-4.0",
	"cc-by-nc-2.0", "cc-by-nc-3.0", "cc-by-nc-4.0", "cc-by-nd-4.0", "cc-by-nc-nd-3.0",
	"cc-by-nc-nd-4.0", "cc-by-nc-sa-2.0", "cc-by-nc-sa-3.0", "cc-by-nc-sa-4.0",
	"cdla-sharing-1.0", "cdla-permissive-1.0", "cdla-permissive-2.0", "wtfpl", "ecl-2.0",
	"epl-1.0", "epl-2.0", "etalab-2.0", "eupl-1.1", "eupl-1.2", "agpl-3.0", "gfdl", "gpl",
	"gpl-2.0", "gpl-3.0", "lgpl", "lgpl-2.1", "lgpl-3.0", "isc", "h-research", "intel-research",
	"lppl-1.3c", "ms-pl", "apple-ascl", "apple-amlr", "mpl-2.0", "odc-by", "odbl", "openmdw-1.0",
	"openmdw-1.1", "openrail++", "osl-3.0", "postgresql", "ofl-1.1", "ncsa", "unlicense", "zlib",
	"pddl", "lgpl-lr", "deepfloyd-if-license", "fair-noncommercial-research-license", "llama2",
	"llama3", "llama3.1", "llama3.2", "llama3.3", "llama4", "grok2-community", "gemma",
	"unknown", "other",
}

// LicenseError is a licence id the Hub does not know, with the known id
// nearest to it.
type LicenseError struct {
	ID   string
	Near string
}

func (e *LicenseError) Error() string {
	return fmt.Sprintf("not a licence id of the Hugging Face Hub (did you mean %s? ids are lower case, e.g. apache-2.0, mit, cc-by-4.0, cc-by-nc-4.0, cc0-1.0, other)", e.Near)
}

// CheckLicense returns nil for a licence id of Licenses, and a
// *LicenseError naming the nearest one otherwise. "" is no licence and is
// not checked here: callers leave the card without one.
func CheckLicense(id string) error {
	if slices.Contains(Licenses, id) {
		return nil
	}
	return &LicenseError{ID: id, Near: nearestLicense(id)}
}

// nearestLicense is the id of Licenses nearest to id, compared in lower
// case (an SPDX spelling such as CC-BY-4.0 finds cc-by-4.0): among the ids
// id begins (cc0 finds cc0-1.0, not cc) if there are any, the one at the
// smallest edit distance; on a tie the later in the table, whose families
// run from old versions to new (cc-by-nc finds cc-by-nc-4.0).
func nearestLicense(id string) string {
	id = strings.ToLower(id)
	candidates := Licenses
	var prefixed []string
	for _, l := range Licenses {
		if strings.HasPrefix(l, id) {
			prefixed = append(prefixed, l)
		}
	}
	if id != "" && len(prefixed) > 0 {
		candidates = prefixed
	}
	best, bestD := candidates[0], -1
	for _, l := range candidates {
		if d := suggest.Distance(id, l); bestD < 0 || d <= bestD {
			best, bestD = l, d
		}
	}
	return best
}

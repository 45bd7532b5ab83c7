package merge

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/shard"
)

// ErrLicenses marks sources under different licences merged without
// --license: a dataset has one licence, and merge does not pick one of its
// sources' for the others.
var ErrLicenses = errors.New("merge: the sources' licences differ")

// mergedLicense is the merged dataset's licence: want (Options.License)
// when given, whatever the sources say (relicensing is the user's call);
// otherwise the sources' own when they all agree, "" (none) included. A
// source is a shard (its export report's license), a merged dataset (its
// merge report's) or a foreign dataset (its card's license).
func mergedLicense(sources []*source, want string) (string, error) {
	if want != "" {
		if err := shard.CheckLicense(want); err != nil {
			return "", fmt.Errorf("%w: --license %s: %w", ErrUsage, want, err)
		}
		return want, nil
	}
	if len(sources) == 0 {
		return "", nil
	}
	first := sources[0]
	for _, s := range sources[1:] {
		if s.license != first.license {
			return "", fmt.Errorf("%w: %s is %s and %s is %s; a merged dataset has one licence: give --license to choose it",
				ErrLicenses, first.dir, licenseName(first.license), s.dir, licenseName(s.license))
		}
	}
	if first.license != "" {
		if err := shard.CheckLicense(first.license); err != nil {
			return "", fmt.Errorf("%w: every source is %s, which is %w; give --license to choose the dataset's", ErrLicenses, licenseName(first.license), err)
		}
	}
	return first.license, nil
}

// licenseName says a source's licence in a message.
func licenseName(l string) string {
	if l == "" {
		return "without a licence"
	}
	return "licensed " + l
}

// foreignLicense is the license of a foreign dataset's card (README.md,
// what the Hub reads): "" when it has no card, no card data or no license.
// A list of licences is kept as written, joined by commas, so that it is
// never taken for one id.
func foreignLicense(ds *shard.Dataset) (string, error) {
	b, err := input.ReadFile(ds.Path(layout.CardPath))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("source %w", err)
	}
	rest, ok := strings.CutPrefix(string(b), "---\n")
	front, _, ok2 := strings.Cut(rest, "\n---\n")
	if !ok || !ok2 {
		return "", nil
	}
	var data struct {
		License yaml.Node `yaml:"license"`
	}
	if yaml.Unmarshal([]byte(front), &data) != nil {
		// A card the Hub cannot read either: no licence it would show.
		return "", nil
	}
	switch {
	case data.License.Kind == yaml.ScalarNode && data.License.Tag != "!!null":
		return data.License.Value, nil
	case data.License.Kind == yaml.SequenceNode:
		var ids []string
		for _, n := range data.License.Content {
			ids = append(ids, n.Value)
		}
		return strings.Join(ids, ","), nil
	}
	return "", nil
}

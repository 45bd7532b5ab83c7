package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
)

const cardPath = layout.CardPath

var (
	cardSessionRe = regexp.MustCompile(`CERES session (\S+) exported`)
	cardProfileRe = regexp.MustCompile("Feature profile: sha256 `([0-9a-f]{64})`")
	cardEscapeRe  = regexp.MustCompile(`\\(.)`)
	// The table rows are matched a line at a time (tableRows): a card's
	// tables are a few lines of its text.
	cardSpecRe    = regexp.MustCompile("^\\| [a-z ]+ \\| \\d+ \\| `([0-9a-f]{64})` \\|")
	cardAttemptRe = regexp.MustCompile(`^\| \d+ \| .* \| \d+ \| \d+ \| ([a-z]+) \| (\d*) \|`)
)

// tableRows returns the submatches of re, anchored at a line's start, in
// every line of body that starts a Markdown table row.
func tableRows(re *regexp.Regexp, body string) [][]string {
	var out [][]string
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "| ") {
			if m := re.FindStringSubmatch(line); m != nil {
				out = append(out, m)
			}
		}
	}
	return out
}

// checkCard checks the dataset card, README.md at the shard root, as
// LeRobot's create_lerobot_dataset_card writes it: YAML card data with the
// robotics task category, the LeRobot tag and a default config whose
// data_files match every data file (and nothing LeRobot does not read as
// data); meta/info.json embedded as it is; and the CERES provenance naming
// the session, the stored specifications and profile, and one accepted
// attempt per episode.
func (c *checker) checkCard() {
	b, err := input.ReadFile(filepath.Join(c.dir, cardPath))
	if errors.Is(err, fs.ErrNotExist) {
		// A note, not an error: datasets made before cards were written
		// (merged ones before 2026-12) have none and load all the same.
		c.notef("card.missing", cardPath, loc{}, "no dataset card (README.md); the Hub shows none")
		return
	}
	if err != nil {
		c.errorf("card.unreadable", cardPath, loc{}, "%v", err)
		return
	}
	text := string(b)
	rest, ok := strings.CutPrefix(text, "---\n")
	front, body, ok2 := strings.Cut(rest, "\n---\n")
	if !ok || !ok2 {
		c.errorf("card.front-matter", cardPath, loc{}, "the card does not start with YAML card data between --- lines")
		return
	}
	var data struct {
		TaskCategories []string `yaml:"task_categories"`
		Tags           []string `yaml:"tags"`
		Configs        []struct {
			ConfigName string    `yaml:"config_name"`
			DataFiles  yaml.Node `yaml:"data_files"`
		} `yaml:"configs"`
	}
	if err := yaml.Unmarshal([]byte(front), &data); err != nil {
		c.errorf("card.front-matter", cardPath, loc{}, "card data is not YAML: %v", err)
		return
	}
	if !slices.Contains(data.TaskCategories, "robotics") {
		c.errorf("card.front-matter", cardPath, loc{}, "task_categories %q lacks robotics", data.TaskCategories)
	}
	if !slices.Contains(data.Tags, "LeRobot") {
		c.errorf("card.front-matter", cardPath, loc{}, "tags %q lack LeRobot (the Hub lists LeRobot datasets by it)", data.Tags)
	}
	c.checkCardConfigs(data.Configs)
	c.checkCardInfo(body)
	if c.isMerged() {
		c.checkMergedCard(body)
		return
	}
	c.checkCardProvenance(body)
}

func (c *checker) checkCardConfigs(configs []struct {
	ConfigName string    `yaml:"config_name"`
	DataFiles  yaml.Node `yaml:"data_files"`
}) {
	var patterns []string
	for _, cf := range configs {
		if cf.ConfigName != "default" {
			continue
		}
		switch cf.DataFiles.Kind {
		case yaml.ScalarNode:
			patterns = append(patterns, cf.DataFiles.Value)
		case yaml.SequenceNode:
			for _, n := range cf.DataFiles.Content {
				patterns = append(patterns, n.Value)
			}
		}
	}
	if len(patterns) == 0 {
		c.errorf("card.configs", cardPath, loc{}, "no default config with data_files: the Hub's dataset viewer would not find the data")
		return
	}
	matches := func(f string) bool {
		for _, p := range patterns {
			if ok, err := path.Match(p, f); err == nil && ok {
				return true
			}
		}
		return false
	}
	for _, f := range c.files {
		isData := dataFileRe.MatchString(f)
		if m := matches(f); m != isData {
			if isData {
				c.errorf("card.configs", cardPath, loc{}, "data_files %q miss data file %s", patterns, f)
			} else {
				c.errorf("card.configs", cardPath, loc{}, "data_files %q take %s, which is no data file", patterns, f)
			}
		}
	}
}

// checkCardInfo compares the embedded info.json with meta/info.json.
func (c *checker) checkCardInfo(body string) {
	const open = "[meta/info.json](meta/info.json):\n```json\n"
	_, after, ok := strings.Cut(body, open)
	block, _, ok2 := strings.Cut(after, "\n```")
	if !ok || !ok2 {
		c.errorf("card.info", cardPath, loc{}, "no embedded meta/info.json block (LeRobot's card shows it under Dataset Structure)")
		return
	}
	want, err := input.ReadFile(filepath.Join(c.dir, infoPath))
	if err != nil || block == string(want) {
		// The card embeds info.json as written; the same bytes are the
		// same document (whether info.json parses is the structure
		// check's finding).
		return
	}
	var got, ref any
	dec := json.NewDecoder(strings.NewReader(block))
	dec.UseNumber()
	if err := dec.Decode(&got); err != nil {
		c.errorf("card.info", cardPath, loc{}, "the embedded info.json does not parse: %v", err)
		return
	}
	dec = json.NewDecoder(bytes.NewReader(want))
	dec.UseNumber()
	if dec.Decode(&ref) != nil {
		return // info.json findings are the structure check's
	}
	if !reflect.DeepEqual(got, ref) {
		c.errorf("card.info", cardPath, loc{}, "the embedded info.json differs from meta/info.json")
	}
}

// checkCardProvenance checks the CERES section against the episodes and
// the stored files.
func (c *checker) checkCardProvenance(body string) {
	m := cardSessionRe.FindStringSubmatch(body)
	if m == nil {
		c.errorf("card.provenance", cardPath, loc{}, "the card names no CERES session")
		return
	}
	session := cardEscapeRe.ReplaceAllString(m[1], "$1")
	var specs []string
	for _, s := range tableRows(cardSpecRe, body) {
		specs = append(specs, s[1])
		redacted := layout.RedactedSpecPath(s[1])
		if c.specs[s[1]] == nil && !slices.Contains(c.files, redacted) {
			c.errorf("card.provenance", cardPath, loc{}, "the card names specification %s, which the shard does not store", s[1])
		}
	}
	if p := cardProfileRe.FindStringSubmatch(body); p != nil {
		if c.profile == nil || c.profile.Hash() != p[1] {
			c.errorf("card.provenance", cardPath, loc{}, "the card names profile %s, which is not the stored ceres/profile.json", p[1])
		}
	} else if c.profile != nil {
		c.errorf("card.provenance", cardPath, loc{}, "the card names no feature profile, but the shard applied %s", c.profile.Hash())
	}
	if c.episodes == nil {
		return
	}
	var episodes []int64
	for _, a := range tableRows(cardAttemptRe, body) {
		if a[1] != "accepted" {
			continue
		}
		n, err := strconv.ParseInt(a[2], 10, 64)
		if err != nil {
			c.errorf("card.provenance", cardPath, loc{}, "an accepted attempt without episode index")
			continue
		}
		episodes = append(episodes, n)
	}
	slices.Sort(episodes)
	var have []int64
	for _, er := range c.episodes.Rows {
		have = append(have, er.EpisodeIndex)
		if s, _ := er.Ceres[layout.ColSessionID].(string); s != session {
			c.errorf("card.provenance", cardPath, ep(er.EpisodeIndex), "the card names session %q, the episode %q", session, s)
		}
		if h, _ := er.Ceres[layout.ColSpecHash].(string); !slices.Contains(specs, h) {
			c.errorf("card.provenance", cardPath, ep(er.EpisodeIndex), "the episode's specification %s is not in the card", h)
		}
	}
	slices.Sort(have)
	if !slices.Equal(episodes, have) {
		c.errorf("card.provenance", cardPath, loc{}, "the card's accepted attempts are episodes %v, the shard's episodes %v", episodes, have)
	}
}

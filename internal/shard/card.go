package shard

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"text/template"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// Card is what a dataset card says beside LeRobot's own template.
type Card struct {
	// Tags follow LeRobot's own "LeRobot" tag.
	Tags []string
	// Description is markdown: the template's dataset_description.
	Description string
	// License is the dataset's licence, an id of Licenses (CheckLicense),
	// or "" for none: LeRobot's license argument, which the Hub reads from
	// the card data.
	License string
}

// cardTemplate renders what LeRobot's create_lerobot_dataset_card
// (lerobot/datasets/utils.py with card_template.md, through
// huggingface_hub's DatasetCard.from_template and PyYAML) writes for a
// dataset without repo_id, url, paper or citation: the card data (license
// when there is one, task_categories, tags, configs pointing at the data
// files: DatasetCardData's order, which puts license before
// task_categories), the description, the licence line ("[More Information
// Needed]" without one), and meta/info.json as json.dumps(info, indent=4).
// Every id of Licenses is a scalar PyYAML writes plain. The blank
// lines are those the Jinja template leaves (the repo_id block renders
// empty); like DatasetCard's text, the file ends without a newline. The
// conformance check compares this with LeRobot's own output byte for
// byte.
var cardTemplate = template.Must(template.New("card").Funcs(template.FuncMap{"yamlString": yamlString}).Parse(`---
{{if .License}}license: {{.License}}
{{end}}task_categories:
- robotics
tags:
- LeRobot
{{range .Tags}}- {{yamlString .}}
{{end}}configs:
- config_name: default
  data_files: {{.DataFiles}}
---

This dataset was created using [LeRobot](https://github.com/huggingface/lerobot).



## Dataset Description

{{.Description}}

- **Homepage:** [More Information Needed]
- **Paper:** [More Information Needed]
- **License:** {{if .License}}{{.License}}{{else}}[More Information Needed]{{end}}

## Dataset Structure

[{{.InfoPath}}]({{.InfoPath}}):
` + "```json\n{{.Info}}\n```" + `


## Citation

**BibTeX:**

` + "```bibtex\n[More Information Needed]\n```"))

// plainYAML matches the strings PyYAML writes unquoted and that read back
// as the same string (not a number, boolean or null).
var plainYAML = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

// yamlString writes s as a YAML scalar that reads back as the string s:
// plain where PyYAML writes it plain, otherwise double-quoted with JSON
// escapes (valid YAML 1.2).
func yamlString(s string) string {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE",
		"on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL":
		return strconv.Quote(s)
	}
	if plainYAML.MatchString(s) {
		return s
	}
	return strconv.QuoteToASCII(s)
}

// WriteCard writes the dataset card (layout.CardPath, the file the Hugging
// Face Hub shows and LeRobot's push_to_hub writes) after Finish: LeRobot's
// card around c and the shard's info.json.
func (b *Builder) WriteCard(c Card) error {
	if !b.finished || b.err != nil {
		return fmt.Errorf("shard: the dataset card is written after a successful Finish")
	}
	if c.License != "" {
		if err := CheckLicense(c.License); err != nil {
			return fmt.Errorf("shard: %s: license %q: %w", layout.CardPath, c.License, err)
		}
	}
	info, err := marshalPyJSON(b.infoJSON(), 4, true)
	if err != nil {
		return fmt.Errorf("shard: %s: %w", layout.CardPath, err)
	}
	var buf bytes.Buffer
	if err := cardTemplate.Execute(&buf, struct {
		Card
		Info, InfoPath, DataFiles string
	}{c, string(info), layout.InfoPath, layout.DataDir + "/*/*" + layout.ParquetExt}); err != nil {
		return fmt.Errorf("shard: %s: %w", layout.CardPath, err)
	}
	if err := writeStaged(b.path(layout.CardPath), buf.Bytes()); err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	return nil
}

var markdownSpecial = regexp.MustCompile("[\\\\`*_\\[\\]<>|#]")

// MarkdownCell escapes s for a markdown table cell or inline text of a
// dataset card: backslash before markup characters (a pipe would end the
// cell), line breaks as spaces. verify reads a cell back by dropping each
// escaping backslash.
func MarkdownCell(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	return markdownSpecial.ReplaceAllString(s, `\$0`)
}

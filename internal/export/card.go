package export

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// cardDescription is the CERES part of the dataset card (README.md): where
// the episodes came from. text/template, not html/template: the output is
// markdown, and table cells are escaped for markdown by shard.MarkdownCell.
var cardDescription = template.Must(template.New("provenance").Funcs(template.FuncMap{"cell": shard.MarkdownCell}).Parse(
	`{{if .RunTitle}}{{cell .RunTitle}}: {{end}}CERES session {{cell .SessionID}} exported by ceres-export {{.Version}}, {{.Episodes}} episodes, {{.Frames}} frames at {{.FPS}} fps.
{{- if .RunDescription}}

{{cell .RunDescription}}{{end}}

### CERES provenance

Task specifications (canonical JSON, named by SHA-256):

| role | version | sha256 | file |
| --- | --- | --- | --- |
{{range .Specs}}| {{.Role}} | {{.Version}} | ` + "`{{.Hash}}`" + ` | [{{.Path}}]({{.Path}}) |
{{end}}{{if .Differences}}
The applied specification corrects the recorded one:
{{range .Differences}}
- ` + "`{{.Path}}`" + `: {{cell .Old}} → {{cell .New}}{{end}}
{{end}}
Feature profile: {{if .ProfileHash}}sha256 ` + "`{{.ProfileHash}}`" + ` ([{{.ProfilePath}}]({{.ProfilePath}})).{{else}}none (one feature per sensor field).{{end}}

Tasks:

| task | type | label | instructions |
| --- | --- | --- | --- |
{{range .Tasks}}| {{cell .ID}} | {{.Type}} | {{cell .Label}} | {{cell .Instructions}} |
{{end}}{{if .MetadataOnly}}
A metadata-only dataset ({{.PrivacyPath}}): no video, no run title, description or instructions; the session id is a salted hash; the specifications are stored redacted.
{{end}}
Attempts: {{.Fates}}. Only accepted attempts are episodes; a retried take never is.

| cycle | task | repetition | attempt | fate | episode | outcome | note |
| --- | --- | --- | --- | --- | --- | --- | --- |
{{range .Attempts}}| {{.Cycle}} | {{cell .Task}} | {{.Repetition}} | {{.Attempt}} | {{.Fate}} | {{if ge .Episode 0}}{{.Episode}}{{end}} | {{.Outcome}} | {{cell .Reason}} |
{{end}}
Every episode carries its attempt in {{.EpisodesDir}} (` + "`{{.CeresPrefix}}*`" + ` columns); ` + "`{{.ExportReportPath}}`" + ` has the full export report.`))

type cardSpec struct {
	Role, Hash, Path string
	Version          int
}

type cardTask struct {
	ID, Type, Label, Instructions string
}

// writeCard writes README.md: LeRobot's dataset card with the session's
// provenance as its description. rep is the report as stored (redacted in a
// metadata-only dataset), and a metadata-only card says nothing the
// privacy rules keep out (docs/privacy.md).
func writeCard(b *shard.Builder, rep *Report, p *plan.Plan, applied, recorded *taskspec.Spec, sessionID string, metadataOnly bool, robotType string) error {
	specs := []cardSpec{{Role: "applied", Hash: applied.Hash(), Version: applied.Version}}
	if recorded.Hash() != applied.Hash() {
		specs = append(specs, cardSpec{Role: "recorded", Hash: recorded.Hash(), Version: recorded.Version})
	} else {
		specs[0].Role = "applied and recorded"
	}
	for i := range specs {
		specs[i].Path = layout.SpecPath(specs[i].Hash)
		if metadataOnly {
			specs[i].Path = layout.RedactedSpecPath(specs[i].Hash)
		}
	}
	title, description := applied.RunTitle, applied.RunDescription
	var tasks []cardTask
	for _, t := range applied.Tasks {
		ct := cardTask{ID: t.ID, Type: t.Type, Label: t.Label, Instructions: t.Instructions}
		if metadataOnly {
			ct.Label, ct.Instructions = privacy.TaskLabel(t, sessionID, applied, recorded), privacy.Redacted
		}
		tasks = append(tasks, ct)
	}
	if metadataOnly {
		title, description = "", ""
	}
	var fates []string
	for _, f := range slices.Sorted(maps.Keys(rep.Fates)) {
		fates = append(fates, fmt.Sprintf("%d %s", rep.Fates[f], f))
	}
	data := map[string]any{
		"RunTitle": title, "RunDescription": description, "MetadataOnly": metadataOnly,
		"SessionID": rep.SessionID, "Version": rep.Exporter.Version,
		"Episodes": rep.Episodes, "Frames": rep.Frames, "FPS": rep.FPS,
		"Specs": specs, "Differences": rep.Spec.Differences,
		"ProfileHash": rep.Exporter.Options.ProfileHash, "ProfilePath": layout.ProfilePath,
		"PrivacyPath": layout.PrivacyMarkerPath, "EpisodesDir": layout.EpisodesDir, "CeresPrefix": layout.CeresPrefix,
		"ExportReportPath": layout.ExportReportPath,
		"Tasks":            tasks, "Fates": strings.Join(fates, ", "), "Attempts": p.Attempts,
	}
	var buf bytes.Buffer
	if err := cardDescription.Execute(&buf, data); err != nil {
		return fmt.Errorf("export: dataset card: %w", err)
	}
	tags := []string{"CERES"}
	if robotType != "" {
		tags = append(tags, robotType)
	}
	return b.WriteCard(shard.Card{Tags: tags, Description: buf.String(), License: rep.Exporter.Options.License})
}

// mdSpecial are the characters that would end a table cell, start markup
// or break a line.

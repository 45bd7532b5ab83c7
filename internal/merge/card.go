package merge

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/shard"
)

// cardDescription is the CERES part of a merged dataset's card (README.md):
// what it was made of. Merged datasets are what people train on and upload,
// so the card says on the Hub what the merge report says in JSON. Every
// string a user wrote reaches it through shard.MarkdownCell, and only
// strings the dataset already holds in its metadata do (a metadata-only
// merge's source names, session ids and task strings are already public).
// verify reads the tables back (checkMergedCard).
var cardDescription = template.Must(template.New("merged").Funcs(template.FuncMap{"cell": shard.MarkdownCell}).Parse(
	`CERES dataset merged by ceres-export {{.Version}} from {{len .Sources}} shards of {{.Sessions}} sessions: {{.Episodes}} episodes, {{.Frames}} frames at {{.FPS}} fps, {{len .Tasks}} tasks.

### CERES provenance

Sources in episode order ([{{.ReportPath}}]({{.ReportPath}}) has each one's export report hash and content fingerprint):
` + cardSourcesHead + `{{.SourceRows}}
Task specifications (canonical JSON, named by SHA-256):

| sha256 | file |
| --- | --- |
{{range .Specs}}| ` + "`{{.Hash}}`" + ` | [{{.Path}}]({{.Path}}) |
{{end}}` + cardTasksHead + `{{range .Tasks}}| {{.Index}} | {{cell .Text}} | {{.Episodes}} |
{{end}}
Merge runs:

| run | ceres-export | shards added | quantiles |
| --- | --- | --- | --- |
{{range .Runs}}| {{.Index}} | {{cell .Version}} | {{.Added}} | {{.Quantiles}} |
{{end}}{{if .MetadataOnly}}
A metadata-only dataset ({{.PrivacyPath}}): every source is a metadata-only export; no video, no instructions, salted session ids.
{{end}}
Every episode carries its source and attempt in {{.EpisodesDir}} (` + "`{{.CeresPrefix}}*`" + ` columns).`))

// foreignSession is the session cell of a foreign source: it has none, and
// the cell names its writer instead (verify's checkMergedCard reads it so).
const foreignSession = "foreign: "

type cardTask struct {
	Index    int
	Text     string
	Episodes int
}

type cardRun struct {
	Index, Added       int
	Version, Quantiles string
}

type cardSpec struct{ Hash, Path string }

// writeCard writes the merged dataset's card after b.Finish.
func (m *merger) writeCard(b *shard.Builder, report *Report) error {
	private := m.sources[0].private
	// A row a source, written here rather than by the template: the
	// table is the card's only part that grows with the dataset, and the
	// template's reflection made it a tenth of an append to 1,000 shards.
	// An append's rows of the sources already there are those of the
	// card it replaces, unchanged (keptDataset).
	var rows strings.Builder
	kept := 0
	if k := m.sources[0].kept; k != nil {
		rows.WriteString(k.sourceRows)
		kept = len(m.sources[0].merged.Sources)
	}
	sessions := map[string]bool{}
	for i, s := range report.Sources {
		session := s.SessionID
		if s.Foreign != nil {
			session = foreignSession + s.Foreign.Writer
		} else {
			sessions[s.SessionID] = true
		}
		if i < kept {
			continue
		}
		fmt.Fprintf(&rows, "| %s | %s | %d-%d | %d | %s | %d |\n", shard.MarkdownCell(s.Name), shard.MarkdownCell(session),
			s.FirstEpisode, s.FirstEpisode+s.Episodes-1, s.Frames, shard.MarkdownCell(s.CampaignTaskID), s.Run)
	}
	var specs []cardSpec
	for _, h := range slices.Sorted(maps.Keys(m.specHashes)) {
		p := layout.SpecPath(h)
		if private {
			p = layout.RedactedSpecPath(h)
		}
		specs = append(specs, cardSpec{h, p})
	}
	perTask := m.perTask
	var tasks []cardTask
	for i, t := range b.Tasks() {
		tasks = append(tasks, cardTask{i, t, perTask[t]})
	}
	var runs []cardRun
	for i, r := range report.Runs {
		runs = append(runs, cardRun{Index: i, Added: len(r.Sources), Version: r.Version, Quantiles: r.Options.Quantiles})
	}
	var buf bytes.Buffer
	err := cardDescription.Execute(&buf, map[string]any{
		"Version": m.opts.Version, "Sources": report.Sources, "SourceRows": rows.String(), "Sessions": len(sessions),
		"Episodes": report.Episodes, "Frames": report.Frames, "FPS": m.sources[0].fps,
		"ReportPath": layout.MergeReportPath, "Specs": specs, "Tasks": tasks, "Runs": runs,
		"MetadataOnly": private, "PrivacyPath": layout.PrivacyMarkerPath,
		"EpisodesDir": layout.EpisodesDir, "CeresPrefix": layout.CeresPrefix,
	})
	if err != nil {
		return fmt.Errorf("merge: dataset card: %w", err)
	}
	tags := []string{"CERES"}
	if r := robotString(m.sources[0].robotType); r != "" {
		tags = append(tags, r)
	}
	return b.WriteCard(shard.Card{Tags: tags, Description: buf.String(), License: report.License})
}

// cardSourcesHead and cardTasksHead open the card's tables of sources and
// of tasks: cardDescription writes them, readKeptCard finds the tables by
// them.
const (
	cardSourcesHead = "\n| source | session | episodes | frames | campaign task | merge run |\n| --- | --- | --- | --- | --- | --- |\n"
	cardTasksHead   = "\nTasks:\n\n| task_index | task | episodes |\n| --- | --- | --- |\n"
)

// readKeptCard reads, from the card of merged dataset ds whose tasks are
// tasks and whose merge report lists sources sources, the episodes of each
// task and the source table's rows: what an append counts on from and
// writes again (keptDataset) instead of reading every episode's task and
// formatting every source's row. It is an error unless the tables are as
// cardDescription writes them, a row a task in order and a row a source.
func readKeptCard(ds *shard.Dataset, tasks []string, sources int) ([]int, string, error) {
	p := ds.Path(layout.CardPath)
	data, err := input.ReadFile(p)
	if err != nil {
		return nil, "", err
	}
	_, rows, ok := strings.Cut(string(data), cardSourcesHead)
	if !ok {
		return nil, "", fmt.Errorf("%s: no table of sources", p)
	}
	end := strings.Index(rows, "\n\n")
	if end < 0 || strings.Count(rows[:end+1], "\n") != sources {
		return nil, "", fmt.Errorf("%s: the table of sources has not a row for each of the %d sources of %s", p, sources, layout.MergeReportPath)
	}
	sourceRows := rows[:end+1]
	counts, err := cardTaskCounts(p, string(data), tasks)
	return counts, sourceRows, err
}

// cardTaskCounts reads the table of tasks of card, the contents of p.
func cardTaskCounts(p, card string, tasks []string) ([]int, error) {
	_, table, ok := strings.Cut(card, cardTasksHead)
	if !ok {
		return nil, fmt.Errorf("%s: no table of tasks", p)
	}
	counts := make([]int, 0, len(tasks))
	for i := range tasks {
		row, rest, ok := strings.Cut(table, "\n")
		if !ok {
			return nil, fmt.Errorf("%s: tasks table: %d rows, want %d", p, i, len(tasks))
		}
		table = rest
		// The task's cell may hold escaped pipes: the index is read from
		// the row's start and the count from its end.
		idx, ok1 := strings.CutPrefix(row, fmt.Sprintf("| %d | ", i))
		j := strings.LastIndex(idx, " | ")
		n, err := strconv.Atoi(strings.TrimSuffix(idx[max(j, 0)+len(" | "):], " |"))
		if !ok1 || j < 0 || !strings.HasSuffix(row, " |") || err != nil || n < 0 || idx[:j] != shard.MarkdownCell(tasks[i]) {
			return nil, fmt.Errorf("%s: tasks table row %d %q: want \"| %d | %s | <episodes> |\"", p, i, row, i, shard.MarkdownCell(tasks[i]))
		}
		counts = append(counts, n)
	}
	if !strings.HasPrefix(table, "\n") {
		return nil, fmt.Errorf("%s: tasks table: more than %d rows", p, len(tasks))
	}
	return counts, nil
}

package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/settings"
)

var update = flag.Bool("update", false, "rewrite the generated sections of docs/ (the export options of docs/campaigns.md)")

const (
	optionsBegin = "<!-- export-options: generated from internal/settings and the export command's flags by TestCampaignDocListsEveryExportOption; refresh with go test ./cmd/ceres-export -run TestCampaignDocListsEveryExportOption -update -->\n"
	optionsEnd   = "<!-- end export-options -->\n"
)

// exportOptionsTable is the manifest's export options as a Markdown table:
// one row per setting, in the settings' order, with the export flag's type,
// default and help, so that the list a manifest author reads is the one
// the commands take.
func exportOptionsTable() string {
	cmd := newExportCmd(streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
	var b strings.Builder
	b.WriteString("| manifest key | flag | value | default | meaning |\n|---|---|---|---|---|\n")
	for _, name := range settings.SettingNames() {
		f := cmd.Flags().Lookup(settings.FlagName(name))
		value := f.Value.Type()
		switch value {
		case "stringArray", "stringSlice":
			value = "array of strings"
		case "bool":
			value = "true or false"
		}
		def := f.DefValue
		switch def {
		case "", "[]", "false", "0":
			def = "–"
		default:
			def = "`" + def + "`"
		}
		usage := strings.ReplaceAll(f.Usage, "|", `\|`)
		fmt.Fprintf(&b, "| `%s` | `--%s` | %s | %s | %s |\n", name, f.Name, value, def, usage)
	}
	return b.String()
}

// docs/campaigns.md lists every export option a manifest takes, generated
// from the one settings table and the flags it backs.
func TestCampaignDocListsEveryExportOption(t *testing.T) {
	const path = "../../docs/campaigns.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, optionsBegin), strings.Index(s, optionsEnd)
	if i < 0 || j < i {
		t.Fatalf("%s: no generated export options section (%q ... %q)", path, optionsBegin, optionsEnd)
	}
	want := s[:i+len(optionsBegin)] + exportOptionsTable() + s[j:]
	if want == s {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the export options section is stale; run go test ./cmd/ceres-export -run TestCampaignDocListsEveryExportOption -update", path)
}

package shard

import (
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
)

// yamlString writes every string so that YAML reads the same string back.
func TestYAMLString(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"CERES", "phone-demonstrator", "so100", "yes", "no", "null", "1.5", "12", "a b", "a: b", "-x", "#x", "é", "x\ny", `q"uote`, ""} {
		var list []any
		if err := yaml.Unmarshal([]byte("- "+yamlString(s)), &list); err != nil || len(list) != 1 || list[0] != s {
			t.Errorf("%q written as %s reads back as %#v (%v)", s, yamlString(s), list, err)
		}
	}
}

func TestWriteCardNeedsFinish(t *testing.T) {
	t.Parallel()
	b, err := NewBuilder(t.TempDir(), []Feature{{Name: "x", Dtype: lerobot.Float32, Shape: []int{1}}}, Options{FPS: 30})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteCard(Card{}); err == nil {
		t.Error("a card written before Finish")
	}
}

func TestMarkdownCell(t *testing.T) {
	for in, want := range map[string]string{
		"Pick sample":     "Pick sample",
		"a|b":             `a\|b`,
		"*bold* _x_ `c`":  `\*bold\* \_x\_ \` + "`" + `c\` + "`",
		"line\nbreak\r\n": "line break ",
		`back\slash <b>`:  `back\\slash \<b\>`,
		"# [link](x)":     `\# \[link\](x)`,
	} {
		if got := MarkdownCell(in); got != want {
			t.Errorf("MarkdownCell(%q) = %q, want %q", in, got, want)
		}
	}
}

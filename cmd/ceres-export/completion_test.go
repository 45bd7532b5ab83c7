package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/internal/settings"
	"github.com/ceres-robotics/ceres-export/internal/shard"
)

// Every value the shell offers is one the flag's own parser takes, and the
// shell is offered it on every command with that flag.
func TestFlagCompletions(t *testing.T) {
	parse := map[string]func(string) error{
		"vcodec": func(v string) error {
			_, err := export.Resolve(settings.Settings{Vcodec: v}, t.TempDir())
			return err
		},
		"quantiles": func(v string) error { _, err := shard.ParseQuantileAggregation(v); return err },
		"privacy":   func(v string) error { _, err := privacy.ParseMode(v); return err },
		"license":   func(v string) error { return checkLicenseFlag(v) },
	}
	table := flagCompletions()
	for name, fc := range table {
		if len(fc.values) == 0 {
			continue
		}
		p := parse[name]
		if p == nil {
			t.Errorf("--%s: completion values with no parser in this test", name)
			continue
		}
		for _, v := range fc.values {
			if err := p(completionValue(v)); err != nil {
				t.Errorf("--%s completes %q, which it refuses: %v", name, completionValue(v), err)
			}
		}
	}
	for _, c := range []struct {
		cmd, flag string
		want      []string
	}{
		{"export", "vcodec", []string{"av1", "h264"}},
		{"export", "privacy", []string{"full", "metadata-only"}},
		{"export", "profile", []string{"yaml", "json"}},
		{"merge", "quantiles", []string{"weighted-mean", "envelope"}},
		{"merge", "privacy", []string{"metadata-only"}},
		{"verify", "privacy", []string{"metadata-only"}},
		{"verify", "task-spec", []string{"json"}},
		{"export", "license", []string{"apache-2.0", "cc-by-4.0", "other"}},
		{"merge", "license", []string{"cc-by-nc-4.0"}},
		{"batch", "license", []string{"cc0-1.0"}},
	} {
		var out, errOut bytes.Buffer
		Main(context.Background(), []string{"__complete", c.cmd, "--" + c.flag, ""}, streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
		var got []string
		for _, line := range strings.Split(out.String(), "\n") {
			if line != "" && !strings.HasPrefix(line, ":") {
				got = append(got, completionValue(line))
			}
		}
		for _, w := range c.want {
			if !strings.Contains(strings.Join(got, " ")+" ", w+" ") {
				t.Errorf("%s --%s completes %q, want %q among them", c.cmd, c.flag, got, w)
			}
		}
	}
}

// A mistyped flag gets the flags near it, as a mistyped command gets cobra's
// "did you mean".
func TestUnknownFlagSuggestions(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // "" means no suggestion
	}{
		{[]string{"export", "--vcodc", "h264"}, "--vcodec"},
		{[]string{"merge", "--quantile", "envelope"}, "--quantiles"},
		{[]string{"export", "--verbos"}, "--verbose"}, // inherited
		{[]string{"verify", "--privcy", "full"}, "--privacy"},
		{[]string{"merge", "--zzzzzz"}, ""},
	} {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), c.args, streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
		msg := errOut.String()
		if code != 2 || !strings.Contains(msg, "unknown flag") {
			t.Errorf("%v: exit %d, %q; want a usage error", c.args, code, msg)
			continue
		}
		if c.want == "" {
			if strings.Contains(msg, "Did you mean") || !strings.Contains(msg, "--help") {
				t.Errorf("%v: %q, want no suggestion and a pointer to --help", c.args, msg)
			}
		} else if !strings.Contains(msg, "Did you mean this?\n\t"+c.want) {
			t.Errorf("%v: %q, want a suggestion of %s", c.args, msg, c.want)
		}
	}
}

// completionValue is a completion's value without its description.
func completionValue(v string) string {
	value, _, _ := strings.Cut(v, "\t")
	return value
}

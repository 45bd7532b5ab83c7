package campaign

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// hostileValues are path parts and option values that a shell or sbatch
// would take apart if they were not quoted.
var hostileValues = []string{
	"with space", `dq"uote`, "sq'uote", "$(touch PWNED)", "`touch PWNED`", "semi;touch PWNED",
	"hash#not a comment", "pct%A%j%%", `back\slash`, "tab\there", "and&touch PWNED|cat", "*glob?[x]", "-dash",
}

// sbatchArgument is sbatch's reading of one #SBATCH directive's argument
// (src/sbatch/opt.c, _get_argument): quotes group, a backslash makes the
// next character plain, an unquoted '#' ends the line.
func sbatchArgument(line string) string {
	var out strings.Builder
	quoted, escape := false, false
	var q byte
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	for ; i < len(line) && (quoted || line[i] != ' ' && line[i] != '\t') && line[i] != '\n'; i++ {
		c := line[i]
		switch {
		case escape:
			escape = false
		case c == '\\':
			escape = true
			continue
		case quoted:
			if c == q {
				quoted = false
				continue
			}
		case c == '"' || c == '\'':
			quoted, q = true, c
			continue
		case c == '#':
			return out.String()
		}
		out.WriteByte(c)
	}
	return out.String()
}

// sbatchDirectives returns the #SBATCH options of a script as sbatch reads
// them, option to value.
func sbatchDirectives(script string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(script, "\n") {
		rest, ok := strings.CutPrefix(line, "#SBATCH ")
		if !ok {
			continue
		}
		k, v, _ := strings.Cut(sbatchArgument(rest), "=")
		out[k] = v
	}
	return out
}

// Every value that reaches a SLURM script arrives as
// written: sbatch reads each #SBATCH value whole, bash runs exactly the
// batch and merge command lines with each argument as given, and nothing
// else runs.
func TestSlurmScriptsQuoteEveryValue(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	for _, v := range hostileValues {
		t.Run(v, func(t *testing.T) {
			dir := t.TempDir()
			// A stand-in binary that writes its arguments, NUL-separated.
			bin := filepath.Join(dir, "bin "+v)
			if err := os.MkdirAll(bin, 0o755); err != nil {
				t.Fatal(err)
			}
			argsFile := filepath.Join(dir, "args")
			exe := filepath.Join(bin, "ceres-export")
			if err := os.WriteFile(exe, []byte("#!/bin/bash\nprintf '%s\\0' \"$@\" >> "+shellJoin([]string{argsFile})+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			m := mustParse(t, `{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}},
				"cases": [{"case_id": "touch-pwned", "setting_id": "s", "run_id": "1", "session": "x"}]}`)
			out := filepath.Join(dir, "out "+v)
			if strings.Contains(v, `\`) {
				out = filepath.Join(dir, "out") // refused there (TestSlurmScriptsRefuseNewlines)
			}
			o := ScriptOptions{Binary: exe, Manifest: filepath.Join(dir, "m "+v, "c.json"), Out: out,
				Merge: filepath.Join(dir, "merged "+v), ArrayCount: 1, Partition: "p " + v, Time: "t " + v,
				Selection: Selection{CaseIDs: []string{"$(touch PWNED)"}}}
			array, err := SlurmArrayScript("c", 1, o)
			if err != nil {
				t.Fatal(err)
			}
			merge, err := SlurmMergeScript("c", m.Tasks, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, sc := range []struct{ name, script string }{{"array", array}, {"merge", merge}} {
				name, script := sc.name, sc.script
				d := sbatchDirectives(script)
				logs := strings.ReplaceAll(o.Out+"/.slurm/logs/", "%", "%%")
				want := map[string]string{"--partition": o.Partition, "--time": o.Time}
				if name == "array" {
					want["--output"] = logs + "array-%A_%a.out"
				} else {
					want["--output"] = logs + "merge-%j.out"
				}
				for k, w := range want {
					if d[k] != w {
						t.Errorf("%s script: sbatch reads %s as %q, want %q\n%s", name, k, d[k], w, script)
					}
				}
				// bash runs the script (its #SBATCH lines are comments).
				path := filepath.Join(dir, name+".sbatch")
				os.WriteFile(path, []byte(script), 0o755)
				cmd := exec.Command("bash", path)
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s script: %v\n%s\n%s", name, err, out, script)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
				t.Fatal("a value ran as a command")
			}
			raw, _ := os.ReadFile(argsFile)
			var calls [][]string
			for _, line := range bytes.Split(bytes.TrimSuffix(raw, []byte{0}), []byte{0}) {
				if string(line) == "batch" || string(line) == "merge" {
					calls = append(calls, nil)
				}
				calls[len(calls)-1] = append(calls[len(calls)-1], string(line))
			}
			wantCalls := [][]string{
				o.batchArgs()[1:],
				{"merge", o.Out + "/c__touch-pwned__s__run-1", "-o", o.Merge + "/s", "--replace"},
			}
			if !reflect.DeepEqual(calls, wantCalls) {
				t.Errorf("the scripts ran\n%q\nwant\n%q", calls, wantCalls)
			}
			if _, err := os.Stat(o.Merge); err != nil {
				t.Errorf("the merge script's mkdir: %v", err)
			}
		})
	}
}

// A value with a newline (or NUL) cannot be carried by an
// #SBATCH line, whatever the quoting, nor a backslash by OUT's log path:
// the script is refused, naming it.
func TestSlurmScriptsRefuseNewlines(t *testing.T) {
	base := ScriptOptions{Binary: "/b", Manifest: "/m.json", Out: "/o", Merge: "/d", ArrayCount: 1}
	for _, c := range []struct {
		name string
		edit func(*ScriptOptions)
		say  string
	}{
		{"OUT", func(o *ScriptOptions) { o.Out = "/o\nrm -rf ~" }, "OUT"},
		{"a backslash in OUT", func(o *ScriptOptions) { o.Out = `/o\x` }, "backslash"},
		{"--merge", func(o *ScriptOptions) { o.Merge = "/d\ntouch PWNED" }, "--merge"},
		{"--partition", func(o *ScriptOptions) { o.Partition = "gpu\n#SBATCH --uid=0" }, "--partition"},
		{"--time", func(o *ScriptOptions) { o.Time = "1:00\n" }, "--time"},
		{"the manifest", func(o *ScriptOptions) { o.Manifest = "/m\n.json" }, "manifest"},
		{"the binary", func(o *ScriptOptions) { o.Binary = "/b\x00in" }, "binary"},
		{"a selection", func(o *ScriptOptions) { o.Selection.RunIDs = []string{"1\x00"} }, "--run-id"},
	} {
		o := base
		c.edit(&o)
		if _, err := SlurmArrayScript("c", 1, o); err == nil || !strings.Contains(err.Error(), c.say) {
			t.Errorf("%s: array script error %v, want one naming %s", c.name, err, c.say)
		}
		if _, err := SlurmMergeScript("c", nil, o); err == nil {
			t.Errorf("%s: the merge script was written", c.name)
		}
	}
}

// The job name is a DNS-1123 label whatever the
// campaign id (Kubernetes refuses a Job named "ceres-a..b-c").
func TestJobNameIsADNSLabel(t *testing.T) {
	label := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	for _, id := range []string{"a..b_c", "week-48", "x", "a.b.c", "a_b", strings.Repeat("long.", 30), "9lives", "a-", strings.Repeat("x", 44) + "._-y"} {
		for _, suffix := range []string{"", "-merge"} {
			n := jobName(NormaliseID(id), suffix)
			if !label.MatchString(n) || len(n) > 63 {
				t.Errorf("jobName(%q, %q) = %q: not a DNS-1123 label of at most 63 characters", id, suffix, n)
			}
		}
	}
	if got := jobName("week-48", ""); got != "ceres-week-48" {
		t.Errorf("jobName(week-48) = %q", got)
	}
}

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// noneOf fails when any file under dir holds one of the strings, compared
// as the privacy rules compare (privacy.Find).
func noneOf(t *testing.T, dir string, private ...string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, f := range privacy.Find(b, private) {
			rel, _ := filepath.Rel(dir, p)
			t.Errorf("%s holds %q %s", rel, f.Private, f.Where)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// What a user wrote into a campaign (case ids, often a
// session's name or id; extension values; the shard directories a merge
// joins, named after their sessions) never reaches a metadata-only dataset
// as written, and verify --privacy agrees.
func TestE2EMetadataOnlyCampaign(t *testing.T) {
	dir := t.TempDir()
	var cases []string
	var sessions []string
	for i, seed := range []int{5, 6} {
		session := filepath.Join(dir, fmt.Sprintf("rig3-0412-%d", i))
		mustRun(t, "synth", "-o", session, "--seed", fmt.Sprint(seed), "--time-scale", "0.1", "--width", "64", "--height", "48")
		sessions = append(sessions, session)
		// The case id is the session's id in capitals; an extension quotes
		// the instructions, another names a person.
		cases = append(cases, fmt.Sprintf(`{"case_id": "SYNTH-%d", "setting_id": "share", "run_id": "1", "session": %q,
		  "extensions": {"org.lab.note": "Pick one sample", "org.lab.owner": "Ana Lima", "org.lab.take": %d}}`, seed, session, i))
	}
	manifest := filepath.Join(dir, "campaign.json")
	if err := os.WriteFile(manifest, []byte(`{"schema_version": 1, "campaign_id": "Lab of Ana Lima",
	  "settings": {"share": {"export": {"privacy": "metadata-only"}}},
	  "cases": [`+strings.Join(cases, ",")+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	merged := filepath.Join(dir, "merged")
	mustRun(t, "batch", manifest, "-o", out, "--salt", "pepper", "--merge", merged)
	userWrote := []string{"SYNTH-5", "SYNTH-6", "Ana Lima", "Lab of Ana Lima", "rig3-0412", "Pick one sample"}
	for i, seed := range []int{5, 6} {
		shardDir := filepath.Join(out, fmt.Sprintf("lab-of-ana-lima__synth-%d__share__run-1", seed))
		noneOf(t, shardDir, userWrote...)
		mustRun(t, "verify", shardDir, "--privacy", "metadata-only", "--journal", sessions[i], "--salt", "pepper")
		var ext map[string]any
		b, err := os.ReadFile(filepath.Join(shardDir, "ceres", "extensions.json"))
		if err != nil || json.Unmarshal(b, &ext) != nil || ext["org.lab.owner"] != privacy.SaltedHash("pepper", "Ana Lima") || ext["org.lab.take"] != float64(i) {
			t.Errorf("extensions.json %s (%v): want salted string values, numbers as written", b, err)
		}
	}
	// A second merge of the same shards, under directories named after
	// the sessions.
	var named []string
	if err := os.MkdirAll(filepath.Join(dir, "shards"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, seed := range []int{5, 6} {
		d := filepath.Join(dir, "shards", filepath.Base(sessions[i]))
		copyTree(t, filepath.Join(out, fmt.Sprintf("lab-of-ana-lima__synth-%d__share__run-1", seed)), d)
		named = append(named, d)
	}
	merged2 := filepath.Join(dir, "merged2")
	mustRun(t, append(append([]string{"merge"}, named...), "-o", merged2, "--privacy", "metadata-only")...)
	for _, m := range []string{filepath.Join(merged, "share"), merged2} {
		noneOf(t, m, userWrote...)
		for _, s := range sessions {
			mustRun(t, "verify", m, "--privacy", "metadata-only", "--journal", s, "--salt", "pepper")
		}
	}
	// verify finds a case id written back, in any case.
	leak := filepath.Join(merged2, filepath.FromSlash(layout.InfoPath))
	b, _ := os.ReadFile(leak)
	if err := os.WriteFile(leak, bytes.Replace(b, []byte(`"robot_type": `), []byte(`"robot_type": "SYNTH-5", "x": `), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, code := run(t, "verify", merged2, "--privacy", "metadata-only", "--journal", sessions[0], "--salt", "pepper", "--quick")
	if code != exitFindings || !strings.Contains(stdout, "privacy.leak") {
		t.Errorf("verify of a merged dataset holding the session id in capitals: exit %d\n%s", code, stdout)
	}
}

// A re-export's labels are public only when they carry
// nothing private of the recorded specification either.
func TestE2EMetadataOnlyReexportLabels(t *testing.T) {
	session := synthSession(t, "--seed", "7")
	dir := t.TempDir()
	rec, err := os.ReadFile("../../../taskspec/testdata/example.json")
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := taskspec.Parse(rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, label string
	}{
		{"verbatim", "Pick one sample"},
		{"other case", "PICK ONE SAMPLE now"},
		{"separators", "pick_one-sample"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The corrected specification changes the pick task's
			// instructions and gives it a label that quotes the recorded
			// ones.
			fixed := strings.Replace(string(rec), `"instructions": "Pick one sample"`, `"instructions": "Take a vial from the tray"`, 1)
			fixed = strings.Replace(fixed, `"label": "Pick sample"`, `"label": "`+c.label+`"`, 1)
			spec := filepath.Join(dir, c.name+".json")
			if err := os.WriteFile(spec, []byte(fixed), 0o644); err != nil {
				t.Fatal(err)
			}
			shardDir := filepath.Join(dir, c.name)
			mustRun(t, "export", session, "-o", shardDir, "-q", "--privacy", "metadata-only", "--salt", "pepper", "--task-spec", spec)
			noneOf(t, shardDir, recorded.Tasks[0].Instructions, "Take a vial from the tray")
			mustRun(t, "verify", shardDir, "--privacy", "metadata-only", "--journal", session, "--salt", "pepper", "--task-spec", spec)
			tasks := mustRun(t, "verify", shardDir, "--json", "--quick")
			if !strings.Contains(tasks, `"sound": true`) {
				t.Errorf("re-export not sound:\n%s", tasks)
			}
		})
	}
}

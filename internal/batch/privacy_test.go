package batch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
)

// A metadata-only setting needs the salt before anything runs; the salt
// reaches each export and no file under OUT holds it.
func TestMetadataOnlyTasksGetTheSaltAndNeverRecordIt(t *testing.T) {
	dir := t.TempDir()
	s := filepath.Join(dir, "sa")
	if err := os.MkdirAll(filepath.Join(s, "journal"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s, "journal", "000001.cjl"), []byte{1}, 0o644); err != nil {
		t.Fatal(err)
	}
	doc := `{"schema_version": 1, "campaign_id": "c", "settings": {"share": {"export": {"privacy": "metadata-only"}}},
	 "cases": [{"case_id": "a", "setting_id": "share", "run_id": "1", "session": "sa"}]}`
	m, err := campaign.Parse(filepath.Join(dir, "c.json"), []byte(doc), false)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var got export.Options
	opts := Options{Out: out, ToolVersion: "test", export: func(_ context.Context, _, _ string, o export.Options) (*export.Report, error) {
		got = o
		return nil, errors.New("stop here")
	}}
	if _, err := Run(context.Background(), m.Tasks, opts); !errors.Is(err, privacy.ErrNoSalt) || !strings.Contains(err.Error(), "task c__a__share__run-1") {
		t.Fatalf("Run without salt: %v, want ErrNoSalt naming the task", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused run made OUT (%v)", err)
	}
	const salt = "pepper-secret-4711"
	opts.Salt = salt
	if _, err := Run(context.Background(), m.Tasks, opts); err != nil {
		t.Fatal(err)
	}
	if got.Privacy != privacy.MetadataOnly || got.Salt != salt {
		t.Errorf("export got privacy %q salt %q", got.Privacy, got.Salt)
	}
	err = filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
		if err != nil || !info.Mode().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), salt) {
			t.Errorf("%s holds the salt", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The descriptors' org comes from the org setting, else from an "org"
// extension (campaign < defaults < case, as every extension).
func TestDescriptorOrgFromSettingOrExtensions(t *testing.T) {
	doc := `{"schema_version": 1, "campaign_id": "c", "extensions": {"org": "lab-campaign"},
	 "settings": {"s": {}, "named": {"export": {"org": "lab-setting"}}},
	 "cases": [
	  {"case_id": "a", "setting_id": "s", "run_id": "1", "session": "sa"},
	  {"case_id": "b", "setting_id": "s", "run_id": "1", "session": "sb", "extensions": {"org": "lab-case"}},
	  {"case_id": "c", "setting_id": "named", "run_id": "1", "session": "sc", "extensions": {"org": "lab-case"}},
	  {"case_id": "d", "setting_id": "s", "run_id": "1", "session": "sd", "extensions": {"org": 7}}]}`
	m, err := campaign.Parse(filepath.Join(t.TempDir(), "c.json"), []byte(doc), false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "lab-campaign", "b": "lab-case", "c": "lab-setting", "d": ""}
	for _, task := range m.Tasks {
		if got := mustOptions(t, &task).Descriptors.Org; got != want[task.CaseID] {
			t.Errorf("case %s: org %q, want %q", task.CaseID, got, want[task.CaseID])
		}
		if task.CaseID == "b" && string(task.Extensions["org"]) != `"lab-case"` {
			t.Errorf("case b: extensions changed: %s", task.Extensions["org"])
		}
	}
}

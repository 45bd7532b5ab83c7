package batch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/export"
)

// TestLoadChecksExport: Load checks every task's settings as the export
// will (export.Resolve) and names the JSON path where a refused value was
// written, in a JSON manifest and a JSONL one.
func TestLoadChecksExport(t *testing.T) {
	t.Parallel()
	good := `"schema_version": 1, "campaign_id": "c", "settings": {"s": {}}`
	caseOK := `{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x"}`
	line := `{"campaign_id": "c", "case_id": "a", "setting_id": "s", "run_id": "1", "session": "x"}`
	for _, tc := range []struct{ name, file, doc, want string }{
		{"export strict word", "campaign.json", `{"schema_version": 1, "campaign_id": "c", "settings": {"s": {"export": {"strict": ["often"]}}}, "cases": [` + caseOK + `]}`,
			`campaign.json: settings.s.export.strict: strict "often": want backfill, stale or gaps`},
		{"export size from case", "campaign.json", `{` + good + `, "defaults": {"export": {"video_size": "64x64"}}, "cases": [` + caseOK + `, {"case_id": "b", "setting_id": "s", "run_id": "1", "session": "x", "export": {"video_size": "65x48"}}]}`,
			`campaign.json: cases[1].export.video_size: video_size "65x48": want WIDTHxHEIGHT, both even, positive and at most 8192`},
		{"a size AV1 cannot encode", "campaign.json", `{` + good + `, "defaults": {"export": {"video_size": "64x48"}}, "cases": [` + caseOK + `]}`,
			`campaign.json: defaults.export.video_size: video_size "64x48": want at least 64x64 for av1 (or vcodec h264)`},
		{"task spec missing", "campaign.json", `{` + good + `, "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x", "export": {"task_spec": "nope.json"}}]}`,
			`campaign.json: cases[0].export.task_spec: task_spec "nope.json": open nope.json: no such file or directory`},
		// What the encoder or the planner would refuse
		// later is a manifest error now, for batch plan as for batch.
		{"fps too large", "campaign.json", `{` + good + `, "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x", "export": {"fps": 4611686018427387904}}]}`,
			`campaign.json: cases[0].export.fps: fps 4611686018427387904: want at most 1000`},
		{"crf out of range", "campaign.json", `{` + good + `, "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x", "export": {"crf": 1000}}]}`,
			`campaign.json: cases[0].export.crf: crf 1000: want 0 to 63 for libsvtav1`},
		{"g out of range", "campaign.json", `{` + good + `, "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x", "export": {"g": 2147483648}}]}`,
			`campaign.json: cases[0].export.g: g 2147483648: want 1 to 100000 (frames from one key frame to the next)`},
		{"unknown preset", "campaign.json", `{` + good + `, "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x", "export": {"preset": "nope"}}]}`,
			`campaign.json: cases[0].export.preset: preset "nope": want 0 (slowest) to 13 (fastest) for libsvtav1`},
		{"huge size", "campaign.json", `{` + good + `, "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x", "export": {"video_size": "100000x100000"}}]}`,
			`campaign.json: cases[0].export.video_size: video_size "100000x100000": want WIDTHxHEIGHT, both even, positive and at most 8192`},
		{"licence not of the Hub", "campaign.json", `{` + good + `, "defaults": {"export": {"license": "CC-BY-4.0"}}, "cases": [` + caseOK + `]}`,
			`campaign.json: defaults.export.license: license "CC-BY-4.0": not a licence id of the Hugging Face Hub (did you mean cc-by-4.0? ids are lower case, e.g. apache-2.0, mit, cc-by-4.0, cc-by-nc-4.0, cc0-1.0, other)`},
		{"jsonl export", "c.jsonl", strings.Replace(line, `}`, `, "export": {"vcodec": "vp9"}}`, 1), `c.jsonl line 1: export.vcodec: vcodec "vp9": want av1 or h264`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, tc.file)
			if err := os.WriteFile(p, []byte(tc.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(p)
			if err == nil {
				t.Fatal("no error")
			}
			if got := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), ""); got != tc.want {
				t.Fatalf("error\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestTaskOptions: a task runs with its layered settings resolved.
func TestTaskOptions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fixed.json"), []byte(`{"x":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := `{"schema_version": 1, "campaign_id": "c", "defaults": {"export": {"vcodec": "h264", "crf": 20, "g": 4, "video_size": "64x48"}},
		"settings": {"s": {"export": {"task_spec": "fixed.json", "strict": ["gaps"]}}},
		"extensions": {"org": "lab"},
		"cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x", "export": {"crf": 10}}]}`
	p := filepath.Join(dir, "c.json")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	o, err := taskOptions(&m.Tasks[0])
	if err != nil {
		t.Fatal(err)
	}
	if o.Video.CRF != 10 || o.Video.G != 4 || o.Video.Width != 64 || o.Video.Height != 48 || !o.Strict.Gaps || string(o.TaskSpec) != `{"x":1}` || o.Descriptors.Org != "lab" {
		t.Errorf("options %+v", o)
	}
}

func mustOptions(t *testing.T, task *campaign.Task) export.Options {
	t.Helper()
	o, err := taskOptions(task)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

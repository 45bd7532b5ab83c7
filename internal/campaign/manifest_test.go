package campaign

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/settings"
)

func TestNormaliseID(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"case-a", "case-a"},
		{"Case-A", "case-a"},
		{"  001 ", "001"},
		{"rig 3/left arm", "rig-3-left-arm"},
		{"a  //  b", "a-b"},
		{"a__b", "a_b"},
		{"a___b", "a_b"},
		{"_hidden.", "hidden"},
		{".attempts", "attempts"},
		{"--x--", "x"},
		{"v1.2.3", "v1.2.3"},
		{"Ünïcode", "n-code"},
		{"   ", ""},
		{"__", ""},
		{"日本", ""},
	} {
		if got := NormaliseID(tc.in); got != tc.want {
			t.Errorf("NormaliseID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTaskIDFormat(t *testing.T) {
	m := mustParse(t, `{"schema_version": 1, "campaign_id": "Week 48",
		"settings": {"AV1": {}},
		"cases": [{"case_id": "Rig_3 left", "setting_id": "av1", "run_id": "001", "session": "s"}]}`)
	if got, want := m.Tasks[0].ID, "week-48__rig_3-left__av1__run-001"; got != want {
		t.Fatalf("task id %q, want %q", got, want)
	}
	if m.CampaignID != "week-48" || m.Tasks[0].CaseID != "rig_3-left" || m.Tasks[0].SettingID != "av1" || m.Tasks[0].RunID != "001" {
		t.Fatalf("components %+v", m.Tasks[0])
	}
}

func mustParse(t *testing.T, doc string) *Manifest {
	t.Helper()
	m, err := Parse("campaign.json", []byte(doc), false)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Every error names the manifest and the JSON path, word for word.
func TestManifestErrors(t *testing.T) {
	dir := t.TempDir()
	good := `"schema_version": 1, "campaign_id": "c", "settings": {"s": {}}`
	caseOK := `{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x"}`
	for _, tc := range []struct{ name, doc, want string }{
		{"not JSON", `{"schema_version": 1,`, `campaign.json: not valid JSON: offset 21: unexpected end of JSON input`},
		{"not an object", `[1]`, `campaign.json: want an object, got an array`},
		{"unknown top field", `{` + good + `, "case": []}`, `campaign.json: case: unknown field (want one of schema_version, campaign_id, extensions, defaults, settings, cases)`},
		{"no schema", `{"campaign_id": "c", "cases": [` + caseOK + `]}`, `campaign.json: schema_version: required field missing (want 1)`},
		{"schema 2", `{"schema_version": 2, "campaign_id": "c", "cases": []}`, `campaign.json: schema_version: version 2 is not supported (want 1)`},
		{"schema string", `{"schema_version": "1", "campaign_id": "c", "cases": []}`, `campaign.json: schema_version: want an integer, got a string`},
		{"no campaign", `{"schema_version": 1, "cases": []}`, `campaign.json: campaign_id: required field missing (the campaign's id)`},
		{"campaign empty", `{"schema_version": 1, "campaign_id": " _ ", "settings": {"s": {}}, "cases": [` + caseOK + `]}`, `campaign.json: campaign_id: " _ " normalises to nothing; want at least one letter or digit`},
		{"no cases", `{` + good + `}`, `campaign.json: cases: required field missing (the campaign's cases)`},
		{"empty cases", `{` + good + `, "cases": []}`, `campaign.json: cases: want at least one case`},
		{"cases object", `{` + good + `, "cases": {}}`, `campaign.json: cases: want an array, got an object`},
		{"missing run_id", `{` + good + `, "cases": [` + caseOK + `, ` + strings.Replace(caseOK, `"a"`, `"b"`, 1) + `, ` + strings.Replace(caseOK, `"a"`, `"c"`, 1) + `, {"case_id": "d", "setting_id": "s", "session": "x"}]}`,
			`campaign.json: cases[3].run_id: required field missing (part of the task id)`},
		{"run_id number", `{` + good + `, "cases": [{"case_id": "a", "setting_id": "s", "run_id": 1, "session": "x"}]}`,
			`campaign.json: cases[0].run_id: want a string, got a number`},
		{"run_id blank", `{` + good + `, "cases": [{"case_id": "a", "setting_id": "s", "run_id": "--", "session": "x"}]}`,
			`campaign.json: cases[0].run_id: "--" normalises to nothing; want at least one letter or digit`},
		{"unknown case field", `{` + good + `, "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x", "phases": []}]}`,
			`campaign.json: cases[0].phases: unknown field (want one of case_id, setting_id, run_id, session, export, extensions, expected, execution_profile, retry_policy, payload)`},
		{"no session", `{` + good + `, "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1"}]}`,
			`campaign.json: cases[0].session: required field missing (the session directory, relative to the manifest)`},
		{"unknown setting", `{` + good + `, "cases": [{"case_id": "a", "setting_id": "h264", "run_id": "1", "session": "x"}]}`,
			`campaign.json: cases[0].setting_id: setting "h264" is not in settings (have s)`},
		{"no settings", `{"schema_version": 1, "campaign_id": "c", "cases": [` + caseOK + `]}`,
			`campaign.json: cases[0].setting_id: setting "s" is not in settings (none declared)`},
		{"duplicate id", `{` + good + `, "cases": [` + caseOK + `, {"case_id": "A", "setting_id": "S", "run_id": " 1", "session": "y"}]}`,
			`campaign.json: cases[1]: task id c__a__s__run-1 already belongs to cases[0]`},
		{"duplicate key", `{` + good + `, "cases": [{"case_id": "a", "case_id": "b", "setting_id": "s", "run_id": "1", "session": "x"}]}`,
			`campaign.json: cases[0].case_id: appears twice`},
		{"unknown export option", `{` + good + `, "defaults": {"export": {"video-size": "64x48"}}, "cases": [` + caseOK + `]}`,
			`campaign.json: defaults.export["video-size"]: unknown field (want one of ` + strings.Join(settings.SettingNames(), ", ") + `)`},
		{"export type", `{"schema_version": 1, "campaign_id": "c", "settings": {"s": {"export": {"crf": "high"}}}, "cases": [` + caseOK + `]}`,
			`campaign.json: settings.s.export.crf: want an integer, got a string`},
		{"export float", `{` + good + `, "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x", "export": {"fps": 29.97}}]}`,
			`campaign.json: cases[0].export.fps: want an integer, got 29.97`},
		{"setting fields", `{"schema_version": 1, "campaign_id": "c", "settings": {"s": {"extensions": {}}}, "cases": [` + caseOK + `]}`,
			`campaign.json: settings.s.extensions: unknown field (want one of export)`},
		{"setting id collision", `{"schema_version": 1, "campaign_id": "c", "settings": {"AV1": {}, "av1": {}}, "cases": [` + caseOK + `]}`,
			`campaign.json: settings.av1: setting id "av1" normalises to "av1", as an earlier setting does`},
		{"extensions not object", `{` + good + `, "extensions": [1], "cases": [` + caseOK + `]}`,
			`campaign.json: extensions: want an object, got an array`},
		{"expected state", `{` + good + `, "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x", "expected": {"state": "done"}}]}`,
			`campaign.json: cases[0].expected.state: "done": want succeeded or failed`},
		{"expected field", `{` + good + `, "defaults": {"expected": {"min_result_count": 1}}, "cases": [` + caseOK + `]}`,
			`campaign.json: defaults.expected.min_result_count: unknown field (want one of state, attempt_no, min_episodes, min_frames)`},
		{"expected attempt", `{` + good + `, "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x", "expected": {"attempt_no": 0}}]}`,
			`campaign.json: cases[0].expected.attempt_no: 0: want at least 1`},
		{"id too long", `{"schema_version": 1, "campaign_id": "` + strings.Repeat("c", 150) + `", "settings": {"s": {}}, "cases": [{"case_id": "` + strings.Repeat("a", 50) + `", "setting_id": "s", "run_id": "1", "session": "x"}]}`,
			`campaign.json: cases[0]: task id ` + strings.Repeat("c", 150) + `__` + strings.Repeat("a", 50) + `__s__run-1 is 212 bytes long; at most 200 fit a directory name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// task_spec paths are relative to the manifest: run from an
			// empty directory so that "nope.json" is missing.
			_, err := Parse(filepath.Join(dir, "campaign.json"), []byte(tc.doc), false)
			if err == nil {
				t.Fatal("no error")
			}
			got := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
			if got != tc.want {
				t.Fatalf("error\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestJSONLErrors(t *testing.T) {
	line := `{"campaign_id": "c", "case_id": "a", "setting_id": "s", "run_id": "1", "session": "x"}`
	for _, tc := range []struct{ name, doc, want string }{
		{"empty", "\n\n", `c.jsonl: no records; want one JSON object per line`},
		{"bad line", line + "\n{\"campaign_id\": \n", `c.jsonl line 2: not valid JSON: offset 15: unexpected end of JSON input`},
		{"defaults", `{"campaign_id": "c", "defaults": {}}`, `c.jsonl line 1: defaults: unknown field (want one of schema_version, campaign_id, case_id, setting_id, run_id, session, export, extensions, expected, execution_profile, retry_policy, payload)`},
		{"no campaign", `{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x"}`, `c.jsonl line 1: campaign_id: required field missing (every line names its campaign)`},
		{"two campaigns", line + "\n\n" + strings.Replace(line, `"c"`, `"d"`, 1), `c.jsonl line 3: campaign_id: "d" differs from line 1's "c"; a JSONL manifest holds one campaign`},
		{"duplicate", line + "\n" + strings.Replace(line, `"a"`, `"A"`, 1), `c.jsonl line 2: task id c__a__s__run-1 already belongs to line 1`},
		{"schema", strings.Replace(line, `{`, `{"schema_version": 3, `, 1), `c.jsonl line 1: schema_version: version 3 is not supported (want 1)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.jsonl", []byte(tc.doc), true)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error\n got %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestJSONL(t *testing.T) {
	doc := `{"schema_version": 1, "campaign_id": "wk", "case_id": "a", "setting_id": "av1", "run_id": "1", "session": "s/a", "export": {"crf": 40}, "extensions": {"x": 1}}

{"campaign_id": "wk", "case_id": "b", "setting_id": "h264", "run_id": "1", "session": "/abs/b", "export": {"vcodec": "h264"}, "expected": {"min_frames": 10}}
`
	m, err := Parse("dir/c.jsonl", []byte(doc), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Tasks) != 2 || !m.JSONL || m.CampaignID != "wk" {
		t.Fatalf("%+v", m)
	}
	a, b := m.Tasks[0], m.Tasks[1]
	if a.ID != "wk__a__av1__run-1" || a.Source != "line 1" || a.Export.CRF != 40 || string(a.Extensions["x"]) != "1" || a.SessionDir != "dir/s/a" {
		t.Errorf("line 1: %+v", a)
	}
	if b.ID != "wk__b__h264__run-1" || b.Source != "line 3" || b.Export.Vcodec != "h264" || b.Export.CRF != 0 || b.Expected.MinFrames != 10 || b.SessionDir != "/abs/b" {
		t.Errorf("line 3: %+v", b)
	}
}

// Export options: defaults < setting < case, by option.
func TestExportPrecedence(t *testing.T) {
	m := mustParse(t, `{"schema_version": 1, "campaign_id": "c",
		"defaults": {"export": {"vcodec": "h264", "crf": 20, "g": 4, "video_size": "64x48"}},
		"settings": {"fast": {"export": {"crf": 35, "preset": "ultrafast"}}, "plain": {}},
		"cases": [
			{"case_id": "a", "setting_id": "fast", "run_id": "1", "session": "x", "export": {"g": 8}},
			{"case_id": "b", "setting_id": "plain", "run_id": "1", "session": "x"},
			{"case_id": "c", "setting_id": "fast", "run_id": "1", "session": "x", "export": {"crf": 10, "strict": ["gaps"]}}
		]}`)
	want := []struct {
		codec, preset, size string
		crf, g              int
		gaps                bool
	}{
		{"h264", "ultrafast", "64x48", 35, 8, false},
		{"h264", "", "64x48", 20, 4, false},
		{"h264", "ultrafast", "64x48", 10, 4, true},
	}
	for i, w := range want {
		e := m.Tasks[i].Export
		if e.Vcodec != w.codec || e.Preset != w.preset || e.VideoSize != w.size || e.CRF != w.crf || e.G != w.g || slices.Contains(e.Strict, "gaps") != w.gaps {
			t.Errorf("task %d: settings %+v, want %+v", i, e, w)
		}
	}
}

// Extensions: campaign < defaults < case, merged by top-level key only; a
// later key replaces the whole earlier value.
func TestExtensionPrecedence(t *testing.T) {
	m := mustParse(t, `{"schema_version": 1, "campaign_id": "c",
		"extensions": {"org.lab.dataset": {"revision": "2026-11", "split": "train"}, "org.lab.owner": "ana", "com.acme": {"n": [1, 2]}},
		"defaults": {"extensions": {"org.lab.dataset": {"revision": "2026-12"}, "org.lab.rig": "r1"}},
		"settings": {"s": {}},
		"cases": [
			{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x"},
			{"case_id": "b", "setting_id": "s", "run_id": "1", "session": "x", "extensions": {"org.lab.rig": {"id": 3, "arm": "left"}, "com.acme": null}}
		]}`)
	want := []map[string]string{
		{"org.lab.dataset": `{"revision":"2026-12"}`, "org.lab.owner": `"ana"`, "com.acme": `{"n":[1,2]}`, "org.lab.rig": `"r1"`},
		{"org.lab.dataset": `{"revision":"2026-12"}`, "org.lab.owner": `"ana"`, "com.acme": `null`, "org.lab.rig": `{"id":3,"arm":"left"}`},
	}
	for i, w := range want {
		got := map[string]string{}
		for k, v := range m.Tasks[i].Extensions {
			got[k] = string(v)
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("task %d extensions %v, want %v", i, got, w)
		}
	}
}

// expected is one contract: a case's replaces the default's whole.
func TestExpectedReplaces(t *testing.T) {
	m := mustParse(t, `{"schema_version": 1, "campaign_id": "c",
		"defaults": {"expected": {"state": "succeeded", "min_episodes": 2}},
		"settings": {"s": {}},
		"cases": [
			{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x"},
			{"case_id": "b", "setting_id": "s", "run_id": "1", "session": "x", "expected": {"state": "failed"}}
		]}`)
	if e := m.Tasks[0].Expected; e == nil || *e != (Expected{State: StateSucceeded, MinEpisodes: 2}) {
		t.Errorf("task 0 expected %+v", e)
	}
	if e := m.Tasks[1].Expected; e == nil || *e != (Expected{State: StateFailed}) {
		t.Errorf("task 1 expected %+v", e)
	}
}

func TestCheck(t *testing.T) {
	ok := &Record{State: StateSucceeded, AttemptNo: 1, Episodes: 4, Frames: 100}
	failed := &Record{State: StateFailed, AttemptNo: 2, Error: "journal: corrupt"}
	for _, tc := range []struct {
		name string
		exp  *Expected
		rec  *Record
		want []string
	}{
		{"none, succeeded", nil, ok, nil},
		{"none, failed", nil, failed, []string{"state failed, expected succeeded (journal: corrupt)"}},
		{"failed expected", &Expected{State: StateFailed}, failed, nil},
		{"failed expected, succeeded", &Expected{State: StateFailed}, ok, []string{"state succeeded, expected failed"}},
		{"minimums met", &Expected{MinEpisodes: 4, MinFrames: 100, AttemptNo: 1}, ok, nil},
		{"minimums missed", &Expected{MinEpisodes: 5, MinFrames: 101, AttemptNo: 2}, ok,
			[]string{"attempt 1, expected 2", "4 episodes, expected at least 5", "100 frames, expected at least 101"}},
	} {
		if got := Check(tc.exp, tc.rec); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func selectionManifest(t *testing.T) []Task {
	return mustParse(t, `{"schema_version": 1, "campaign_id": "c",
		"settings": {"av1": {}, "h264": {}},
		"cases": [
			{"case_id": "a", "setting_id": "av1", "run_id": "1", "session": "x"},
			{"case_id": "a", "setting_id": "h264", "run_id": "1", "session": "x"},
			{"case_id": "b", "setting_id": "av1", "run_id": "1", "session": "x"},
			{"case_id": "b", "setting_id": "av1", "run_id": "2", "session": "x"},
			{"case_id": "c", "setting_id": "h264", "run_id": "2", "session": "x"}
		]}`).Tasks
}

func TestSelect(t *testing.T) {
	tasks := selectionManifest(t)
	for _, tc := range []struct {
		name string
		sel  Selection
		want []string
	}{
		{"all", Selection{}, []string{"c__a__av1__run-1", "c__a__h264__run-1", "c__b__av1__run-1", "c__b__av1__run-2", "c__c__h264__run-2"}},
		{"one case", Selection{CaseIDs: []string{"a"}}, []string{"c__a__av1__run-1", "c__a__h264__run-1"}},
		{"or within", Selection{CaseIDs: []string{"a", "C"}}, []string{"c__a__av1__run-1", "c__a__h264__run-1", "c__c__h264__run-2"}},
		{"and across", Selection{CaseIDs: []string{"b"}, RunIDs: []string{"2"}}, []string{"c__b__av1__run-2"}},
		{"setting", Selection{SettingIDs: []string{"H264"}}, []string{"c__a__h264__run-1", "c__c__h264__run-2"}},
	} {
		got, err := Select(tasks, tc.sel)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var ids []string
		for _, g := range got {
			ids = append(ids, g.ID)
		}
		if !reflect.DeepEqual(ids, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, ids, tc.want)
		}
	}
}

func TestSelectErrors(t *testing.T) {
	tasks := selectionManifest(t)
	for _, tc := range []struct {
		name string
		sel  Selection
		want string
	}{
		{"empty", Selection{CaseIDs: []string{"c"}, SettingIDs: []string{"av1"}}, `selection --case-id c --setting-id av1 matches no task`},
		{"typo", Selection{CaseIDs: []string{"a", "z"}}, `--case-id "z": no task of the manifest has case_id z (it has a, b, c)`},
		{"blank", Selection{RunIDs: []string{" "}}, `--run-id " ": normalises to nothing; want at least one letter or digit`},
		{"unknown setting", Selection{SettingIDs: []string{"vp9"}}, `--setting-id "vp9": no task of the manifest has setting_id vp9 (it has av1, h264)`},
	} {
		_, err := Select(tasks, tc.sel)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %s", tc.name, err, tc.want)
		}
	}
}

func TestShare(t *testing.T) {
	var tasks []Task
	for i := range 13 {
		tasks = append(tasks, Task{ID: string(rune('a' + i))})
	}
	for count := 1; count <= 15; count++ {
		seen := map[string]int{}
		minN, maxN := len(tasks), 0
		for i := range count {
			share, err := Share(tasks, i, count)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := Share(tasks, i, count)
			if !reflect.DeepEqual(share, again) {
				t.Fatalf("share %d/%d not deterministic", i, count)
			}
			minN, maxN = min(minN, len(share)), max(maxN, len(share))
			for _, s := range share {
				seen[s.ID]++
			}
		}
		if len(seen) != len(tasks) {
			t.Fatalf("count %d: %d of %d tasks covered", count, len(seen), len(tasks))
		}
		for id, n := range seen {
			if n != 1 {
				t.Fatalf("count %d: task %s in %d shares", count, id, n)
			}
		}
		if maxN-minN > 1 {
			t.Fatalf("count %d: shares of %d to %d tasks", count, minN, maxN)
		}
	}
	if _, err := Share(tasks, 4, 4); err == nil || err.Error() != "array index 4: want 0 to 3" {
		t.Fatalf("error %v", err)
	}
}

func TestArrayFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name         string
		env          map[string]string
		index, count int
		want         *ArrayShare
		err          string
	}{
		{"none", nil, -1, 0, nil, ""},
		{"flags", nil, 2, 4, &ArrayShare{2, 4}, ""},
		{"slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4"}, -1, 0, &ArrayShare{3, 4}, ""},
		{"slurm from 1", map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "4"}, -1, 0, &ArrayShare{0, 4}, ""},
		{"slurm, flag count", map[string]string{"SLURM_ARRAY_TASK_ID": "1"}, -1, 2, &ArrayShare{1, 2}, ""},
		{"flag beats slurm", map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "4"}, 0, 2, &ArrayShare{0, 2}, ""},
		{"kubernetes", map[string]string{"JOB_COMPLETION_INDEX": "5"}, -1, 6, &ArrayShare{5, 6}, ""},
		{"kubernetes, no count", map[string]string{"JOB_COMPLETION_INDEX": "5"}, -1, 0, nil,
			"JOB_COMPLETION_INDEX is set but the array count is not: pass --array-count (the Job's completions)"},
		{"slurm, no count", map[string]string{"SLURM_ARRAY_TASK_ID": "1"}, -1, 0, nil,
			"SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not: pass --array-count"},
		{"bad env", map[string]string{"SLURM_ARRAY_TASK_ID": "x"}, -1, 0, nil, `SLURM_ARRAY_TASK_ID="x": want a non-negative integer`},
		{"count only", nil, -1, 3, nil, "--array-count 3 without an array index (--array-index, SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX)"},
		{"index only", nil, 1, 0, nil, "--array-index 1 without --array-count"},
		{"out of range", nil, 4, 4, nil, "array index 4: want 0 to 3 (array count 4)"},
	} {
		got, err := ArrayFromEnv(func(k string) string { return tc.env[k] }, tc.index, tc.count)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %s", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v %v, want %+v", tc.name, got, err, tc.want)
		}
	}
}

func TestLoadRelativePaths(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fixed.json"), []byte(`{"x":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := `{"schema_version": 1, "campaign_id": "c", "settings": {"s": {"export": {"task_spec": "fixed.json"}}},
		"cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "sessions/a"}]}`
	p := filepath.Join(dir, "c.json")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	task := m.Tasks[0]
	if task.SessionDir != filepath.Join(dir, "sessions", "a") || !slices.Equal(task.Export.Files(task.BaseDir), []string{filepath.Join(dir, "fixed.json")}) {
		t.Fatalf("%+v", task)
	}
	b, err := json.Marshal(task)
	if err != nil || !strings.Contains(string(b), `"session":"sessions/a"`) {
		t.Fatalf("plan JSON %s %v", b, err)
	}
}

// FuzzParse: the manifest parser never panics; what it accepts has unique,
// normalised task ids, and what it refuses it refuses with a PathError.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"schema_version": 1, "campaign_id": "c", "settings": {"s": {"export": {"crf": 30}}}, "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x", "extensions": {"k": {"v": 1}}, "expected": {"state": "failed"}}]}`), false)
	f.Add([]byte(`{"campaign_id": "c", "case_id": "a", "setting_id": "s", "run_id": "1", "session": "x"}`+"\n"), true)
	f.Add([]byte(`{"schema_version": 1, "campaign_id": "c", "defaults": {"export": {"strict": ["gaps"], "map": ["a=b.c"]}}, "settings": {"s": {}}, "cases": [{"case_id": "A B", "setting_id": "S", "run_id": "__1", "session": "x"}]}`), false)
	f.Fuzz(func(t *testing.T, data []byte, jsonl bool) {
		m, err := Parse(filepath.Join(t.TempDir(), "m.json"), data, jsonl)
		if err != nil {
			if _, ok := err.(*PathError); !ok {
				t.Fatalf("error %T %v is not a PathError", err, err)
			}
			return
		}
		seen := map[string]bool{}
		for _, task := range m.Tasks {
			if seen[task.ID] {
				t.Fatalf("duplicate task id %s", task.ID)
			}
			seen[task.ID] = true
			for _, c := range []string{task.CampaignID, task.CaseID, task.SettingID, task.RunID} {
				if c == "" || NormaliseID(c) != c || strings.Contains(c, "__") {
					t.Fatalf("component %q of %s not normalised", c, task.ID)
				}
			}
			if task.ID != TaskID(task.CampaignID, task.CaseID, task.SettingID, task.RunID) || len(task.ID) > MaxTaskIDLength {
				t.Fatalf("task id %s", task.ID)
			}
		}
	})
}

// TestCheckExport: a value the export's check refuses is reported at the
// JSON path of the layer that wrote it, whichever layer that was.
func TestCheckExport(t *testing.T) {
	t.Parallel()
	m := mustParse(t, `{"schema_version": 1, "campaign_id": "c", "defaults": {"export": {"crf": 30}},
		"settings": {"s": {"export": {"vcodec": "h264"}}},
		"cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x"},
			{"case_id": "b", "setting_id": "s", "run_id": "1", "session": "x", "export": {"crf": 99}}]}`)
	for _, c := range []struct{ setting, want string }{
		{"crf", `campaign.json: cases[1].export.crf: crf 99: want at most 63`},
		{"vcodec", `campaign.json: settings.s.export.vcodec: vcodec "h264": want av1`},
	} {
		err := m.CheckExport(func(s settings.Settings, dir string) error {
			if c.setting == "crf" && s.CRF == 99 {
				return &settings.SettingError{Setting: "crf", Value: "99", Want: "want at most 63"}
			}
			if c.setting == "vcodec" {
				return &settings.SettingError{Setting: "vcodec", Value: `"h264"`, Want: "want av1"}
			}
			return nil
		})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %s", c.setting, err, c.want)
		}
	}
	if err := m.CheckExport(func(settings.Settings, string) error { return nil }); err != nil {
		t.Errorf("nothing refused: %v", err)
	}
}

// A session path with a NUL byte is a manifest error at
// its JSON path (no file system call takes it); the export settings are
// checked by batch.Load, which holds the export's own check.
func TestManifestRefusesNULSession(t *testing.T) {
	t.Parallel()
	for _, session := range []string{`s\u0000x`, `\u0000`, `a/b\u0000`} {
		doc := `{"schema_version": 1, "campaign_id": "c", "settings": {"a": {}},
		 "cases": [{"case_id": "x", "setting_id": "a", "run_id": "1", "session": "` + session + `"}]}`
		_, err := Parse("campaign.json", []byte(doc), false)
		if err == nil || !strings.Contains(err.Error(), "cases[0].session: holds a NUL byte at offset") {
			t.Errorf("session %q: %v, want a NUL byte error", session, err)
		}
	}
}

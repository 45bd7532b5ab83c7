// Package campaign is the campaign model: the manifest (its tasks, each
// with a stable id, their layered export settings, extensions and
// expectations), the selection and array shares, the attempt records under
// OUT/.attempts/ and the campaign directory they live in, the scheduler
// job files (SLURM, Kubernetes Indexed Jobs) and their submission through
// a Runner. It compiles without FFmpeg; package batch runs the tasks.
// docs/campaigns.md states the rules.
package campaign

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/settings"
)

// SchemaVersion is the only manifest schema_version there is.
const SchemaVersion = 1

// Manifest is a parsed campaign manifest: its tasks in manifest order.
type Manifest struct {
	// File is the manifest's path; Dir the directory its relative paths
	// (sessions, task_spec) are taken from.
	File, Dir string
	// CampaignID is the normalised campaign_id.
	CampaignID string
	// JSONL is true for the JSON Lines form.
	JSONL bool
	// Tasks in manifest order.
	Tasks []Task
}

// Task is one runnable record, fully resolved: defaults < setting < case.
type Task struct {
	// ID is TaskID of the normalised components below.
	ID         string `json:"task_id"`
	CampaignID string `json:"campaign_id"`
	CaseID     string `json:"case_id"`
	SettingID  string `json:"setting_id"`
	RunID      string `json:"run_id"`
	// Source is where the record is in the manifest ("cases[3]", "line 4").
	Source string `json:"source"`
	// Session is the session directory as the manifest writes it; SessionDir
	// the path it resolves to.
	Session    string `json:"session"`
	SessionDir string `json:"-"`
	// Export is the resolved export settings.
	Export settings.Settings `json:"export"`
	// Extensions, merged by top-level key, carried unchanged.
	Extensions map[string]json.RawMessage `json:"extensions"`
	// Execution is the task's placement and resource request, merged by
	// field over the layers; the scheduler jobs request it.
	Execution ExecutionProfile `json:"execution_profile"`
	// RetryPolicy is the manifest's retry_policy, nil when it gives none
	// (Policy is the one in force).
	RetryPolicy *RetryPolicy `json:"retry_policy,omitempty"`
	// Expected is the regression contract checked after the task; nil when
	// there is none.
	Expected *Expected `json:"expected,omitempty"`

	// BaseDir is the manifest's directory: relative paths of the export
	// settings (task_spec, profile) are relative to it.
	BaseDir string `json:"-"`

	// origins maps each export setting to the JSON path of the layer it
	// came from, so that a value the export refuses is reported where it
	// was written (CheckExport); dec and path are the task's own place.
	origins map[string]string
	dec     decoder
	path    string
}

// Org is the task descriptors' org (docs/task-descriptors.md): the org
// setting, else an "org" string among the extensions, which stay carried
// unchanged; this is the one key the tool reads of them.
func (t *Task) Org() string {
	if t.Export.Org != "" {
		return t.Export.Org
	}
	var org string
	if raw, ok := t.Extensions["org"]; ok && json.Unmarshal(raw, &org) == nil {
		return org
	}
	return ""
}

// CheckExport checks every task's export settings with check (the export's
// own check, export.Resolve), reporting a refused value at the JSON path
// where it was written when check's error is a *settings.SettingError.
func (m *Manifest) CheckExport(check func(s settings.Settings, baseDir string) error) error {
	for i := range m.Tasks {
		t := &m.Tasks[i]
		err := check(t.Export, t.BaseDir)
		if err == nil {
			continue
		}
		if se, ok := err.(*settings.SettingError); ok {
			return t.dec.errorf(t.origins[se.Setting], "%v", se)
		}
		return t.dec.errorf(member(t.path, "export"), "%v", err)
	}
	return nil
}

// WithLicense gives every task the licence id license (batch --license;
// "" changes nothing), as if the manifest's defaults said it. A task whose
// manifest names another licence is refused where the manifest names it:
// a case given its licence on purpose (a session whose consent allows less)
// is never relicensed from the command line.
func WithLicense(tasks []Task, license string) error {
	if license == "" {
		return nil
	}
	for i := range tasks {
		t := &tasks[i]
		if t.Export.License != "" && t.Export.License != license {
			return t.dec.errorf(t.origins["license"], "license %q differs from --license %q: give a task its licence in one place", t.Export.License, license)
		}
		t.Export.License = license
	}
	return nil
}

// Expected is a task's regression contract.
type Expected struct {
	// State is the required final state: "succeeded" or "failed".
	State string `json:"state,omitempty"`
	// AttemptNo is the required final attempt number.
	AttemptNo int `json:"attempt_no,omitempty"`
	// MinEpisodes and MinFrames are minimums of the exported shard.
	MinEpisodes int `json:"min_episodes,omitempty"`
	MinFrames   int `json:"min_frames,omitempty"`
}

// layer is one level of export settings or extensions: its members and the
// JSON path it was written at.
type layer struct {
	path    string
	members map[string]json.RawMessage
}

// Manifest fields, as the decoder allows them.
var (
	topFields     = []string{"schema_version", "campaign_id", "extensions", "defaults", "settings", "cases"}
	defaultFields = []string{"export", "extensions", "expected", "execution_profile", "retry_policy", "payload"}
	settingFields = []string{"export"}
	caseFields    = []string{"case_id", "setting_id", "run_id", "session", "export", "extensions", "expected", "execution_profile", "retry_policy", "payload"}
	lineFields    = []string{"schema_version", "campaign_id", "case_id", "setting_id", "run_id", "session", "export", "extensions", "expected", "execution_profile", "retry_policy", "payload"}
	expectedField = []string{"state", "attempt_no", "min_episodes", "min_frames"}
)

// Load reads and parses the manifest at path: JSON Lines when its name ends
// in .jsonl or .ndjson, JSON otherwise.
func Load(path string) (*Manifest, error) {
	data, err := input.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	ext := strings.ToLower(filepath.Ext(path))
	return Parse(path, data, ext == ".jsonl" || ext == ".ndjson")
}

// Parse parses a manifest's bytes; name is the file it came from (for error
// messages and relative paths).
func Parse(name string, data []byte, jsonl bool) (*Manifest, error) {
	m := &Manifest{File: name, Dir: filepath.Dir(name), JSONL: jsonl}
	var err error
	if jsonl {
		err = m.parseJSONL(data)
	} else {
		err = m.parseJSON(data)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Manifest) parseJSON(data []byte) error {
	d := decoder{file: m.File}
	raw := json.RawMessage(bytes.TrimSpace(data))
	if !json.Valid(raw) {
		return d.errorf("", "not valid JSON: %v", jsonSyntaxError(raw))
	}
	top, err := d.object("", raw, topFields)
	if err != nil {
		return err
	}
	if err := d.schemaVersion("schema_version", top, true); err != nil {
		return err
	}
	cv, err := d.required("", top, "campaign_id", "the campaign's id")
	if err != nil {
		return err
	}
	campaign, err := d.str("campaign_id", cv)
	if err != nil {
		return err
	}
	campaignExt, err := d.extensions("extensions", top["extensions"])
	if err != nil {
		return err
	}

	var defExport, defExt layer
	var defExpected *Expected
	var defRun runLayers
	if dv, ok := top["defaults"]; ok {
		def, err := d.object("defaults", dv, defaultFields)
		if err != nil {
			return err
		}
		if defExport, err = d.exportLayer("defaults.export", def["export"]); err != nil {
			return err
		}
		if defExt, err = d.extensions("defaults.extensions", def["extensions"]); err != nil {
			return err
		}
		if defExpected, err = d.expected("defaults.expected", def["expected"]); err != nil {
			return err
		}
		if defRun, err = d.runLayers("defaults", def); err != nil {
			return err
		}
	}

	settings := map[string]layer{}
	var settingIDs []string
	if sv, ok := top["settings"]; ok {
		sm, err := d.object("settings", sv, nil)
		if err != nil {
			return err
		}
		keys, err := d.orderedKeys("settings", sv)
		if err != nil {
			return err
		}
		for _, id := range keys {
			p := member("settings", id)
			s, err := d.object(p, sm[id], settingFields)
			if err != nil {
				return err
			}
			l, err := d.exportLayer(member(p, "export"), s["export"])
			if err != nil {
				return err
			}
			n := NormaliseID(id)
			if n == "" {
				return d.errorf(p, "setting id %q normalises to nothing; want at least one letter or digit", id)
			}
			if _, dup := settings[n]; dup {
				return d.errorf(p, "setting id %q normalises to %q, as an earlier setting does", id, n)
			}
			settings[n] = l
			settingIDs = append(settingIDs, n)
		}
	}

	casesRaw, err := d.required("", top, "cases", "the campaign's cases")
	if err != nil {
		return err
	}
	if kind(casesRaw) != "an array" {
		return d.errorf("cases", "want an array, got %s", kind(casesRaw))
	}
	var cases []json.RawMessage
	if err := json.Unmarshal(casesRaw, &cases); err != nil {
		return d.errorf("cases", "%v", err)
	}
	if len(cases) == 0 {
		return d.errorf("cases", "want at least one case")
	}
	// Tasks are large: growing the slice would copy them again and again.
	m.Tasks = make([]Task, 0, len(cases))
	seen := make(map[string]string, len(cases))
	for i, cr := range cases {
		p := index("cases", i)
		c, err := d.object(p, cr, caseFields)
		if err != nil {
			return err
		}
		t, err := d.record(p, c, campaign)
		if err != nil {
			return err
		}
		setting, ok := settings[t.SettingID]
		if !ok {
			have := "none declared"
			if len(settingIDs) > 0 {
				have = "have " + strings.Join(settingIDs, ", ")
			}
			return d.errorf(member(p, "setting_id"), "setting %q is not in settings (%s)", t.SettingID, have)
		}
		caseExport, err := d.exportLayer(member(p, "export"), c["export"])
		if err != nil {
			return err
		}
		caseExt, err := d.extensions(member(p, "extensions"), c["extensions"])
		if err != nil {
			return err
		}
		caseExpected, err := d.expected(member(p, "expected"), c["expected"])
		if err != nil {
			return err
		}
		caseRun, err := d.runLayers(p, c)
		if err != nil {
			return err
		}
		t.Extensions = mergeExtensions(campaignExt, defExt, defRun.payloadExt, caseExt, caseRun.payloadExt)
		t.Execution = mergeExecution(defRun.execution, defRun.payloadExecution, caseRun.execution, caseRun.payloadExecution)
		// expected and retry_policy are each one contract: a case's
		// replaces the default's whole.
		t.Expected = defExpected
		if caseExpected != nil {
			t.Expected = caseExpected
		}
		t.RetryPolicy = defRun.retry
		if caseRun.retry != nil {
			t.RetryPolicy = caseRun.retry
		}
		if err := m.finish(d, p, &t, seen, defExport, setting, caseExport); err != nil {
			return err
		}
		m.Tasks = append(m.Tasks, t)
	}
	m.CampaignID = m.Tasks[0].CampaignID
	return nil
}

func (m *Manifest) parseJSONL(data []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	// One task a line, at most: the slice is made once, not grown (a Task
	// is large, and growing would copy every one again and again).
	lines := bytes.Count(data, []byte{'\n'}) + 1
	m.Tasks = make([]Task, 0, lines)
	seen := make(map[string]string, lines)
	firstCampaign, firstLine := "", 0
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		d := decoder{file: m.File, line: line}
		raw := json.RawMessage(slices.Clone(text))
		if !json.Valid(raw) {
			return d.errorf("", "not valid JSON: %v", jsonSyntaxError(raw))
		}
		o, err := d.object("", raw, lineFields)
		if err != nil {
			return err
		}
		if err := d.schemaVersion("schema_version", o, false); err != nil {
			return err
		}
		cv, err := d.required("", o, "campaign_id", "every line names its campaign")
		if err != nil {
			return err
		}
		campaign, err := d.str("campaign_id", cv)
		if err != nil {
			return err
		}
		if firstLine == 0 {
			firstCampaign, firstLine = campaign, line
		} else if campaign != firstCampaign {
			return d.errorf("campaign_id", "%q differs from line %d's %q; a JSONL manifest holds one campaign", campaign, firstLine, firstCampaign)
		}
		t, err := d.record("", o, campaign)
		if err != nil {
			return err
		}
		ex, err := d.exportLayer("export", o["export"])
		if err != nil {
			return err
		}
		ext, err := d.extensions("extensions", o["extensions"])
		if err != nil {
			return err
		}
		if t.Expected, err = d.expected("expected", o["expected"]); err != nil {
			return err
		}
		run, err := d.runLayers("", o)
		if err != nil {
			return err
		}
		t.Extensions = mergeExtensions(ext, run.payloadExt)
		t.Execution = mergeExecution(run.execution, run.payloadExecution)
		t.RetryPolicy = run.retry
		if err := m.finish(d, "", &t, seen, ex); err != nil {
			return err
		}
		m.Tasks = append(m.Tasks, t)
	}
	if err := sc.Err(); err != nil {
		return &PathError{File: m.File, Line: line + 1, Msg: err.Error()}
	}
	if len(m.Tasks) == 0 {
		return &PathError{File: m.File, Msg: "no records; want one JSON object per line"}
	}
	m.CampaignID = m.Tasks[0].CampaignID
	return nil
}

// runLayers are one level's execution_profile, retry_policy and payload.
type runLayers struct {
	execution, payloadExecution executionLayer
	payloadExt                  layer
	retry                       *RetryPolicy
}

// runLayers decodes the execution_profile, retry_policy and payload
// members of the object o at p.
func (d decoder) runLayers(p string, o map[string]json.RawMessage) (runLayers, error) {
	var r runLayers
	var err error
	if r.execution, err = d.executionProfile(member(p, "execution_profile"), o["execution_profile"]); err != nil {
		return r, err
	}
	if r.retry, err = d.retryPolicy(member(p, "retry_policy"), o["retry_policy"]); err != nil {
		return r, err
	}
	if r.payloadExt, r.payloadExecution, err = d.payload(member(p, "payload"), o["payload"]); err != nil {
		return r, err
	}
	return r, nil
}

// record decodes a record's identity and session; p is its JSON path.
func (d decoder) record(p string, o map[string]json.RawMessage, campaign string) (Task, error) {
	var raw identity
	raw.campaign = campaign
	for _, f := range []struct {
		name string
		out  *string
	}{{"case_id", &raw.caseID}, {"setting_id", &raw.setting}, {"run_id", &raw.run}} {
		v, err := d.required(p, o, f.name, "part of the task id")
		if err != nil {
			return Task{}, err
		}
		if *f.out, err = d.str(member(p, f.name), v); err != nil {
			return Task{}, err
		}
	}
	n, id, err := d.normaliseIdentity(p, raw)
	if err != nil {
		return Task{}, err
	}
	sv, err := d.required(p, o, "session", "the session directory, relative to the manifest")
	if err != nil {
		return Task{}, err
	}
	session, err := d.str(member(p, "session"), sv)
	if err != nil {
		return Task{}, err
	}
	if strings.TrimSpace(session) == "" {
		return Task{}, d.errorf(member(p, "session"), "want a session directory, got an empty string")
	}
	if i := strings.IndexByte(session, 0); i >= 0 {
		return Task{}, d.errorf(member(p, "session"), "holds a NUL byte at offset %d; no path does", i)
	}
	src := p
	if d.line > 0 {
		src = fmt.Sprintf("line %d", d.line)
	}
	return Task{ID: id, CampaignID: n.campaign, CaseID: n.caseID, SettingID: n.setting, RunID: n.run, Source: src, Session: session}, nil
}

// finish resolves a task's export settings from its layers (lowest first),
// its session path, and rejects a duplicate id.
func (m *Manifest) finish(d decoder, p string, t *Task, seen map[string]string, layers ...layer) error {
	if prev, dup := seen[t.ID]; dup {
		return d.errorf(p, "task id %s already belongs to %s", t.ID, prev)
	}
	seen[t.ID] = t.Source
	t.SessionDir = t.Session
	if !filepath.IsAbs(t.SessionDir) {
		t.SessionDir = filepath.Join(m.Dir, t.SessionDir)
	}
	merged := map[string]json.RawMessage{}
	t.origins = map[string]string{}
	for _, l := range layers {
		for k, v := range l.members {
			merged[k] = v
			t.origins[k] = member(l.path, k)
		}
	}
	b, err := json.Marshal(merged)
	if err != nil {
		return d.errorf(p, "%v", err)
	}
	if err := json.Unmarshal(b, &t.Export); err != nil {
		return d.errorf(p, "export: %v", err)
	}
	t.BaseDir, t.dec, t.path = m.Dir, d, p
	return nil
}

// schemaVersion checks schema_version: required in a JSON manifest,
// optional on a JSONL line.
func (d decoder) schemaVersion(p string, o map[string]json.RawMessage, required bool) error {
	v, ok := o["schema_version"]
	if !ok {
		if required {
			return d.errorf(p, "required field missing (want %d)", SchemaVersion)
		}
		return nil
	}
	n, err := d.integer(p, v)
	if err != nil {
		return err
	}
	if n != SchemaVersion {
		return d.errorf(p, "version %d is not supported (want %d)", n, SchemaVersion)
	}
	return nil
}

// settingKinds is what each export setting's value must be, from Settings'
// field types.
var settingKinds = func() map[string]string {
	t := reflect.TypeFor[settings.Settings]()
	out := map[string]string{}
	for i, name := range settings.SettingNames() {
		switch t.Field(i).Type.Kind() {
		case reflect.Int:
			out[name] = "an integer"
		case reflect.String:
			out[name] = "a string"
		case reflect.Bool:
			out[name] = "a boolean"
		case reflect.Slice:
			out[name] = "an array of strings"
		}
	}
	return out
}()

// exportLayer decodes an "export" object: export flags' long names with
// "-" written "_", each value of its flag's type.
func (d decoder) exportLayer(p string, raw json.RawMessage) (layer, error) {
	l := layer{path: p, members: map[string]json.RawMessage{}}
	if raw == nil {
		return l, nil
	}
	o, err := d.object(p, raw, settings.SettingNames())
	if err != nil {
		return l, err
	}
	for k, v := range o {
		var s settings.Settings
		one, _ := json.Marshal(map[string]json.RawMessage{k: v})
		if kind(v) == "null" || json.Unmarshal(one, &s) != nil {
			return l, d.errorf(member(p, k), "want %s, got %s", settingKinds[k], describe(v))
		}
		l.members[k] = v
	}
	return l, nil
}

// extensions decodes an extensions object: opaque JSON values by key.
func (d decoder) extensions(p string, raw json.RawMessage) (layer, error) {
	l := layer{path: p, members: map[string]json.RawMessage{}}
	if raw == nil {
		return l, nil
	}
	o, err := d.object(p, raw, nil)
	if err != nil {
		return l, err
	}
	for k, v := range o {
		if k == "" {
			return l, d.errorf(p, "an extension key must not be empty")
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, v); err != nil {
			return l, d.errorf(member(p, k), "%v", err)
		}
		l.members[k] = compact.Bytes()
	}
	return l, nil
}

// mergeExtensions merges extension layers (lowest first) by top-level key:
// a later key replaces the whole earlier value.
func mergeExtensions(layers ...layer) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for _, l := range layers {
		for k, v := range l.members {
			out[k] = v
		}
	}
	return out
}

// expected decodes an expected object.
func (d decoder) expected(p string, raw json.RawMessage) (*Expected, error) {
	if raw == nil {
		return nil, nil
	}
	o, err := d.object(p, raw, expectedField)
	if err != nil {
		return nil, err
	}
	e := &Expected{}
	if v, ok := o["state"]; ok {
		if e.State, err = d.str(member(p, "state"), v); err != nil {
			return nil, err
		}
		if e.State != StateSucceeded && e.State != StateFailed {
			return nil, d.errorf(member(p, "state"), "%q: want %s or %s", e.State, StateSucceeded, StateFailed)
		}
	}
	for _, f := range []struct {
		name string
		out  *int
		min  int
	}{{"attempt_no", &e.AttemptNo, 1}, {"min_episodes", &e.MinEpisodes, 0}, {"min_frames", &e.MinFrames, 0}} {
		v, ok := o[f.name]
		if !ok {
			continue
		}
		if *f.out, err = d.integer(member(p, f.name), v); err != nil {
			return nil, err
		}
		if *f.out < f.min {
			return nil, d.errorf(member(p, f.name), "%d: want at least %d", *f.out, f.min)
		}
	}
	return e, nil
}

// jsonSyntaxError describes why raw is not JSON, with the byte offset.
func jsonSyntaxError(raw []byte) string {
	var v any
	err := json.Unmarshal(raw, &v)
	if se, ok := err.(*json.SyntaxError); ok {
		return fmt.Sprintf("offset %d: %v", se.Offset, se)
	}
	if err == nil {
		return "trailing data"
	}
	return err.Error()
}

// ReadPaths lists every path the tasks read, and extra.
func ReadPaths(tasks []Task, extra []string) []string {
	in := append([]string(nil), extra...)
	for _, t := range tasks {
		in = append(in, t.SessionDir)
		in = append(in, t.Export.Files(t.BaseDir)...)
	}
	return in
}

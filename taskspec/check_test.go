package taskspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// CheckFile tells a valid file (hash, warnings), an invalid one (every
// violation) and a JSON syntax error apart, with arrays, never null, for
// the findings; WriteText says each on the stream it belongs to.
func TestCheckFile(t *testing.T) {
	valid := `{"schema":"ceres-task-specification","version":1,"runTitle":"W","cycleCount":1,
		"tasks":[{"id":"o","type":"open","label":"L","instructions":"I","repeatCount":1,"resetTimeS":2}]}`
	invalid := `{"schema":"ceres-task-specification","version":2,"runTitle":"X","cycleCount":1,
		"tasks":[{"id":"o","type":"open","label":"L","instructions":"I","repeatCount":1,"resetTimeS":5,"durationS":3}]}`
	for _, c := range []struct {
		name, data       string
		valid            bool
		warnings, errors int
		out, errw        string
	}{
		{"valid.json", valid, true, 1, 0, "valid.json: valid, hash ", "valid.json: warning: tasks[0].resetTimeS: "},
		{"invalid.json", invalid, false, 0, 2, "", "invalid.json: version: "},
		{"syntax.json", "{", false, 0, 1, "", "syntax.json: "},
	} {
		r, spec := CheckFile(c.name, []byte(c.data))
		if r.File != c.name || r.Valid != c.valid || (spec != nil) != c.valid || len(r.Warnings) != c.warnings || len(r.Violations) != c.errors ||
			r.Warnings == nil || r.Violations == nil || (r.Hash != "") != c.valid {
			t.Errorf("%s: %+v, spec %v", c.name, r, spec != nil)
		}
		var out, errw bytes.Buffer
		if err := r.WriteText(&out, &errw); err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(out.Bytes(), []byte(c.out)) || (c.out == "") != (out.Len() == 0) || !bytes.HasPrefix(errw.Bytes(), []byte(c.errw)) {
			t.Errorf("%s: text\nout  %q\nerrw %q", c.name, out.String(), errw.String())
		}
	}
	r := UnreadableCheck("gone.json", errors.New("open gone.json: no such file"))
	b, _ := json.Marshal(r)
	if want := `{"file":"gone.json","valid":false,"hash":"","warnings":[],"violations":[],"error":"open gone.json: no such file"}`; string(b) != want {
		t.Errorf("unreadable check %s, want %s", b, want)
	}
}

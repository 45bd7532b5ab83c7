package privacy

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/taskspec"
)

const specJSON = `{"schema":"ceres-task-specification","version":1,"runTitle":"Sample transfer",
 "runDescription":"Move each sample into the rack","cycleCount":2,"tasks":[
 {"id":"pick","type":"timed","label":"Pick sample","instructions":"Pick one sample","durationS":12.5,"repeatCount":3,"resetTimeS":5},
 {"id":"inspect","type":"open","label":"Inspect until complete, then say so","instructions":"Inspect until complete","repeatCount":1,"resetTimeS":5},
 {"id":"wrap","type":"open","label":"Sample transfer wrap-up","instructions":"Wrap","repeatCount":1,"resetTimeS":5},
 {"id":"pause","type":"pause","label":"Inter-cycle pause","instructions":"Wait","durationS":2}]}`

func spec(t *testing.T) *taskspec.Spec {
	t.Helper()
	s, err := taskspec.Parse([]byte(specJSON))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Mode
		err  string
	}{
		{"", Full, ""}, {"full", Full, ""}, {"metadata-only", MetadataOnly, ""},
		{"metadata_only", Full, `--privacy "metadata_only": want full or metadata-only`},
	} {
		got, err := ParseMode(tc.in)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && err.Error() != tc.err {
			t.Errorf("ParseMode(%q) = %q, %v; want %q, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
	if !errors.Is(MetadataOnly.Check(""), ErrNoSalt) || MetadataOnly.Check("s") != nil || Full.Check("") != nil {
		t.Error("Check: a metadata-only mode needs a salt, and only it")
	}
}

func TestTaskLabel(t *testing.T) {
	t.Parallel()
	s := spec(t)
	want := map[string]string{
		"pick":    "Pick sample", // the label carries no private string
		"inspect": "inspect",     // the label quotes the instructions
		"wrap":    "wrap",        // the label carries the run title
		"pause":   "Inter-cycle pause",
	}
	for _, task := range s.Tasks {
		if got := TaskLabel(task, "session-1", s); got != want[task.ID] {
			t.Errorf("TaskLabel(%s) = %q, want %q", task.ID, got, want[task.ID])
		}
	}
}

// A label is public only when it carries nothing private
// of any specification the dataset is made under (a re-export's recorded
// one too), nor the session id, compared as verify compares: ignoring case,
// width and separators.
func TestTaskLabelEverySpecification(t *testing.T) {
	applied := spec(t)
	recorded, err := taskspec.Parse([]byte(strings.Replace(specJSON, `"instructions":"Pick one sample"`, `"instructions":"Grab the vial gently"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		label string
		want  string // "" for the label itself
	}{
		{"Grab the vial gently", "pick"},  // the recorded instructions, verbatim
		{"grab THE vial gently!", "pick"}, // other case
		{"Grab-the-vial_gently", "pick"},  // separators of an id
		{"ＧＲＡＢ ｔｈｅ ｖｉａｌ ｇｅｎｔｌｙ", "pick"},  // full-width forms (NFKC)
		{"Pick for RIG-7 2026", "pick"},   // the session id, as an id writes it
		{"Take sample", ""},               // public
	} {
		task := applied.Tasks[0]
		task.Label = c.label
		want := c.want
		if want == "" {
			want = c.label
		}
		if got := TaskLabel(task, "rig_7 2026", applied, recorded); got != want {
			t.Errorf("TaskLabel(%q) = %q, want %q", c.label, got, want)
		}
	}
	// The recorded specification's redacted copy checks its labels against
	// the applied one as well.
	r := applied
	r.Tasks = slices.Clone(applied.Tasks)
	r.Tasks[0].Label = "Pick one sample, carefully" // quotes the applied instructions
	other, err := taskspec.Parse(RedactSpec(recorded, "session-9", applied))
	if err != nil {
		t.Fatal(err)
	}
	if other.Tasks[0].Label != recorded.Tasks[0].Label {
		t.Errorf("redacted recorded label %q, want %q (it carries nothing private)", other.Tasks[0].Label, recorded.Tasks[0].Label)
	}
	if got, _ := taskspec.Parse(RedactSpec(r, "session-9", recorded)); got.Tasks[0].Label != "pick" {
		t.Errorf("redacted label %q, want the id (it quotes the instructions)", got.Tasks[0].Label)
	}
}

// Find sees a private string however it is written: in
// other case, JSON-escaped (\u00XX included), in other Unicode forms, in a
// string of a JSON document, with an id's separators.
func TestFindEveryForm(t *testing.T) {
	private := append(PrivateStrings("Rig3-Session 0412", spec(t)), "Café au lait", "Nin\u0303o")
	for _, c := range []struct {
		name string
		b    string
		want string // the private string found; "" for none
	}{
		{"verbatim", `x Sample transfer y`, "Sample transfer"},
		{"lower case", `{"case_id": "rig3-session 0412"}`, "Rig3-Session 0412"},
		{"upper case", `README: SAMPLE TRANSFER`, "Sample transfer"},
		{"JSON escape", `{"t": "Sample\u0020transfer"}`, "Sample transfer"},
		{"JSON escape of a letter", `"\u0053ample transfer"`, "Sample transfer"},
		{"escape in non-JSON bytes", "\x00\x01\\u0053ample transfer\xff", "Sample transfer"},
		{"full width", `ｓａｍｐｌｅ　ｔｒａｎｓｆｅｒ`, "Sample transfer"},
		{"decomposed accent", "CAFE\u0301 AU LAIT", "Café au lait"},
		{"composed accent", "niño", "Nin\u0303o"},
		{"id separators in a JSON string", `{"task_id": "week__rig3-session-0412__av1__run-1"}`, "Rig3-Session 0412"},
		{"id separators on a line", "shard rig3_session_0412 done\n", "Rig3-Session 0412"},
		{"HTML entity on a line", "<p>Sample&#32;transfer</p>", "Sample transfer"},
		{"binary around it", "\x89PNG\x00\x00rIG3-sEsSiOn 0412\x00", "Rig3-Session 0412"},
		{"nothing private", `{"task": "pick", "session": "h-0123456789abcdef0123456789abcdef"}`, ""},
	} {
		got := Find([]byte(c.b), private)
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%s: found %+v in %q, want nothing", c.name, got, c.b)
		case c.want != "" && (len(got) == 0 || got[0].Private != c.want):
			t.Errorf("%s: found %+v in %q, want %q", c.name, got, c.b, c.want)
		}
	}
}

func TestSaltStrings(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`"ana"`, `"` + SaltedHash("k", "ana") + `"`},
		{`{"org.lab.owner": "ana", "n": 12345678901234567890, "ok": true, "x": null}`,
			`{"n":12345678901234567890,"ok":true,"org.lab.owner":"` + SaltedHash("k", "ana") + `","x":null}`},
		{`{"a": ["rig3", {"b": "c"}]}`, `{"a":["` + SaltedHash("k", "rig3") + `",{"b":"` + SaltedHash("k", "c") + `"}]}`},
	} {
		got, err := SaltStrings("k", []byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("SaltStrings(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
		if _, _, ok, err := SaltedValuesOnly(got); !ok || err != nil {
			t.Errorf("SaltedValuesOnly(%s) = %v, %v; want every value salted", got, ok, err)
		}
	}
	if p, v, ok, _ := SaltedValuesOnly([]byte(`{"a": {"b": ["h-0123456789abcdef0123456789abcdef", "rig3"]}}`)); ok || p != "$.a.b[1]" || v != "rig3" {
		t.Errorf("SaltedValuesOnly: %s %q %v, want $.a.b[1] rig3 false", p, v, ok)
	}
}

func TestRedactSpec(t *testing.T) {
	t.Parallel()
	s := spec(t)
	b := RedactSpec(s, "session-1")
	r, err := taskspec.Parse(b)
	if err != nil {
		t.Fatalf("redacted specification is not valid: %v\n%s", err, b)
	}
	if !bytes.Equal(r.Canonical(), b) {
		t.Error("redacted bytes are not canonical")
	}
	for _, p := range PrivateStrings("", s) {
		// The task id "wrap" stays (ids are the tasks' identity), its
		// instructions "Wrap" do not: verify leaves out what an id holds.
		if bytes.Contains(b, []byte(p)) {
			t.Errorf("redacted specification holds %q:\n%s", p, b)
		}
	}
	if r.CycleCount != 2 || len(r.Tasks) != 4 || r.Tasks[0].ID != "pick" || *r.Tasks[0].DurationS != 12.5 || r.Tasks[1].Type != "open" {
		t.Errorf("redaction changed ids, types or numbers: %+v", r)
	}
	if s.RunTitle != "Sample transfer" || s.Tasks[0].Instructions != "Pick one sample" {
		t.Error("RedactSpec changed its input")
	}
}

func TestPrivateStrings(t *testing.T) {
	t.Parallel()
	got := PrivateStrings("abc", spec(t), nil, spec(t))
	want := []string{"Move each sample into the rack", "Inspect until complete", "Sample transfer", "Pick one sample", "Wait"}
	if !slices.Equal(got, want) {
		t.Errorf("PrivateStrings = %q, want %q (longest first, no duplicates, none under 4 bytes, none a task id carries)", got, want)
	}
}

func TestSaltedHash(t *testing.T) {
	t.Parallel()
	a := SaltedHash("pepper", "session-1")
	if a != SaltedHash("pepper", "session-1") || a == SaltedHash("salt", "session-1") || a == SaltedHash("pepper", "session-2") || len(a) != 34 {
		t.Errorf("SaltedHash = %q: want 34 characters, a function of exactly the salt and the string", a)
	}
	// HMAC-SHA-256 vector: key "key", message "The quick brown fox jumps over the lazy dog".
	if got := SaltedHash("key", "The quick brown fox jumps over the lazy dog"); got != "h-f7bc83f430538424b13298e6aa6fb143" {
		t.Errorf("SaltedHash vector = %s", got)
	}
}

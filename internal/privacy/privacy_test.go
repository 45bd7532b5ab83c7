package privacy

import (
	"bytes"
	"errors"
	"slices"
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
		if got := TaskLabel(s, task); got != want[task.ID] {
			t.Errorf("TaskLabel(%s) = %q, want %q", task.ID, got, want[task.ID])
		}
	}
}

func TestRedactSpec(t *testing.T) {
	t.Parallel()
	s := spec(t)
	b := RedactSpec(s)
	r, err := taskspec.Parse(b)
	if err != nil {
		t.Fatalf("redacted specification is not valid: %v\n%s", err, b)
	}
	if !bytes.Equal(r.Canonical(), b) {
		t.Error("redacted bytes are not canonical")
	}
	for _, p := range PrivateStrings("", s) {
		// Case-sensitive, as verify looks: the task id "wrap" stays (ids
		// are the tasks' identity), its instructions "Wrap" do not.
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
	want := []string{"Move each sample into the rack", "Inspect until complete", "Sample transfer", "Pick one sample", "Wrap", "Wait"}
	if !slices.Equal(got, want) {
		t.Errorf("PrivateStrings = %q, want %q (longest first, no duplicates, none under 4 bytes)", got, want)
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

package taskspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, that every error is an
// *InvalidError with at least one violation, and that an accepted
// document's canonical form re-validates to the same hash and is a fixed
// point.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/example.json", "testdata/tiny-session-spec.json"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, doc := range awkwardDocuments() {
		f.Add([]byte(doc))
	}
	f.Add([]byte(doc(head, timedTask, openTask, pauseTask)))
	f.Add([]byte(doc(head+`,"runTitle":"x"`, with(timedTask, `"durationS":1`, `"durationS":-0`))))
	f.Add([]byte(`{"schema":"ceres-task-specification","version":1e0,"runTitle":"\u2028","cycleCount":9007199254740993,"tasks":[]}`))
	f.Add([]byte(`[{"a":"\ud83d\ude00"}, 1.5e-7, true, null]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			var ie *InvalidError
			if !errors.As(err, &ie) || len(ie.Violations) == 0 {
				t.Fatalf("error without violations: %v", err)
			}
			if s != nil {
				t.Fatalf("Spec returned with an error")
			}
			return
		}
		canon := s.Canonical()
		again, err := Parse(canon)
		if err != nil {
			t.Fatalf("canonical form does not re-validate: %v\n%q", err, canon)
		}
		if !bytes.Equal(again.Canonical(), canon) {
			t.Fatalf("canonical form is not a fixed point:\n%q\n%q", canon, again.Canonical())
		}
		if again.Hash() != s.Hash() {
			t.Fatalf("hash changed on re-parse")
		}
		if d := Diff(s, again); d != nil {
			t.Fatalf("re-parsed spec differs: %+v", d)
		}
		_ = s.Warnings()
	})
}

// FuzzJSONReader compares the strict reader with encoding/json: it never
// accepts what encoding/json rejects, it rejects what encoding/json accepts
// only for the documented reasons (invalid UTF-8, unpaired surrogates, deep
// nesting), and it decodes to the same values.
func FuzzJSONReader(f *testing.F) {
	f.Add([]byte(`{"a":[1,-0.5e+3,"x\u00e9\ud83d\ude00\n",true,false,null,{}],"a":{"b":[]}}`))
	f.Add([]byte(`"\ud800"`))
	f.Add([]byte("\"\xff\""))
	f.Add([]byte(` [ 1 , 2 ] `))
	f.Add([]byte(`01`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parseJSON(data)
		if !json.Valid(data) {
			if err == nil {
				t.Fatalf("accepted what encoding/json rejects: %q", data)
			}
			return
		}
		if err != nil {
			msg := err.Error()
			if !strings.Contains(msg, "UTF-8") && !strings.Contains(msg, "surrogate") && !strings.Contains(msg, "nesting") {
				t.Fatalf("rejected valid JSON %q: %v", data, err)
			}
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("encoding/json: %v", err)
		}
		if got := toAny(v); !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded %#v, encoding/json %#v", got, want)
		}
	})
}

// toAny converts a parsed value to encoding/json's representation (last
// duplicate key wins, numbers as json.Number).
func toAny(v *jsonValue) any {
	switch v.kind {
	case kindBool:
		return v.boolean
	case kindNumber:
		return json.Number(v.text)
	case kindString:
		return v.text
	case kindArray:
		out := make([]any, len(v.elems))
		for i, e := range v.elems {
			out[i] = toAny(e)
		}
		return out
	case kindObject:
		out := make(map[string]any, len(v.members))
		for _, m := range v.members {
			out[m.key] = toAny(m.value)
		}
		return out
	}
	return nil
}

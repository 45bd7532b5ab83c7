package shard

import (
	"reflect"
	"testing"
)

func TestDecodeJSONKeepsOrderAndTypes(t *testing.T) {
	t.Parallel()
	in := `{"b": 1, "a": [1.0, 2.5, -3, "x", null, true, {"z": {}, "y": []}], "c": 1e-05}`
	v, err := DecodeJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := JSONObject{
		{"b", int64(1)},
		{"a", []any{1.0, 2.5, int64(-3), "x", nil, true, JSONObject{{"z", JSONObject{}}, {"y", []any{}}}}},
		{"c", 1e-05},
	}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("decoded %#v, want %#v", v, want)
	}
	out, err := marshalPyJSON(v, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := `{"b": 1, "a": [1.0, 2.5, -3, "x", null, true, {"z": {}, "y": []}], "c": 1e-05}`; string(out) != got {
		t.Fatalf("re-encoded %s, want %s", out, got)
	}
	for _, bad := range []string{``, `{`, `{"a": 1} x`, `[1,]`, `1e999`} {
		if _, err := DecodeJSON([]byte(bad)); err == nil {
			t.Errorf("DecodeJSON(%q) succeeded", bad)
		}
	}
}

// FuzzDecodeJSON: whatever DecodeJSON accepts, the shard's JSON writer
// writes back to something DecodeJSON reads as the same value.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2.0, "x"]}`, `[]`, `"\u00e9"`, `{"video.fps": 30, "info": {"k": null}}`, `-0.0`, `123456789012345678901234567890`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := DecodeJSON(data)
		if err != nil {
			return
		}
		out, err := marshalPyJSON(v, 4, false)
		if err != nil {
			t.Fatalf("marshal of a decoded value: %v", err)
		}
		w, err := DecodeJSON(out)
		if err != nil {
			t.Fatalf("re-decode of %s: %v", out, err)
		}
		if !reflect.DeepEqual(v, w) {
			t.Fatalf("round trip changed %#v into %#v", v, w)
		}
	})
}

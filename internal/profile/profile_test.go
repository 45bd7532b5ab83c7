package profile

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/journal"
)

const header = "schema: ceres-feature-profile\nversion: 1\n"

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		path     string // the key path the error must name
		line     int
		msg      string
	}{
		{"empty", "", "", 0, "empty"},
		{"not a mapping", "[1, 2]", "", 1, "is a list, want a mapping"},
		{"not yaml", "a: [", "", 0, "not YAML or JSON"},
		{"two documents", header + "---\n" + header, "", 3, "more than one YAML document"},
		{"unknown top key", header + "featurs: []\n", "featurs", 3, `unknown key "featurs" in the profile`},
		{"wrong schema", "schema: other\nversion: 1\n", "schema", 1, `want "ceres-feature-profile"`},
		{"wrong version", "schema: ceres-feature-profile\nversion: 2\n", "version", 2, "want 1"},
		{"version string", "schema: ceres-feature-profile\nversion: \"1\"\n", "version", 2, "is a string, want an integer"},
		{"duplicate key", header + "version: 1\n", "version", 3, "given twice"},
		{"features not list", header + "features: {}\n", "features", 3, "is a mapping, want a list"},
		{"unknown feature key", header + "features:\n  - name: a\n    field: [x]\n", "features[0].field", 5, `unknown key "field" in features[0]`},
		{"unknown ref key", header + "features:\n  - name: a\n    fields:\n      - {stream: s, field: f, slise: [0, 1]}\n", "features[0].fields[0].slise", 6, "unknown key"},
		{"slice reversed", header + "features:\n  - name: a\n    fields:\n      - {stream: s, field: f, slice: [2, 1]}\n", "features[0].fields[0].slice", 6, "0 <= start < stop"},
		{"slice one number", header + "features:\n  - name: a\n    fields:\n      - {stream: s, field: f, slice: [2]}\n", "features[0].fields[0].slice", 6, "want [start, stop]"},
		{"slice float", header + "features:\n  - name: a\n    fields:\n      - {stream: s, field: f, slice: [0, 1.5]}\n", "features[0].fields[0].slice[1]", 6, "is a number, want an integer"},
		{"empty stream", header + "features:\n  - name: a\n    fields:\n      - {stream: \"\", field: f}\n", "features[0].fields[0].stream", 6, "is empty"},
		{"no fields no next", header + "features:\n  - name: a\n", "features[0]", 4, "needs fields or next"},
		{"fields and next", header + "features:\n  - name: a\n    next: b\n    fields: [{stream: s, field: f}]\n", "features[0]", 4, "both fields and next"},
		{"next unknown", header + "features:\n  - name: a\n    next: b\n", "features[0].next", 5, `"b" names no feature`},
		{"next of derived", header + "features:\n  - {name: a, fields: [{stream: s, field: f}]}\n  - {name: b, next: a}\n  - {name: c, next: b}\n", "features[2].next", 6, "itself derived"},
		{"duplicate name", header + "features:\n  - {name: a, fields: [{stream: s, field: f}]}\n  - {name: a, fields: [{stream: s, field: g}]}\n", "features[1].name", 5, "already the name of features[0]"},
		{"default column", header + "features:\n  - {name: index, fields: [{stream: s, field: f}]}\n", "features[0].name", 4, "LeRobot's own columns"},
		{"slash in name", header + "features:\n  - {name: a/b, fields: [{stream: s, field: f}]}\n", "features[0].name", 4, "slash"},
		{"camera prefix", header + "features:\n  - {name: observation.images.x, fields: [{stream: s, field: f}]}\n", "features[0].name", 4, "camera features"},
		{"empty name in names", header + "features:\n  - {name: a, fields: [{stream: s, field: f}], names: [\"\"]}\n", "features[0].names[0]", 4, "is empty"},
		{"drop twice", header + "drop: [mic, mic]\n", "drop[1]", 3, "listed twice"},
		{"drop not strings", header + "drop: [{stream: mic}]\n", "drop[0]", 3, "is a mapping, want a string"},
		{"field of dropped stream", header + "drop: [s]\nfeatures:\n  - {name: a, fields: [{stream: s, field: f}]}\n", "features[0].fields[0].stream", 5, "is dropped"},
		{"camera twice", header + "cameras:\n  - {stream: front, name: a}\n  - {stream: front, name: b}\n", "cameras[1].stream", 5, "already named"},
		{"camera unknown key", header + "cameras:\n  - {stream: front, key: a}\n", "cameras[0].key", 4, "unknown key"},
		{"alias", header + "drop: &d [mic]\ncameras: *d\n", "cameras", 4, "aliases are not supported"},
		{"json unknown key", `{"schema": "ceres-feature-profile", "version": 1, "extra": true}`, "extra", 1, "unknown key"},
		{"non-string key", header + "1: x\n", "", 3, "key that is an integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tt.in))
			if err == nil {
				t.Fatalf("accepted:\n%s", tt.in)
			}
			var pe *PathError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is no *PathError", err, err)
			}
			if pe.File != "p.yaml" || pe.Path != tt.path || pe.Line != tt.line || !strings.Contains(pe.Msg, tt.msg) {
				t.Errorf("error %q: file %q path %q line %d; want p.yaml, path %q, line %d, message containing %q", err, pe.File, pe.Path, pe.Line, tt.path, tt.line, tt.msg)
			}
			if !strings.HasPrefix(err.Error(), "p.yaml") {
				t.Errorf("error %q does not start with the file name", err)
			}
		})
	}
}

func TestParseYAMLAndJSONAgree(t *testing.T) {
	t.Parallel()
	y := header + `features:
  - name: observation.state
    fields:
      - {stream: imu, field: accel, slice: [0, 2]}
      - {stream: gripper, field: force}
    names: [ax, ay, f]
  - name: action
    next: observation.state
drop: [mic]
cameras:
  - {stream: front, name: top}
`
	j := `{"schema":"ceres-feature-profile","version":1,
 "features":[{"name":"observation.state","fields":[{"stream":"imu","field":"accel","slice":[0,2]},{"stream":"gripper","field":"force"}],"names":["ax","ay","f"]},
  {"name":"action","next":"observation.state"}],
 "drop":["mic"],"cameras":[{"stream":"front","name":"top"}]}`
	py, err := Parse("a.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	pj, err := Parse("a.json", []byte(j))
	if err != nil {
		t.Fatal(err)
	}
	if string(py.Canonical()) != string(pj.Canonical()) {
		t.Errorf("YAML and JSON forms differ:\n%s\n%s", py.Canonical(), pj.Canonical())
	}
	// The canonical form parses back to itself.
	back, err := Parse("c.json", py.Canonical())
	if err != nil {
		t.Fatal(err)
	}
	if string(back.Canonical()) != string(py.Canonical()) || back.Hash() != py.Hash() {
		t.Errorf("canonical form does not round-trip")
	}
	want := `{"cameras":[{"name":"top","stream":"front"}],"drop":["mic"],"features":[{"fields":[{"field":"accel","slice":[0,2],"stream":"imu"},{"field":"force","stream":"gripper"}],"name":"observation.state","names":["ax","ay","f"]},{"name":"action","next":"observation.state"}],"schema":"ceres-feature-profile","version":1}`
	if got := string(py.Canonical()); got != want {
		t.Errorf("canonical\n%s\nwant\n%s", got, want)
	}
}

func testSession() journal.Session {
	return journal.Session{Streams: []journal.Stream{
		{ID: "imu", Kind: journal.KindSensor, Fields: []journal.Field{
			{Name: "accel", Dtype: journal.DtypeFloat32, Shape: []int{3}, Names: []string{"x", "y", "z"}},
			{Name: "gyro", Dtype: journal.DtypeFloat32, Shape: []int{3}},
		}},
		{ID: "gripper", Kind: journal.KindSensor, Fields: []journal.Field{
			{Name: "closed", Dtype: journal.DtypeBool},
			{Name: "force", Dtype: journal.DtypeFloat64, Names: []string{"newton"}},
		}},
		{ID: "front", Kind: journal.KindVideo},
		{ID: "wrist", Kind: journal.KindVideo},
		{ID: "mic", Kind: journal.KindAudio},
	}}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	p, err := Parse("p.yaml", []byte(header+`features:
  - name: observation.state
    fields:
      - {stream: imu, field: accel, slice: [1, 3]}
      - {stream: gripper, field: force}
  - name: action
    next: observation.state
    names: [a, b, c]
drop: [wrist]
cameras:
  - {stream: front, name: top}
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Resolve(p, testSession())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range r.Features {
		got = append(got, f.Name+" "+strings.Join(f.Names, ",")+" w"+string(rune('0'+f.Width)))
	}
	want := []string{
		"observation.state imu.accel.y,imu.accel.z,gripper.force w3",
		"action a,b,c w3",
		"observation.imu.gyro gyro_0,gyro_1,gyro_2 w3",
		"observation.gripper.closed  w1",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("features\n%q\nwant\n%q", got, want)
	}
	if s := r.Features[0].Parts[0]; s.From != 1 || s.To != 3 || s.FieldElems != 3 {
		t.Errorf("slice part %+v", s)
	}
	if r.Features[1].Next != 0 || r.Features[0].Next != -1 {
		t.Errorf("next indexes %d %d", r.Features[1].Next, r.Features[0].Next)
	}
	if len(r.Cameras) != 1 || r.Cameras[0] != (ResolvedCamera{Stream: "front", Key: "observation.images.top"}) {
		t.Errorf("cameras %+v", r.Cameras)
	}
	// A dropped field gets no default feature; the rest of its stream keeps
	// theirs.
	p, err = Parse("p.yaml", []byte(header+"drop: [gripper.closed, imu.accel]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r, err = Resolve(p, testSession()); err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, f := range r.Features {
		got = append(got, f.Name)
	}
	if want := []string{"observation.imu.gyro", "observation.gripper.force"}; !slices.Equal(got, want) {
		t.Errorf("with two fields dropped, features %q, want %q", got, want)
	}
	// The empty profile: every field its own feature, every camera kept.
	r, err = Resolve(nil, testSession())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Features) != 4 || r.Features[3].Names[0] != "newton" || len(r.Cameras) != 2 || r.CameraKey("wrist") != "observation.images.wrist" {
		t.Errorf("empty profile resolved to %+v", r)
	}
}

func TestResolveErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, path, msg string }{
		{"no stream", "features:\n  - {name: a, fields: [{stream: arm, field: q}]}\n", "features[0].fields[0].stream", `no stream "arm" in the session (have imu, gripper)`},
		{"not a sensor", "features:\n  - {name: a, fields: [{stream: front, field: q}]}\n", "features[0].fields[0].stream", "is a video stream"},
		{"no field", "features:\n  - {name: a, fields: [{stream: imu, field: mag}]}\n", "features[0].fields[0].field", "(have accel, gyro)"},
		{"slice past end", "features:\n  - {name: a, fields: [{stream: imu, field: accel, slice: [1, 4]}]}\n", "features[0].fields[0].slice", "past the 3 elements"},
		{"overlap", "features:\n  - {name: a, fields: [{stream: imu, field: accel, slice: [0, 2]}]}\n  - {name: b, fields: [{stream: imu, field: accel, slice: [1, 3]}]}\n", "features[1].fields[0]", "element 1 of imu.accel already feeds feature a"},
		{"names count", "features:\n  - {name: a, fields: [{stream: imu, field: accel}], names: [x, y]}\n", "features[0].names", "2 names for the 3 dimensions"},
		{"default clash", "features:\n  - {name: observation.imu.gyro, fields: [{stream: imu, field: accel}]}\n", "features[0].name", "also the default feature"},
		{"drop unknown", "drop: [lidar]\n", "drop[0]", `no stream "lidar"`},
		{"drop unknown field", "drop: [imu.mag]\n", "drop[0]", `stream "imu" has no field "mag"`},
		{"drop a camera's field", "drop: [front.q]\n", "drop[0]", `stream "front" has no field "q"`},
		{"take a dropped field", "features:\n  - {name: a, fields: [{stream: imu, field: gyro}]}\ndrop: [imu.gyro]\n", "features[0].fields[0]", "imu.gyro is dropped (drop: imu.gyro)"},
		{"camera unknown", "cameras:\n  - {stream: imu, name: x}\n", "cameras[0].stream", "no camera stream \"imu\" in the session (have front, wrist)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse("p.yaml", []byte(header+tt.in))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Resolve(p, testSession())
			var pe *PathError
			if !errors.As(err, &pe) || pe.Path != tt.path || !strings.Contains(pe.Msg, tt.msg) || pe.File != "p.yaml" {
				t.Errorf("error %v; want p.yaml: path %q, containing %q", err, tt.path, tt.msg)
			}
		})
	}
}

func TestParseMapping(t *testing.T) {
	t.Parallel()
	f, err := ParseMapping("observation.state = imu.accel[0:2], gripper.force")
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "observation.state" || len(f.Fields) != 2 || f.Fields[0].String() != "imu.accel[0:2]" || f.Fields[1].String() != "gripper.force" {
		t.Errorf("parsed %+v", f)
	}
	for _, bad := range []string{"x", "=imu.accel", "a=", "a=imu", "a=.f", "a=imu.accel[2:1]", "a=imu.accel[0:x]", "a=imu.accel[0:1"} {
		if _, err := ParseMapping(bad); err == nil {
			t.Errorf("--map %q accepted", bad)
		}
	}
	p, err := WithMappings(nil, []Feature{f, f})
	if err == nil || !strings.Contains(err.Error(), "already the name") {
		t.Errorf("two --map of one name: %v, %v", p, err)
	}
}

// FuzzParse: the parser never panics; whatever it accepts validates, and
// its canonical form parses back to the same bytes.
func FuzzParse(f *testing.F) {
	f.Add([]byte(header + "features:\n  - {name: a, fields: [{stream: s, field: f, slice: [0, 1]}]}\n  - {name: b, next: a}\ndrop: [m]\ncameras: [{stream: c, name: d}]\n"))
	f.Add([]byte(`{"schema":"ceres-feature-profile","version":1,"features":[]}`))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte(header + "features: [{name: a, fields: [{stream: s, field: f, slice: [0, 99999999999]}]}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("fuzz.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("accepted profile does not validate: %v", err)
		}
		c := p.Canonical()
		back, err := Parse("c.json", c)
		if err != nil {
			t.Fatalf("canonical form %s does not parse: %v", c, err)
		}
		if string(back.Canonical()) != string(c) {
			t.Fatalf("canonical form changes on a round trip:\n%s\n%s", c, back.Canonical())
		}
		_, _ = Resolve(p, testSession())
	})
}

// --map takes a field the profile drops: the command line is the more
// specific, so the field leaves drop and feeds the mapped feature.
func TestMappingTakesADroppedField(t *testing.T) {
	t.Parallel()
	p, err := Parse("p.yaml", []byte(header+"drop: [wrist, gripper.closed]\n"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseMapping("observation.grip=gripper.closed")
	if err != nil {
		t.Fatal(err)
	}
	q, err := WithMappings(p, []Feature{m})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(q.Drop, []string{"wrist"}) || !slices.Equal(p.Drop, []string{"wrist", "gripper.closed"}) {
		t.Errorf("drop %q (the profile's still %q), want [wrist]", q.Drop, p.Drop)
	}
	if _, err := Resolve(q, testSession()); err != nil {
		t.Error(err)
	}
}

// CameraKey returns the feature key of camera stream id, or "" when the
// stream is not a kept camera.
func (r *Resolved) CameraKey(stream string) string {
	for _, c := range r.Cameras {
		if c.Stream == stream {
			return c.Key
		}
	}
	return ""
}

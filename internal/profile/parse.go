package profile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ceres-robotics/ceres-export/internal/input"
)

// maxProfileBytes bounds what ReadFile and Parse accept: a profile is a
// few kilobytes; anything larger is not one.
const maxProfileBytes = 1 << 20

// ReadFile reads and parses the profile at path; errors name the path.
func ReadFile(path string) (*Profile, error) {
	data, err := input.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes a YAML or JSON profile strictly and validates it. file
// names the source in errors.
func Parse(file string, data []byte) (*Profile, error) {
	p, err := parse(data)
	if err != nil {
		var pe *PathError
		if errors.As(err, &pe) {
			pe.File = file
			return nil, pe
		}
		return nil, &PathError{File: file, Msg: err.Error()}
	}
	p.Source = file
	return p, nil
}

func parse(data []byte) (*Profile, error) {
	if len(data) > maxProfileBytes {
		return nil, fmt.Errorf("%d bytes: a profile is at most %d", len(data), maxProfileBytes)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("the file is empty; want a mapping with schema, version and features")
		}
		return nil, fmt.Errorf("not YAML or JSON: %v", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if err != nil {
			return nil, fmt.Errorf("after the first document: %v", err)
		}
		return nil, &PathError{Line: line, Msg: "more than one YAML document; a profile is one"}
	}
	if len(doc.Content) != 1 {
		return nil, fmt.Errorf("the file holds no YAML value")
	}
	d := decoder{lines: map[string]int{}}
	p := &Profile{}
	if err := d.profile(doc.Content[0], p); err != nil {
		return nil, err
	}
	p.lines = &d
	if err := p.Validate(); err != nil {
		var pe *PathError
		if errors.As(err, &pe) {
			pe.Line = d.line(pe.Path)
		}
		return nil, err
	}
	return p, nil
}

// decoder walks the YAML node tree, rejecting what the format lacks, and
// remembers the line of every key path for Validate's errors.
type decoder struct {
	lines map[string]int
}

// line is the line of path, or of the nearest enclosing path decoded.
func (d *decoder) line(path string) int {
	for path != "" {
		if l, ok := d.lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return d.lines[""]
}

func (d *decoder) errAt(n *yaml.Node, path, format string, args ...any) error {
	return &PathError{Path: path, Line: n.Line, Msg: fmt.Sprintf(format, args...)}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "null"
		case "!!str":
			return "a string"
		case "!!int":
			return "an integer"
		case "!!float":
			return "a number"
		case "!!bool":
			return "a boolean"
		}
		return "a scalar " + n.ShortTag()
	}
	return "nothing"
}

// fields walks mapping n at path, calling set for each key in allowed;
// unknown and duplicate keys are errors.
func (d *decoder) fields(n *yaml.Node, path string, allowed []string, set func(key string, v *yaml.Node, at string) error) error {
	d.lines[path] = n.Line
	if n.Kind != yaml.MappingNode {
		return d.errAt(n, path, "is %s, want a mapping", kindName(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			return d.errAt(k, path, "has a key that is %s, want a string", kindName(k))
		}
		at := k.Value
		if path != "" {
			at = path + "." + k.Value
		}
		known := false
		for _, a := range allowed {
			known = known || a == k.Value
		}
		if !known {
			where := "the profile"
			if path != "" {
				where = path
			}
			return d.errAt(k, at, "unknown key %q in %s (want %s)", k.Value, where, strings.Join(allowed, ", "))
		}
		if seen[k.Value] {
			return d.errAt(k, at, "key %q given twice", k.Value)
		}
		seen[k.Value] = true
		if v.Kind == yaml.AliasNode {
			return d.errAt(v, at, "YAML aliases are not supported in a profile")
		}
		d.lines[at] = k.Line
		if err := set(k.Value, v, at); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) list(n *yaml.Node, path string, item func(i int, v *yaml.Node, at string) error) error {
	if n.Kind != yaml.SequenceNode {
		return d.errAt(n, path, "is %s, want a list", kindName(n))
	}
	for i, v := range n.Content {
		at := fmt.Sprintf("%s[%d]", path, i)
		if v.Kind == yaml.AliasNode {
			return d.errAt(v, at, "YAML aliases are not supported in a profile")
		}
		d.lines[at] = v.Line
		if err := item(i, v, at); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) str(n *yaml.Node, path string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return "", d.errAt(n, path, "is %s, want a string", kindName(n))
	}
	return n.Value, nil
}

func (d *decoder) integer(n *yaml.Node, path string) (int, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return 0, d.errAt(n, path, "is %s, want an integer", kindName(n))
	}
	v, err := strconv.ParseInt(n.Value, 0, 32)
	if err != nil {
		return 0, d.errAt(n, path, "%q: want an integer of at most 32 bits", n.Value)
	}
	return int(v), nil
}

func (d *decoder) strings(n *yaml.Node, path string) ([]string, error) {
	var out []string
	err := d.list(n, path, func(_ int, v *yaml.Node, at string) error {
		s, err := d.str(v, at)
		out = append(out, s)
		return err
	})
	return out, err
}

func (d *decoder) profile(n *yaml.Node, p *Profile) error {
	d.lines[""] = n.Line
	return d.fields(n, "", []string{"schema", "version", "features", "drop", "cameras"}, func(key string, v *yaml.Node, at string) (err error) {
		switch key {
		case "schema":
			p.Schema, err = d.str(v, at)
		case "version":
			p.Version, err = d.integer(v, at)
		case "features":
			err = d.list(v, at, func(_ int, v *yaml.Node, at string) error {
				var f Feature
				err := d.feature(v, at, &f)
				p.Features = append(p.Features, f)
				return err
			})
		case "drop":
			p.Drop, err = d.strings(v, at)
		case "cameras":
			err = d.list(v, at, func(_ int, v *yaml.Node, at string) error {
				var c Camera
				err := d.fields(v, at, []string{"stream", "name"}, func(key string, v *yaml.Node, at string) (err error) {
					switch key {
					case "stream":
						c.Stream, err = d.str(v, at)
					case "name":
						c.Name, err = d.str(v, at)
					}
					return err
				})
				p.Cameras = append(p.Cameras, c)
				return err
			})
		}
		return err
	})
}

func (d *decoder) feature(n *yaml.Node, path string, f *Feature) error {
	return d.fields(n, path, []string{"name", "fields", "next", "names"}, func(key string, v *yaml.Node, at string) (err error) {
		switch key {
		case "name":
			f.Name, err = d.str(v, at)
		case "next":
			f.Next, err = d.str(v, at)
		case "names":
			f.Names, err = d.strings(v, at)
		case "fields":
			err = d.list(v, at, func(_ int, v *yaml.Node, at string) error {
				var r FieldRef
				err := d.fieldRef(v, at, &r)
				f.Fields = append(f.Fields, r)
				return err
			})
		}
		return err
	})
}

func (d *decoder) fieldRef(n *yaml.Node, path string, r *FieldRef) error {
	return d.fields(n, path, []string{"stream", "field", "slice"}, func(key string, v *yaml.Node, at string) (err error) {
		switch key {
		case "stream":
			r.Stream, err = d.str(v, at)
		case "field":
			r.Field, err = d.str(v, at)
		case "slice":
			if v.Kind != yaml.SequenceNode || len(v.Content) != 2 {
				return d.errAt(v, at, "is %s, want [start, stop]", kindName(v))
			}
			var s [2]int
			for i := range s {
				if s[i], err = d.integer(v.Content[i], fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
			r.Slice = &s
		}
		return err
	})
}

package profile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseMapping parses the --map form NAME=stream.field[,stream.field...]
// into a Feature: the one-off way of writing one profile feature. A
// reference may take a slice of a vector field, stream.field[start:stop].
// The stream id ends at the reference's first dot.
func ParseMapping(s string) (Feature, error) {
	name, list, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.TrimSpace(list) == "" {
		return Feature{}, fmt.Errorf("want NAME=stream.field[,stream.field...]")
	}
	f := Feature{Name: name}
	for _, ref := range strings.Split(list, ",") {
		r, err := parseFieldRef(strings.TrimSpace(ref))
		if err != nil {
			return Feature{}, err
		}
		f.Fields = append(f.Fields, r)
	}
	return f, nil
}

// parseFieldRef parses stream.field or stream.field[start:stop].
func parseFieldRef(s string) (FieldRef, error) {
	var r FieldRef
	body := s
	if open := strings.IndexByte(s, '['); open >= 0 {
		if !strings.HasSuffix(s, "]") {
			return r, fmt.Errorf("%q: a slice is written [start:stop] at the end", s)
		}
		a, b, ok := strings.Cut(s[open+1:len(s)-1], ":")
		start, err1 := strconv.Atoi(a)
		stop, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || start < 0 || stop <= start {
			return r, fmt.Errorf("%q: want [start:stop] with 0 <= start < stop", s)
		}
		r.Slice = &[2]int{start, stop}
		body = s[:open]
	}
	stream, field, ok := strings.Cut(body, ".")
	if !ok || stream == "" || field == "" {
		return r, fmt.Errorf("%q: want stream.field", s)
	}
	r.Stream, r.Field = stream, field
	return r, nil
}

// WithMappings returns a copy of p (nil: an empty profile) with the
// features of --map appended, validated together.
func WithMappings(p *Profile, mappings []Feature) (*Profile, error) {
	out := New()
	if p != nil {
		c := *p
		out = &c
		out.Features = append([]Feature(nil), p.Features...)
	}
	out.Features = append(out.Features, mappings...)
	// A field the profile drops (stream.field) and a mapping takes is the
	// mapping's: the command line is the more specific of the two.
	mapped := map[string]bool{}
	for _, m := range mappings {
		for _, r := range m.Fields {
			mapped[r.Stream+"."+r.Field] = true
		}
	}
	out.Drop = slices.DeleteFunc(slices.Clone(out.Drop), func(d string) bool { return mapped[d] })
	if err := out.Validate(); err != nil {
		return nil, err
	}
	return out, nil
}

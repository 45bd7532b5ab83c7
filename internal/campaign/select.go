package campaign

import (
	"fmt"
	"slices"
	"strings"
)

// Selection narrows a campaign to some of its identity dimensions. Values
// are normalised as ids are. Within one dimension any value matches (or);
// across dimensions all must (and). No value in any dimension selects every
// task.
type Selection struct {
	CaseIDs    []string
	SettingIDs []string
	RunIDs     []string
}

// Args is the selection as command-line flags, in a fixed order.
func (s Selection) Args() []string {
	var out []string
	for _, d := range s.dimensions() {
		for _, v := range d.values {
			out = append(out, "--"+d.flag, v)
		}
	}
	return out
}

type dimension struct {
	flag   string
	values []string
	of     func(Task) string
}

func (s Selection) dimensions() []dimension {
	return []dimension{
		{"case-id", s.CaseIDs, func(t Task) string { return t.CaseID }},
		{"setting-id", s.SettingIDs, func(t Task) string { return t.SettingID }},
		{"run-id", s.RunIDs, func(t Task) string { return t.RunID }},
	}
}

// Select returns the tasks the selection matches, in manifest order. An
// empty result is an error, never a quiet no-op; so is a value that no task
// of the manifest has (a typo would otherwise narrow the batch silently).
func Select(tasks []Task, s Selection) ([]Task, error) {
	dims := s.dimensions()
	wanted := make([]map[string]bool, len(dims))
	for i, d := range dims {
		have := map[string]bool{}
		for _, t := range tasks {
			have[d.of(t)] = true
		}
		for _, v := range d.values {
			n := NormaliseID(v)
			if n == "" {
				return nil, selectionError(d.flag, v, "normalises to nothing; want at least one letter or digit")
			}
			if !have[n] {
				return nil, selectionError(d.flag, v, fmt.Sprintf("no task of the manifest has %s %s (it has %s)",
					strings.ReplaceAll(strings.TrimPrefix(d.flag, "--"), "-", "_"), cutLong(n), listSome(have)))
			}
			if wanted[i] == nil {
				wanted[i] = map[string]bool{}
			}
			wanted[i][n] = true
		}
	}
	var out []Task
	for _, t := range tasks {
		ok := true
		for i, d := range dims {
			if wanted[i] != nil && !wanted[i][d.of(t)] {
				ok = false
			}
		}
		if ok {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("selection %s matches no task", strings.Join(s.Args(), " "))
	}
	return out, nil
}

// listSome lists up to eight sorted values, then how many more.
func listSome(set map[string]bool) string {
	var vals []string
	for v := range set {
		vals = append(vals, v)
	}
	slices.Sort(vals)
	if len(vals) > 8 {
		return strings.Join(vals[:8], ", ") + fmt.Sprintf(" and %d more", len(vals)-8)
	}
	return strings.Join(vals, ", ")
}

// Share is the array task's part of tasks: task i belongs to array index
// i mod count. Every task belongs to exactly one index, shares differ in
// size by at most one, and a share depends only on the selected tasks and
// their order, so a rerun of one array task redoes only its own share.
func Share(tasks []Task, index, count int) ([]Task, error) {
	if count < 1 {
		return nil, fmt.Errorf("array count %d: want at least 1", count)
	}
	if index < 0 || index >= count {
		return nil, fmt.Errorf("array index %d: want 0 to %d", index, count-1)
	}
	var out []Task
	for i, t := range tasks {
		if i%count == index {
			out = append(out, t)
		}
	}
	return out, nil
}

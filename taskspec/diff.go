package taskspec

import "fmt"

// Difference is one field that differs between two specifications. Old and
// New are the field's values as canonical JSON ("" when the field is
// absent on that side).
//
// Path names top-level fields as in a document (`runTitle`) and task fields
// by task id, since a corrected specification is matched to a recording by
// id: `tasks[id="pick"].durationS`. A task present on one side only is one
// Difference whose Path is `tasks[id="pick"]` and whose value is the whole
// task object. A change in the order of the tasks the two share is the
// pseudo-field `tasks.order`, its values the arrays of shared ids.
type Difference struct {
	Path string
	Old  string
	New  string
}

// Diff compares two specifications field by field, for reporting what a
// re-export with a corrected specification changes. The order is
// deterministic: top-level fields in canonical member order, then
// tasks.order, then the tasks of old in old's order (changed fields in
// canonical member order, or the task removed), then the tasks only in new
// in new's order. A nil Spec has no fields. Equal specifications give nil.
func Diff(old, new *Spec) []Difference {
	var ds []Difference
	o, n := topFieldValues(old), topFieldValues(new)
	for _, m := range sortedMembers(o, n) {
		ds = appendDifference(ds, m, o[m], n[m])
	}

	var oldTasks, newTasks []Task
	if old != nil {
		oldTasks = old.Tasks
	}
	if new != nil {
		newTasks = new.Tasks
	}
	inNew := make(map[string]Task, len(newTasks))
	for _, t := range newTasks {
		inNew[t.ID] = t
	}
	inOld := make(map[string]bool, len(oldTasks))
	for _, t := range oldTasks {
		inOld[t.ID] = true
	}

	// Order of the shared tasks.
	var oldOrder, newOrder canonArray
	for _, t := range oldTasks {
		if _, ok := inNew[t.ID]; ok {
			oldOrder = append(oldOrder, canonString(t.ID))
		}
	}
	for _, t := range newTasks {
		if inOld[t.ID] {
			newOrder = append(newOrder, canonString(t.ID))
		}
	}
	ds = appendDifference(ds, "tasks.order", string(oldOrder.appendTo(nil)), string(newOrder.appendTo(nil)))

	for _, ot := range oldTasks {
		prefix := fmt.Sprintf("tasks[id=%s]", string(appendJSONString(nil, ot.ID)))
		nt, ok := inNew[ot.ID]
		if !ok {
			ds = append(ds, Difference{Path: prefix, Old: string(ot.object().appendTo(nil))})
			continue
		}
		o, n := memberValues(ot.object()), memberValues(nt.object())
		for _, m := range sortedMembers(o, n) {
			ds = appendDifference(ds, prefix+"."+m, o[m], n[m])
		}
	}
	for _, nt := range newTasks {
		if !inOld[nt.ID] {
			prefix := fmt.Sprintf("tasks[id=%s]", string(appendJSONString(nil, nt.ID)))
			ds = append(ds, Difference{Path: prefix, New: string(nt.object().appendTo(nil))})
		}
	}
	return ds
}

func appendDifference(ds []Difference, path, old, new string) []Difference {
	if old == new {
		return ds
	}
	return append(ds, Difference{Path: path, Old: old, New: new})
}

// topFieldValues renders the top-level fields other than tasks.
func topFieldValues(s *Spec) map[string]string {
	if s == nil {
		return nil
	}
	o := s.object()
	vals := memberValues(o)
	delete(vals, "tasks")
	return vals
}

// memberValues renders each member of o as canonical JSON.
func memberValues(o canonObject) map[string]string {
	vals := make(map[string]string, len(o))
	for _, m := range o {
		vals[m.key] = string(m.value.appendTo(nil))
	}
	return vals
}

// sortedMembers returns the keys of a and b together, in canonical order.
func sortedMembers(a, b map[string]string) []string {
	var o canonObject
	seen := map[string]bool{}
	for _, m := range []map[string]string{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				o = append(o, canonMember{key: k})
			}
		}
	}
	keys := make([]string, 0, len(o))
	sortCanon(o)
	for _, m := range o {
		keys = append(keys, m.key)
	}
	return keys
}

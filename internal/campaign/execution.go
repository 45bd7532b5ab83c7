package campaign

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// ExecutionProfile is a task's placement and resource reservation (Loom's
// execution_profile): what a scheduler must admit it with. The resources
// are requests, not limits the tool enforces on itself.
type ExecutionProfile struct {
	// Placement is "shared" (the default) or "exclusive": a whole node.
	Placement string    `json:"placement,omitempty"`
	Resources Resources `json:"resources"`
}

// Resources are the request of one task; 0 leaves a resource to the
// scheduler's default.
type Resources struct {
	CPUMillis int `json:"cpu_millis,omitempty"`
	MemoryMB  int `json:"memory_mb,omitempty"`
	DiskMB    int `json:"disk_mb,omitempty"`
	GPUCount  int `json:"gpu_count,omitempty"`
}

// Placements.
const (
	PlacementShared    = "shared"
	PlacementExclusive = "exclusive"
)

// Exclusive reports whether the task wants a node of its own.
func (p ExecutionProfile) Exclusive() bool { return p.Placement == PlacementExclusive }

// RetryPolicy says which failed attempts of a task are tried again, and how
// often (Loom's retry_policy). It belongs to the task's identity, not to a
// host: the same policy holds for a rerun on a laptop, an array task on
// SLURM and a pod of an Indexed Job.
type RetryPolicy struct {
	// MaxAttempts is the total number of attempts for one set of inputs,
	// the first included; 0 means no limit.
	MaxAttempts int `json:"max_attempts"`
	// RetryCategories are the failure categories that permit another
	// attempt (Category*).
	RetryCategories []string `json:"retry_categories"`
	// DifferentWorker asks for the retry on another host than the failed
	// attempt's; a host that finds itself the failed attempt's leaves the
	// task to another rather than retrying it there.
	DifferentWorker bool `json:"different_worker,omitempty"`
}

// Failure categories: what an attempt that did not succeed failed of,
// from its state and its exit status (package batch assigns them from the
// one exit-status table, internal/exitstatus).
// Only a category in the task's retry policy gets another attempt.
const (
	// CategoryInputInvalid: the input was read and no export of it can be
	// made as asked (exit 1): the same inputs fail the same way.
	CategoryInputInvalid = "input_invalid"
	// CategoryInputUnreadable: an input is missing, unreadable or not a
	// regular file, or the destination is refused (exit 2).
	CategoryInputUnreadable = "input_unreadable"
	// CategoryJournalCorrupt: the journal is corrupt (exit 3).
	CategoryJournalCorrupt = "journal_corrupt"
	// CategoryIOError: the export failed for another reason, I/O or the
	// encoder (exit 4): often transient (a full disk, a flaky mount).
	CategoryIOError = "io_error"
	// CategoryInterrupted: the attempt was cancelled by a signal.
	CategoryInterrupted = "interrupted"
	// CategoryLost: the attempt ended without finishing its record: its
	// process was killed or its node lost.
	CategoryLost = "lost"
	// CategoryBusy: another process held the task's shard.
	CategoryBusy = "busy"
)

// Categories lists every failure category, in documentation order.
var Categories = []string{CategoryInputInvalid, CategoryInputUnreadable, CategoryJournalCorrupt, CategoryIOError,
	CategoryInterrupted, CategoryLost, CategoryBusy}

// DefaultRetryPolicy holds for a task whose manifest gives no retry_policy:
// what did not run to its end runs again, without limit; a failure of the
// inputs stands until they change (or --retry-failed).
var DefaultRetryPolicy = RetryPolicy{RetryCategories: []string{CategoryInterrupted, CategoryLost, CategoryBusy}}

// Policy is the retry policy in force for t.
func (t *Task) Policy() RetryPolicy {
	if t.RetryPolicy != nil {
		return *t.RetryPolicy
	}
	return DefaultRetryPolicy
}

// Allows reports whether an attempt that failed of category may be
// followed by another, when attempts attempts were made with the same
// inputs.
func (p RetryPolicy) Allows(category string, attempts int) bool {
	if !slices.Contains(p.RetryCategories, category) {
		return false
	}
	return p.MaxAttempts == 0 || attempts < p.MaxAttempts
}

// Fields of the new Loom objects, as the decoder allows them.
var (
	executionFields = []string{"placement", "resources"}
	resourceFields  = []string{"cpu_millis", "memory_mb", "disk_mb", "gpu_count"}
	retryFields     = []string{"max_attempts", "retry_categories", "different_worker"}
	payloadFields   = []string{"extensions", "execution_profile"}
)

// executionLayer is one level's execution_profile, its fields as written:
// a later layer's field replaces the earlier one's, field by field.
type executionLayer struct {
	placement string
	resources map[string]int
}

// executionProfile decodes an execution_profile object at p.
func (d decoder) executionProfile(p string, raw json.RawMessage) (executionLayer, error) {
	l := executionLayer{resources: map[string]int{}}
	if raw == nil {
		return l, nil
	}
	o, err := d.object(p, raw, executionFields)
	if err != nil {
		return l, err
	}
	if v, ok := o["placement"]; ok {
		if l.placement, err = d.str(member(p, "placement"), v); err != nil {
			return l, err
		}
		if l.placement != PlacementShared && l.placement != PlacementExclusive {
			return l, d.errorf(member(p, "placement"), "%q: want %s or %s", l.placement, PlacementShared, PlacementExclusive)
		}
	}
	if v, ok := o["resources"]; ok {
		rp := member(p, "resources")
		r, err := d.object(rp, v, resourceFields)
		if err != nil {
			return l, err
		}
		for k, v := range r {
			n, err := d.integer(member(rp, k), v)
			if err != nil {
				return l, err
			}
			if n < 0 {
				return l, d.errorf(member(rp, k), "%d: want 0 or more", n)
			}
			// ceres-export runs on CPUs: a GPU request would hold a GPU
			// that nothing uses.
			if k == "gpu_count" && n > 0 {
				return l, d.errorf(member(rp, k), "%d: ceres-export uses no GPU; want 0", n)
			}
			l.resources[k] = n
		}
	}
	return l, nil
}

// mergeExecution merges execution_profile layers, lowest first, by field.
func mergeExecution(layers ...executionLayer) ExecutionProfile {
	var e ExecutionProfile
	for _, l := range layers {
		if l.placement != "" {
			e.Placement = l.placement
		}
		for k, n := range l.resources {
			switch k {
			case "cpu_millis":
				e.Resources.CPUMillis = n
			case "memory_mb":
				e.Resources.MemoryMB = n
			case "disk_mb":
				e.Resources.DiskMB = n
			case "gpu_count":
				e.Resources.GPUCount = n
			}
		}
	}
	if e.Placement == "" {
		e.Placement = PlacementShared
	}
	return e
}

// retryPolicy decodes a retry_policy object at p; nil when raw is.
func (d decoder) retryPolicy(p string, raw json.RawMessage) (*RetryPolicy, error) {
	if raw == nil {
		return nil, nil
	}
	o, err := d.object(p, raw, retryFields)
	if err != nil {
		return nil, err
	}
	rp := &RetryPolicy{RetryCategories: []string{}}
	mv, ok := o["max_attempts"]
	if !ok {
		return nil, d.errorf(member(p, "max_attempts"), "required field missing (the attempts allowed, the first included)")
	}
	if rp.MaxAttempts, err = d.integer(member(p, "max_attempts"), mv); err != nil {
		return nil, err
	}
	if rp.MaxAttempts < 1 {
		return nil, d.errorf(member(p, "max_attempts"), "%d: want at least 1 (the first attempt counts)", rp.MaxAttempts)
	}
	if cv, ok := o["retry_categories"]; ok {
		cp := member(p, "retry_categories")
		var raws []json.RawMessage
		if kind(cv) != "an array" || json.Unmarshal(cv, &raws) != nil {
			return nil, d.errorf(cp, "want an array of strings, got %s", kind(cv))
		}
		for i, r := range raws {
			c, err := d.str(index(cp, i), r)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(Categories, c) {
				return nil, d.errorf(index(cp, i), "%q is not a failure category (want one of %s)", c, strings.Join(Categories, ", "))
			}
			if !slices.Contains(rp.RetryCategories, c) {
				rp.RetryCategories = append(rp.RetryCategories, c)
			}
		}
	}
	if v, ok := o["different_worker"]; ok {
		if kind(v) != "a boolean" || json.Unmarshal(v, &rp.DifferentWorker) != nil {
			return nil, d.errorf(member(p, "different_worker"), "want a boolean, got %s", kind(v))
		}
	}
	return rp, nil
}

// payload decodes a payload object (Loom's form for generated manifests):
// its extensions and execution_profile layers.
func (d decoder) payload(p string, raw json.RawMessage) (layer, executionLayer, error) {
	if raw == nil {
		return layer{path: member(p, "extensions"), members: map[string]json.RawMessage{}}, executionLayer{resources: map[string]int{}}, nil
	}
	o, err := d.object(p, raw, payloadFields)
	if err != nil {
		return layer{}, executionLayer{}, err
	}
	ext, err := d.extensions(member(p, "extensions"), o["extensions"])
	if err != nil {
		return layer{}, executionLayer{}, err
	}
	ex, err := d.executionProfile(member(p, "execution_profile"), o["execution_profile"])
	if err != nil {
		return layer{}, executionLayer{}, err
	}
	return ext, ex, nil
}

// MaxResources is the largest request of each resource over tasks: one
// array task must fit any task of the campaign.
func MaxResources(tasks []Task) (Resources, bool) {
	var r Resources
	exclusive := false
	for _, t := range tasks {
		e := t.Execution.Resources
		r.CPUMillis = max(r.CPUMillis, e.CPUMillis)
		r.MemoryMB = max(r.MemoryMB, e.MemoryMB)
		r.DiskMB = max(r.DiskMB, e.DiskMB)
		r.GPUCount = max(r.GPUCount, e.GPUCount)
		exclusive = exclusive || t.Execution.Exclusive()
	}
	return r, exclusive
}

// Any reports whether any resource is requested.
func (r Resources) Any() bool { return r.CPUMillis > 0 || r.MemoryMB > 0 || r.DiskMB > 0 }

// Times is the request of n tasks running side by side.
func (r Resources) Times(n int) Resources {
	return Resources{CPUMillis: r.CPUMillis * n, MemoryMB: r.MemoryMB * n, DiskMB: r.DiskMB * n, GPUCount: r.GPUCount * n}
}

// CPUs is the CPU request in whole CPUs, rounded up (sbatch counts CPUs).
func (r Resources) CPUs() int { return (r.CPUMillis + 999) / 1000 }

// DescribeRetry says why a task's failure stands, for a skip's reason.
func DescribeRetry(p RetryPolicy, category string) string {
	if !slices.Contains(p.RetryCategories, category) {
		return fmt.Sprintf("its category %s is not retried (retry_categories: %s)", category, strings.Join(p.RetryCategories, ", "))
	}
	return fmt.Sprintf("max_attempts %d reached", p.MaxAttempts)
}

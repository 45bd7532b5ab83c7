// Package descriptor builds, pools and checks the task descriptors a dataset
// carries in ceres/tasks.json (docs/task-descriptors.md): one per timed or
// open task, in the shape of the run.task descriptor that learners use to
// compare runs on the same task and pool runs on similar ones.
//
// A descriptor's id is derived from what identifies a CERES task, never from
// a position in a file:
//
//	id  = "ceres-task-" + first 32 hex digits of SHA-256(key)
//	key = "ceres-task/1\n" + field(runTitle) + field(taskId) + field(type)
//	field(s) = decimal byte length of s + ":" + s
//
// runTitle, taskId and type are the specification's values after its own
// normalisation (trimmed); the length prefixes make the key unambiguous
// whatever bytes the strings hold. Labels, instructions, durations and counts are left
// out on purpose: they are what an operator corrects in a re-export, and the
// corrected task is still the same task. The organisation is left out too: it
// is the root of the group chain, so two labs running one protocol pool along
// the chain without the id depending on whether an export named its org.
package descriptor

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// SchemaVersion is the version of the descriptors' file
// (layout.DescriptorsPath).
const SchemaVersion = 1

// Seed values this package writes.
const (
	// TypeData is the run.task open-set type that fits a demonstration
	// recording: the run collects data.
	TypeData = "data"
	// SourceLive is source.kind for a recorded session: a user's task as
	// it happened.
	SourceLive = "live"
	// TierRecorded is labeled_by.tier: type, subtype and features are taken
	// from the recorded specification and journal, not guessed.
	TierRecorded = "recorded"
	// LabeledBy is labeled_by.name.
	LabeledBy = "ceres-export"
	// idPrefix starts every descriptor id.
	idPrefix = "ceres-task-"
)

// Group levels, root first.
const (
	LevelOrg  = "org"
	LevelRun  = "run"
	LevelTask = "task"
)

// File is ceres/tasks.json.
type File struct {
	SchemaVersion int          `json:"schema_version"`
	Tasks         []Descriptor `json:"tasks"`
}

// Descriptor is one task's descriptor.
type Descriptor struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Type      string    `json:"type"`    // TypeData
	Subtype   string    `json:"subtype"` // the CERES type: timed or open
	Org       string    `json:"org,omitempty"`
	Groups    []Group   `json:"groups"`
	Features  Features  `json:"features"`
	LabeledBy Labeler   `json:"labeled_by"`
	Source    Source    `json:"source"`
	Ext       Extension `json:"ext"`
}

// Group is one level of the task chain.
type Group struct {
	Level string `json:"level"`
	Key   string `json:"key"`
}

// Labeler says who assigned type, subtype and features, and how far to trust
// them.
type Labeler struct {
	Name string `json:"name"`
	Tier string `json:"tier"`
}

// Source says where the task came from.
type Source struct {
	Kind string `json:"kind"`
}

// Features are the task's features. The specification's values are kept
// while every pooled source agrees on them and omitted when they differ; the
// counts are sums over the sources.
type Features struct {
	DurationS   *float64 `json:"durationS,omitempty"`
	RepeatCount *int64   `json:"repeatCount,omitempty"`
	ResetTimeS  *float64 `json:"resetTimeS,omitempty"`
	Attempts    int      `json:"attempts"`
	Accepted    int      `json:"accepted"`
	Retried     int      `json:"retried"`
	Passed      int      `json:"passed"`
	Failed      int      `json:"failed"`
	Episodes    int      `json:"episodes"`
	Frames      int64    `json:"frames"`
	// MeanEpisodeLength is Frames / Episodes (frames; 0 without episodes).
	MeanEpisodeLength float64 `json:"meanEpisodeLength"`
	// Sessions is how many sessions the descriptor pools.
	Sessions int `json:"sessions"`
}

// Extension holds the CERES fields of a descriptor.
type Extension struct {
	Ceres CeresFields `json:"ceres"`
}

// CeresFields name the task in the specification it was recorded under.
// Instructions, Labels and RunTitle are absent from a metadata-only dataset.
type CeresFields struct {
	TaskID   string `json:"task_id"`
	RunTitle string `json:"run_title,omitempty"`
	// Labels and Instructions are every text the task was recorded under,
	// sorted (a merge of corrected sessions has several).
	Labels       []string `json:"labels,omitempty"`
	Instructions []string `json:"instructions,omitempty"`
	// SpecificationHashes are the applied specifications' hashes, sorted.
	SpecificationHashes []string `json:"specification_hashes"`
}

// Options configure Build.
type Options struct {
	// Org is the organisation, the chain's root; "" leaves it out.
	Org string
	// Levels are extra user levels after the task, root first.
	Levels []Group
}

// ID is the stable id of the task with this run title, specification task id
// and CERES type.
func ID(runTitle, taskID, typ string) string {
	key := []byte("ceres-task/1\n")
	for _, f := range []string{runTitle, taskID, typ} {
		key = strconv.AppendInt(key, int64(len(f)), 10)
		key = append(key, ':')
		key = append(key, f...)
	}
	sum := sha256.Sum256(key)
	return idPrefix + hex.EncodeToString(sum[:16])
}

// Attempt is what the features count of one attempt. The package takes
// these rather than the exporter's plan so that verify, which checks
// descriptors, shares none of the exporter's rules.
type Attempt struct {
	Task              string
	Accepted, Retried bool
	Outcome           string // "pass", "fail" or ""
}

// Episode is what the features count of one episode.
type Episode struct {
	Task   string
	Frames int
}

// Build returns the descriptors of spec's timed and open tasks, in the
// specification's order, with features counted from the session's attempts
// and episodes.
func Build(spec *taskspec.Spec, attempts []Attempt, episodes []Episode, opts Options) []Descriptor {
	var out []Descriptor
	for _, t := range spec.Tasks {
		if t.Type == taskspec.TypePause {
			continue
		}
		d := Descriptor{
			ID: ID(spec.RunTitle, t.ID, t.Type), Title: t.Label, Type: TypeData, Subtype: t.Type, Org: opts.Org,
			Features:  Features{DurationS: t.DurationS, RepeatCount: t.RepeatCount, ResetTimeS: t.ResetTimeS, Sessions: 1},
			LabeledBy: Labeler{Name: LabeledBy, Tier: TierRecorded},
			Source:    Source{Kind: SourceLive},
			Ext: Extension{Ceres: CeresFields{TaskID: t.ID, RunTitle: spec.RunTitle,
				Labels: []string{t.Label}, Instructions: []string{t.Instructions},
				SpecificationHashes: []string{spec.Hash()}}},
		}
		if opts.Org != "" {
			d.Groups = append(d.Groups, Group{LevelOrg, opts.Org})
		}
		d.Groups = append(d.Groups, Group{LevelRun, spec.RunTitle}, Group{LevelTask, t.ID})
		d.Groups = append(d.Groups, opts.Levels...)
		f := &d.Features
		for _, a := range attempts {
			if a.Task != t.ID {
				continue
			}
			f.Attempts++
			if a.Accepted {
				f.Accepted++
			}
			if a.Retried {
				f.Retried++
			}
			switch a.Outcome {
			case "pass":
				f.Passed++
			case "fail":
				f.Failed++
			}
		}
		for _, ep := range episodes {
			if ep.Task == t.ID {
				f.Episodes++
				f.Frames += int64(ep.Frames)
			}
		}
		f.mean()
		out = append(out, d)
	}
	return out
}

func (f *Features) mean() {
	f.MeanEpisodeLength = 0
	if f.Episodes > 0 {
		f.MeanEpisodeLength = float64(f.Frames) / float64(f.Episodes)
	}
}

// Pool joins the descriptors of several datasets, in order: one descriptor
// per id (the first source's title, groups and labeler), with features summed
// and every label, instruction and specification hash it was recorded under.
func Pool(sources ...[]Descriptor) []Descriptor {
	var out []Descriptor
	at := map[string]int{}
	for _, src := range sources {
		for _, d := range src {
			i, ok := at[d.ID]
			if !ok {
				at[d.ID] = len(out)
				d.Groups = slices.Clone(d.Groups)
				d.Ext.Ceres.Labels = slices.Clone(d.Ext.Ceres.Labels)
				d.Ext.Ceres.Instructions = slices.Clone(d.Ext.Ceres.Instructions)
				d.Ext.Ceres.SpecificationHashes = slices.Clone(d.Ext.Ceres.SpecificationHashes)
				out = append(out, d)
				continue
			}
			p := &out[i]
			pf, f := &p.Features, d.Features
			pf.DurationS = agreeFloat(pf.DurationS, f.DurationS)
			pf.ResetTimeS = agreeFloat(pf.ResetTimeS, f.ResetTimeS)
			if pf.RepeatCount != nil && (f.RepeatCount == nil || *pf.RepeatCount != *f.RepeatCount) {
				pf.RepeatCount = nil
			}
			pf.Attempts += f.Attempts
			pf.Accepted += f.Accepted
			pf.Retried += f.Retried
			pf.Passed += f.Passed
			pf.Failed += f.Failed
			pf.Episodes += f.Episodes
			pf.Frames += f.Frames
			pf.Sessions += f.Sessions
			pf.mean()
			c := &p.Ext.Ceres
			c.Labels = union(c.Labels, d.Ext.Ceres.Labels)
			c.Instructions = union(c.Instructions, d.Ext.Ceres.Instructions)
			c.SpecificationHashes = union(c.SpecificationHashes, d.Ext.Ceres.SpecificationHashes)
		}
	}
	for i := range out {
		c := &out[i].Ext.Ceres
		slices.Sort(c.Labels)
		slices.Sort(c.Instructions)
		slices.Sort(c.SpecificationHashes)
	}
	return out
}

func agreeFloat(a, b *float64) *float64 {
	if a == nil || b == nil || *a != *b {
		return nil
	}
	return a
}

func union(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}

// Redact makes the descriptors fit a metadata-only dataset: no run title,
// instructions or labels in the extension, the run group's key and the org
// replaced by salted hashes, and as title the task's public label
// (privacy.TaskLabel against the session id and every specification the
// dataset is made under, specs[0] the applied one whose tasks these are:
// the rule the episodes' task strings follow too). The id
// is salted too: unsalted, anyone who guesses the run title could confirm it;
// with one salt a lab's metadata-only datasets still pool by id.
func Redact(ds []Descriptor, salt, sessionID string, specs ...*taskspec.Spec) []Descriptor {
	out := make([]Descriptor, len(ds))
	for i, d := range ds {
		c := d.Ext.Ceres
		if t, ok := specs[0].Task(c.TaskID); ok {
			d.Title = privacy.TaskLabel(t, sessionID, specs...)
		} else {
			d.Title = c.TaskID
		}
		d.Groups = slices.Clone(d.Groups)
		for j := range d.Groups {
			if d.Groups[j].Level == LevelRun || d.Groups[j].Level == LevelOrg {
				d.Groups[j].Key = privacy.SaltedHash(salt, d.Groups[j].Key)
			}
		}
		if d.Org != "" {
			d.Org = privacy.SaltedHash(salt, d.Org)
		}
		d.ID = idPrefix + strings.TrimPrefix(privacy.SaltedHash(salt, d.ID), "h-")
		d.Ext.Ceres = CeresFields{TaskID: c.TaskID, SpecificationHashes: c.SpecificationHashes}
		out[i] = d
	}
	return out
}

// Seed length limits (characters).
const (
	maxType       = 100
	maxSubtype    = 500
	maxOrg        = 200
	maxGroupLevel = 100
	maxGroupKey   = 500
)

// Check returns the seed requirements the descriptors break, each naming the
// descriptor by index and id: a missing or duplicate id, an id that is not
// the one its task's run title, task id and type give (when the file names
// them), fields past the seed's length limits, a group chain that is not root
// first, an unknown source kind.
func Check(ds []Descriptor) []string {
	var out []string
	seen := map[string]int{}
	byTask := map[string]string{}
	for i, d := range ds {
		at := fmt.Sprintf("tasks[%d] (%s)", i, d.ID)
		bad := func(format string, a ...any) { out = append(out, at+": "+fmt.Sprintf(format, a...)) }
		if d.ID == "" {
			bad("no id")
		} else if j, dup := seen[d.ID]; dup {
			bad("id also names tasks[%d]: one descriptor per task", j)
		}
		seen[d.ID] = i
		c := d.Ext.Ceres
		if c.TaskID == "" {
			bad("ext.ceres.task_id is empty")
		}
		if c.RunTitle != "" {
			if want := ID(c.RunTitle, c.TaskID, d.Subtype); d.ID != want {
				bad("id is not the id of run %q task %q type %q (%s)", c.RunTitle, c.TaskID, d.Subtype, want)
			}
			key := c.RunTitle + "\x00" + c.TaskID + "\x00" + d.Subtype
			if other, ok := byTask[key]; ok && other != d.ID {
				bad("task %q has a second id (%s)", c.TaskID, other)
			}
			byTask[key] = d.ID
		}
		if d.Title == "" {
			bad("title is empty")
		}
		for _, l := range []struct {
			name, v string
			max     int
		}{{"type", d.Type, maxType}, {"subtype", d.Subtype, maxSubtype}, {"org", d.Org, maxOrg}} {
			if n := len([]rune(l.v)); n > l.max {
				bad("%s has %d characters, at most %d", l.name, n, l.max)
			}
		}
		if d.Type == "" {
			bad("type is empty")
		}
		rank := map[string]int{LevelOrg: 0, LevelRun: 1, LevelTask: 2}
		last := -1
		for j, g := range d.Groups {
			if g.Level == "" || g.Key == "" {
				bad("groups[%d] needs a level and a key", j)
			}
			if n := len([]rune(g.Level)); n > maxGroupLevel {
				bad("groups[%d].level has %d characters, at most %d", j, n, maxGroupLevel)
			}
			if n := len([]rune(g.Key)); n > maxGroupKey {
				bad("groups[%d].key has %d characters, at most %d", j, n, maxGroupKey)
			}
			r, known := rank[g.Level]
			if !known {
				r = 3 // user levels come after the task
			}
			if r < last {
				bad("groups[%d] (%s) comes after a level below it: groups are root first (org, run, task, user levels)", j, g.Level)
			}
			last = max(last, r)
		}
		if d.Org != "" && (len(d.Groups) == 0 || d.Groups[0] != (Group{LevelOrg, d.Org})) {
			bad("org %q is not the chain's root group", d.Org)
		}
		switch d.Source.Kind {
		case "live", "backlog", "benchmark", "history":
		default:
			bad("source.kind %q: want live, backlog, benchmark or history", d.Source.Kind)
		}
		if d.LabeledBy.Name == "" || d.LabeledBy.Tier == "" {
			bad("labeled_by needs a name and a tier")
		}
		if f := d.Features; f.Episodes > 0 && f.MeanEpisodeLength != float64(f.Frames)/float64(f.Episodes) {
			bad("features.meanEpisodeLength %v is not frames/episodes (%d/%d)", f.MeanEpisodeLength, f.Frames, f.Episodes)
		}
	}
	return out
}

package verify

import (
	"bytes"
	"encoding/json"
	"path/filepath"

	"github.com/ceres-robotics/ceres-export/internal/descriptor"
	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// descriptorsPath is the dataset's task descriptors file.
const descriptorsPath = layout.DescriptorsPath

// checkDescriptors checks ceres/tasks.json against the seed's requirements
// (descriptor.Check) and the episodes: every episode names a descriptor of
// its own task, and every descriptor's episode count is what the episodes
// table holds.
func (c *checker) checkDescriptors() error {
	b, err := input.ReadFile(filepath.Join(c.dir, filepath.FromSlash(descriptorsPath)))
	if err != nil {
		c.errorf("descriptors.missing", descriptorsPath, loc{}, "the task descriptors cannot be read: %v", err)
		return nil
	}
	var f descriptor.File
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		c.errorf("descriptors.invalid", descriptorsPath, loc{}, "not a task descriptors file: %v", err)
		return nil
	}
	if f.SchemaVersion != descriptor.SchemaVersion {
		c.errorf("descriptors.invalid", descriptorsPath, loc{}, "schema_version is %d, want %d", f.SchemaVersion, descriptor.SchemaVersion)
	}
	for _, msg := range descriptor.Check(f.Tasks) {
		c.errorf("descriptors.seed", descriptorsPath, loc{}, "%s", msg)
	}
	if c.episodes == nil {
		return nil
	}
	byID := map[string]*descriptor.Descriptor{}
	for i := range f.Tasks {
		byID[f.Tasks[i].ID] = &f.Tasks[i]
	}
	episodes := map[string]int{}
	for _, er := range c.episodes.Rows {
		if c.isForeignRow(er) {
			continue // no CERES task to describe
		}
		id, _ := er.Ceres[layout.ColTaskDescriptorID].(string)
		task, _ := er.Ceres[layout.ColTaskID].(string)
		d := byID[id]
		if d == nil {
			c.errorf("descriptors.episode", er.File, ep(er.EpisodeIndex), "ceres/task_descriptor_id %q names no descriptor in %s", id, descriptorsPath)
			continue
		}
		if d.Ext.Ceres.TaskID != task {
			c.errorf("descriptors.episode", er.File, ep(er.EpisodeIndex), "ceres/task_descriptor_id %s is the descriptor of task %q, but the episode's task is %q", id, d.Ext.Ceres.TaskID, task)
		}
		episodes[id]++
	}
	for _, d := range f.Tasks {
		if d.Features.Episodes != episodes[d.ID] {
			c.errorf("descriptors.features", descriptorsPath, loc{}, "%s: features.episodes is %d, but %d episodes name it", d.ID, d.Features.Episodes, episodes[d.ID])
		}
	}
	return nil
}

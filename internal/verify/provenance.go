package verify

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"path/filepath"
	"slices"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// checkProvenance checks the output marker's bytes and (in full mode)
// every file against the seal, then the stored task specifications and the
// ceres/* columns of every episode.
func (c *checker) checkProvenance() error {
	// The output marker is checked in quick mode too: it is small, and
	// the seal, which a merge checks instead, does not cover it.
	c.checkOutputMarker()
	if !c.opts.Quick {
		c.checkSeal()
	}
	c.checkCeresFiles()
	c.specs = map[string][]byte{}
	parsed := map[string]*taskspec.Spec{}
	// A metadata-only dataset stores redacted copies, named by the
	// original's hash, with the labels as its task strings.
	redacted := c.metadataOnly()
	fileRe, specs := specFileRe, specDir
	if redacted {
		fileRe, specs = redactedSpecFileRe, layout.RedactedSpecsDir+"/"
	}
	for _, rel := range c.files {
		m := fileRe.FindStringSubmatch(rel)
		if m == nil {
			continue
		}
		b, err := input.ReadFile(filepath.Join(c.dir, rel))
		if err != nil {
			c.errorf("spec.unreadable", rel, loc{}, "%v", err)
			continue
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != m[1] && !redacted {
			c.errorf("spec.file-name", rel, loc{}, "the file's SHA-256 is %s; a stored specification is named by the hash of its bytes", got)
		}
		s, err := taskspec.Parse(b)
		if err != nil {
			c.errorf("spec.invalid", rel, loc{}, "not a valid version 1 task specification: %v", err)
			continue
		}
		if !bytes.Equal(s.Canonical(), b) && !redacted {
			c.errorf("spec.non-canonical", rel, loc{}, "the bytes are not the canonical form (RFC 8785 of the normalised specification), so the name is not the specification's hash %s", s.Hash())
		}
		c.specs[m[1]] = b
		parsed[m[1]] = s
	}
	c.checkProfile()
	c.checkCard()
	if c.episodes == nil {
		return nil
	}
	sessions := map[string]bool{}
	for _, er := range c.episodes.Rows {
		if c.isForeignRow(er) {
			continue // checkMerged holds it to its foreign source
		}
		epi := er.EpisodeIndex
		str := func(name string) (string, bool) {
			s, ok := er.Ceres[name].(string)
			return s, ok
		}
		num := func(name string) (int64, bool) {
			n, ok := er.Ceres[name].(int64)
			return n, ok
		}
		if s, ok := str(layout.ColSessionID); ok {
			if s == "" {
				c.errorf("ceres.value", er.File, ep(epi), "ceres/session_id is empty")
			}
			sessions[s] = true
		}
		if v, ok := num(layout.ColSpecVersion); ok && v != 1 {
			c.errorf("ceres.value", er.File, ep(epi), "ceres/task_specification/version is %d, want 1", v)
		}
		for _, k := range []string{layout.ColCycle, layout.ColRepetition, layout.ColAttempt} {
			if v, ok := num(k); ok && v < 1 {
				c.errorf("ceres.value", er.File, ep(epi), "%s is %d; counters are 1-based", k, v)
			}
		}
		if o, ok := er.Ceres[layout.ColOutcome].(string); ok && o != "pass" && o != "fail" {
			c.errorf("ceres.value", er.File, ep(epi), "ceres/outcome is %q, want pass, fail or null", o)
		}
		start, ok1 := num(layout.ColStartNS)
		end, ok2 := num(layout.ColEndNS)
		if ok1 && ok2 && c.info != nil && c.info.FPS > 0 {
			if end <= start {
				c.errorf("ceres.window", er.File, ep(epi), "ceres/end_ns %d is not after ceres/start_ns %d", end, start)
			} else if n := frameCount(start, end, c.info.FPS); n != er.Length {
				c.errorf("ceres.window", er.File, ep(epi), "the window [%d, %d) holds %d frames at %d fps, but length is %d", start, end, n, c.info.FPS, er.Length)
			}
		}
		if h, ok := str(layout.ColRecordedSpecHash); ok && c.specs[h] == nil {
			c.errorf("spec.missing", er.File, ep(epi), "ceres/task_specification/recorded_hash %s names no file under %s", h, specs)
		}
		h, ok := str(layout.ColSpecHash)
		if !ok {
			continue
		}
		spec := parsed[h]
		if spec == nil {
			c.errorf("spec.missing", er.File, ep(epi), "ceres/task_specification/hash %s names no valid file under %s", h, specs)
			continue
		}
		id, _ := str(layout.ColTaskID)
		task, found := spec.Task(id)
		if !found {
			c.errorf("ceres.task-id", er.File, ep(epi), "ceres/task_id %q is not a task of the applied specification %s", id, h)
			continue
		}
		if l, ok := str(layout.ColTaskLabel); ok && l != task.Label {
			c.errorf("ceres.task-label", er.File, ep(epi), "ceres/task_label is %q, but the specification's label of %q is %q", l, id, task.Label)
		}
		if ty, ok := str(layout.ColTaskType); ok && ty != task.Type {
			c.errorf("ceres.task-type", er.File, ep(epi), "ceres/task_type is %q, but %q is %s in the specification", ty, id, task.Type)
		}
		if task.Type != taskspec.TypeTimed && task.Type != taskspec.TypeOpen {
			c.errorf("ceres.task-type", er.File, ep(epi), "task %q is a %s; only timed and open tasks become episodes", id, task.Type)
		}
		want, what := task.Instructions, "instructions"
		if redacted {
			want, what = task.Label, "label"
		}
		if len(er.Tasks) != 1 || er.Tasks[0] != want {
			c.errorf("ceres.task-string", er.File, ep(epi), "tasks is %q, want [%q], the %s of task %q", er.Tasks, want, what, id)
		}
		if c.data != nil && c.tasks != nil {
			if de := c.data.Episodes[epi]; de != nil {
				for _, ti := range slices.Sorted(maps.Keys(de.Tasks)) {
					if ti >= 0 && ti < int64(len(c.tasks)) && c.tasks[ti] != want {
						c.errorf("ceres.task-string", er.File, ep(epi), "the rows' task_index %d is %q, want %q, the %s of task %q", ti, c.tasks[ti], want, what, id)
					}
				}
			}
		}
	}
	if c.isMerged() {
		c.checkMerged()
	} else if len(sessions) > 1 {
		c.errorf("ceres.value", "", loc{}, "ceres/session_id has %d different values; a shard holds one session", len(sessions))
	}
	return nil
}

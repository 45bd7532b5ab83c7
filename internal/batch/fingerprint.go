package batch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/settings"
)

// fingerprintFormat names the fingerprint's recipe; a change of recipe
// changes every fingerprint, so no old shard is taken for current.
const fingerprintFormat = "ceres-batch-fingerprint/1"

// Inputs are the files a task's shard is made from.
type Inputs struct {
	// Files are every regular file of the session directory (journal
	// segments, camera files, anything else there), relative and
	// slash-separated, sorted.
	Files []FileHash `json:"files"`
	// TaskSpecSHA256 is the SHA-256 of the corrected task specification
	// file, when the task applies one.
	TaskSpecSHA256 string `json:"task_spec_sha256,omitempty"`
}

// FileHash is one input file.
type FileHash struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// hashInputs hashes the task's session files and corrected specification.
func hashInputs(t *Task) (Inputs, error) {
	var in Inputs
	err := filepath.WalkDir(t.SessionDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(t.SessionDir, p)
		if err != nil {
			return err
		}
		sum, size, err := input.SHA256(p)
		if err != nil {
			return err
		}
		in.Files = append(in.Files, FileHash{Path: filepath.ToSlash(rel), Size: size, SHA256: sum})
		return nil
	})
	if err != nil {
		return in, fmt.Errorf("session %s: %w", t.Session, err)
	}
	slices.SortFunc(in.Files, func(a, b FileHash) int {
		if a.Path < b.Path {
			return -1
		} else if a.Path > b.Path {
			return 1
		}
		return 0
	})
	if spec := t.options.TaskSpec; spec != nil {
		sum := sha256.Sum256(spec)
		in.TaskSpecSHA256 = hex.EncodeToString(sum[:])
	}
	return in, nil
}

// fingerprint is the SHA-256 of everything that shapes the task's shard:
// its identity and extensions (written into the shard), the resolved
// options (the task_spec path replaced by its content's hash, so a moved
// file is the same input), the input files and the tool version.
func fingerprint(t *Task, in Inputs, toolVersion string) (string, error) {
	options := t.Export
	options.TaskSpec = ""
	doc := struct {
		Format     string                     `json:"format"`
		Tool       string                     `json:"tool_version"`
		TaskID     string                     `json:"task_id"`
		Options    settings.Settings          `json:"options"`
		Extensions map[string]json.RawMessage `json:"extensions"`
		Inputs     Inputs                     `json:"inputs"`
	}{fingerprintFormat, toolVersion, t.ID, options, t.Extensions, in}
	b, err := json.Marshal(doc)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

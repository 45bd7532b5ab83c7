package batch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/settings"
)

// fingerprintFormat names the fingerprint's recipe; a change of recipe
// changes every fingerprint, so no old shard is taken for current.
const fingerprintFormat = "ceres-batch-fingerprint/1"

// hashInputs hashes the task's session files and corrected specification.
func hashInputs(t *campaign.Task, taskSpec []byte) (campaign.Inputs, error) {
	var in campaign.Inputs
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
		in.Files = append(in.Files, campaign.FileHash{Path: filepath.ToSlash(rel), Size: size, SHA256: sum})
		return nil
	})
	if err != nil {
		return in, fmt.Errorf("session %s: %w", t.Session, err)
	}
	slices.SortFunc(in.Files, func(a, b campaign.FileHash) int {
		if a.Path < b.Path {
			return -1
		} else if a.Path > b.Path {
			return 1
		}
		return 0
	})
	if spec := taskSpec; spec != nil {
		sum := sha256.Sum256(spec)
		in.TaskSpecSHA256 = hex.EncodeToString(sum[:])
	}
	return in, nil
}

// fingerprint is the SHA-256 of everything that shapes the task's shard:
// its identity and extensions (written into the shard), the resolved
// options (the task_spec path replaced by its content's hash, so a moved
// file is the same input), the input files and the tool version.
func fingerprint(t *campaign.Task, in campaign.Inputs, toolVersion string) (string, error) {
	options := t.Export
	options.TaskSpec = ""
	doc := struct {
		Format     string                     `json:"format"`
		Tool       string                     `json:"tool_version"`
		TaskID     string                     `json:"task_id"`
		Options    settings.Settings          `json:"options"`
		Extensions map[string]json.RawMessage `json:"extensions"`
		Inputs     campaign.Inputs            `json:"inputs"`
	}{fingerprintFormat, toolVersion, t.ID, options, t.Extensions, in}
	b, err := json.Marshal(doc)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

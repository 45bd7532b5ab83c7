package batch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/profile"
	"github.com/ceres-robotics/ceres-export/internal/settings"
)

// fingerprintFormat names the fingerprint's recipe; a change of recipe
// changes every fingerprint, so no old shard is taken for current.
const fingerprintFormat = "ceres-batch-fingerprint/1"

// hashInputs hashes the task's session files, corrected specification and
// feature profile. A session without a regular file is an error: a
// fingerprint of nothing would call any later content up to date.
func hashInputs(t *campaign.Task, taskSpec []byte, prof *profile.Profile) (campaign.Inputs, error) {
	var in campaign.Inputs
	err := walkFollowing(t.SessionDir, func(rel, p string) error {
		sum, size, err := input.SHA256(p)
		if err != nil {
			return err
		}
		in.Files = append(in.Files, campaign.FileHash{Path: rel, Size: size, SHA256: sum})
		return nil
	})
	if err == nil && len(in.Files) == 0 {
		err = errors.New("no file to read (an empty directory, or links to nothing)")
	}
	if err != nil {
		return in, fmt.Errorf("session %s: %w", t.Session, err)
	}
	slices.SortFunc(in.Files, func(a, b campaign.FileHash) int { return strings.Compare(a.Path, b.Path) })
	if spec := taskSpec; spec != nil {
		sum := sha256.Sum256(spec)
		in.TaskSpecSHA256 = hex.EncodeToString(sum[:])
	}
	if !prof.Empty() {
		sum := sha256.Sum256(prof.Canonical())
		in.ProfileSHA256 = hex.EncodeToString(sum[:])
	}
	return in, nil
}

// walkFollowing calls fn for every regular file under root, following
// symbolic links (root's too), with its slash-separated path relative to
// root. A link back to a directory above it is an error, not a loop;
// other kinds of file (pipes, devices) and links to nothing are left out,
// as no export reads them.
func walkFollowing(root string, fn func(rel, path string) error) error {
	var walk func(rel, dir string, above []os.FileInfo) error
	walk = func(rel, dir string, above []os.FileInfo) error {
		st, err := os.Stat(dir)
		if err != nil {
			return err
		}
		for _, a := range above {
			if os.SameFile(a, st) {
				return fmt.Errorf("%s: a link back to a directory above it", dir)
			}
		}
		above = append(above, st)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			r := path.Join(rel, e.Name())
			st, err := os.Stat(p)
			switch {
			case err != nil && errors.Is(err, fs.ErrNotExist):
				continue // a dangling link
			case err != nil:
				return err
			case st.IsDir():
				if err := walk(r, p, above); err != nil {
					return err
				}
			case st.Mode().IsRegular():
				if err := fn(r, p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk("", root, nil)
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

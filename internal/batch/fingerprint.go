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
	// slash-separated, sorted. Symbolic links are followed, as the export
	// follows them: a session, its journal/ or a camera file may be a link,
	// and the target's bytes are what the shard is made of.
	Files []FileHash `json:"files"`
	// TaskSpecSHA256 is the SHA-256 of the corrected task specification
	// file, when the task applies one.
	TaskSpecSHA256 string `json:"task_spec_sha256,omitempty"`
	// ProfileSHA256 is the SHA-256 of the canonical feature profile
	// (--profile and --map), when the task has one: the settings name its
	// file, whose content may change under the same name.
	ProfileSHA256 string `json:"profile_sha256,omitempty"`
}

// FileHash is one input file.
type FileHash struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// hashInputs hashes the task's session files and corrected specification.
// A session without a regular file is an error: a fingerprint of nothing
// would call any later content up to date.
func hashInputs(t *Task) (Inputs, error) {
	var in Inputs
	err := walkFollowing(t.SessionDir, func(rel, p string) error {
		sum, size, err := input.SHA256(p)
		if err != nil {
			return err
		}
		in.Files = append(in.Files, FileHash{Path: rel, Size: size, SHA256: sum})
		return nil
	})
	if err == nil && len(in.Files) == 0 {
		err = errors.New("no file to read (an empty directory, or links to nothing)")
	}
	if err != nil {
		return in, fmt.Errorf("session %s: %w", t.Session, err)
	}
	slices.SortFunc(in.Files, func(a, b FileHash) int { return strings.Compare(a.Path, b.Path) })
	if spec := t.options.TaskSpec; spec != nil {
		sum := sha256.Sum256(spec)
		in.TaskSpecSHA256 = hex.EncodeToString(sum[:])
	}
	if !t.options.Profile.Empty() {
		sum := sha256.Sum256(t.options.Profile.Canonical())
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

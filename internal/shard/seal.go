package shard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/output"
)

// SealVersion is the version of layout.SealPath this package writes. A
// seal without a version (1) was a merged dataset's single digest that
// named each mp4 by its path and size only: a byte changed inside a video
// kept it. Version 2 lists every file with the SHA-256 of its bytes.
const SealVersion = 2

// Seal is layout.SealPath: every file of a dataset as its writer
// committed it. An export and a merge write one; a full verify checks
// every file against it, and a merge trusts the dataset it appends to
// only while it holds (docs/merge.md, docs/reliability.md).
type Seal struct {
	Version int `json:"version"`
	// Files are the dataset's regular files in path order, except those
	// sealSkips names.
	Files []SealedFile `json:"files"`
}

// SealedFile is one file of a Seal.
type SealedFile struct {
	// Path is dataset-relative, slash-separated.
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// HashFunc returns the SHA-256 (hex) of the file at path, whose entry
// info is: a caller that hashes the same files again (a merge checking
// the seal of what it appends to, then sealing what links them) passes
// one that remembers. Nil hashes every file.
type HashFunc func(path string, info fs.FileInfo) (string, error)

// sealSkips are the files a seal does not cover: itself, and what the
// commit adds (the output marker, whose bytes a verify checks as they
// are) and removes.
var sealSkips = []string{layout.SealPath, layout.OutputMarkerPath, output.StagingMarker}

// ErrSealDoesNotHold marks a dataset whose files are not those its seal
// lists, or whose seal is missing, unreadable or of an older version.
var ErrSealDoesNotHold = errors.New("shard: the seal does not hold")

// SealOf hashes every file of the dataset in dir (sealSkips excepted),
// sealHashers files at a time: a merge that appends waits for the seal of
// the dataset it appends to (every byte of it hashed) with nothing else
// to do, and one file at a time left a core idle.
func SealOf(ctx context.Context, dir string, hash HashFunc) (*Seal, error) {
	if hash == nil {
		hash = func(p string, _ fs.FileInfo) (string, error) {
			sum, _, err := input.SHA256(p)
			return sum, err
		}
	}
	type entry struct {
		path string
		info fs.FileInfo
	}
	var entries []entry
	s := &Seal{Version: SealVersion, Files: []SealedFile{}}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if slices.Contains(sealSkips, rel) {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		entries = append(entries, entry{p, info})
		s.Files = append(s.Files, SealedFile{Path: rel, Size: info.Size()})
		return nil
	})
	if err == nil {
		errs := make([]error, len(entries))
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(sealHashers, len(entries)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := int(next.Add(1) - 1); i < len(entries); i = int(next.Add(1) - 1) {
					if errs[i] = ctx.Err(); errs[i] != nil {
						return
					}
					s.Files[i].SHA256, errs[i] = hash(entries[i].path, entries[i].info)
				}
			}()
		}
		wg.Wait()
		// The first file's error, in walk order, whatever finished first.
		for _, e := range errs {
			if e != nil {
				err = e
				break
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("seal of %s: %w", dir, err)
	}
	slices.SortFunc(s.Files, func(a, b SealedFile) int { return strings.Compare(a.Path, b.Path) })
	return s, nil
}

// sealHashers is how many files SealOf hashes at once.
const sealHashers = 2

// WriteSeal seals the dataset being built, once every other file of it is
// written.
func (b *Builder) WriteSeal(ctx context.Context, hash HashFunc) error {
	s, err := SealOf(ctx, b.dir, hash)
	if err != nil {
		return err
	}
	return b.WriteCeresJSON(layout.SealPath, s)
}

// CheckSeal returns nil when the files of the dataset in dir are those its
// seal lists, byte for byte, and no others; otherwise an error matching
// ErrSealDoesNotHold that names the first file that differs (or says the
// seal is missing, unreadable or of an older version).
func CheckSeal(ctx context.Context, dir string, hash HashFunc) error {
	p := filepath.Join(dir, filepath.FromSlash(layout.SealPath))
	b, err := input.ReadFile(p)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSealDoesNotHold, err)
	}
	var want Seal
	if err := json.Unmarshal(b, &want); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSealDoesNotHold, p, err)
	}
	if want.Version != SealVersion {
		return fmt.Errorf("%w: %s: version %d, want %d (written before seals covered every byte)", ErrSealDoesNotHold, p, want.Version, SealVersion)
	}
	got, err := SealOf(ctx, dir, hash)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("%w: %w", ErrSealDoesNotHold, err)
	}
	wantBy := map[string]SealedFile{}
	for _, f := range want.Files {
		wantBy[f.Path] = f
	}
	for _, f := range got.Files {
		w, ok := wantBy[f.Path]
		switch {
		case !ok:
			return fmt.Errorf("%w: %s is not in %s", ErrSealDoesNotHold, filepath.Join(dir, f.Path), layout.SealPath)
		case w != f:
			return fmt.Errorf("%w: %s: SHA-256 %s (%d bytes), %s records %s (%d bytes)", ErrSealDoesNotHold, filepath.Join(dir, f.Path), f.SHA256, f.Size, layout.SealPath, w.SHA256, w.Size)
		}
		delete(wantBy, f.Path)
	}
	for _, f := range want.Files {
		if _, missing := wantBy[f.Path]; missing {
			return fmt.Errorf("%w: %s, which %s lists, is missing", ErrSealDoesNotHold, filepath.Join(dir, f.Path), layout.SealPath)
		}
	}
	return nil
}

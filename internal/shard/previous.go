package shard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// PreviousShard is a read-only view of the shard currently at a
// destination, so that a re-export can reuse its files (videos) while the
// new shard is staged. It stays valid until Commit replaces the destination.
type PreviousShard struct {
	// Root is the destination directory.
	Root string
	// Files are the regular files under Root, relative, slash-separated, sorted.
	Files []string
}

// OpenPrevious lists the shard at dest. It returns nil and no error when
// dest does not exist.
func OpenPrevious(dest string) (*PreviousShard, error) {
	dest = filepath.Clean(dest)
	if _, err := os.Stat(dest); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	p := &PreviousShard{Root: dest}
	err := filepath.WalkDir(dest, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(dest, path)
			if err != nil {
				return err
			}
			p.Files = append(p.Files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("shard: list previous shard %s: %w", dest, err)
	}
	sort.Strings(p.Files)
	return p, nil
}

// Path returns the absolute path of a file listed in Files.
func (p *PreviousShard) Path(rel string) string {
	return filepath.Join(p.Root, filepath.FromSlash(rel))
}

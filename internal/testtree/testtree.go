// Package testtree reads directory trees for tests that compare outputs
// byte for byte: two exports of one session, a followed export against a
// batch one, a destination before and after a failed run.
package testtree

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/input"
)

// Files maps every file under dir, by its slash-separated path relative to
// dir, to its bytes; a tree that cannot be read ends tb.
func Files(tb testing.TB, dir string) map[string][]byte {
	tb.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := input.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// Differing names, sorted, the files that a and b do not hold alike: those
// in one of them only and those whose bytes differ.
func Differing(a, b map[string][]byte) []string {
	var out []string
	for name, data := range a {
		if other, ok := b[name]; !ok || !bytes.Equal(data, other) {
			out = append(out, name)
		}
	}
	for name := range b {
		if _, ok := a[name]; !ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

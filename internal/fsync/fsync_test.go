package fsync

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestSyncNamesWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		name string
		sync func(string) error
		path string
		want error
	}{
		{"dir", Dir, dir, nil},
		{"file", File, file, nil},
		{"missing dir", Dir, missing, fs.ErrNotExist},
		{"missing file", File, missing, fs.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.sync(tc.path)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("sync %s = %v, want %v", tc.path, err, tc.want)
			}
			if err != nil {
				var pe *fs.PathError
				if !errors.As(err, &pe) || pe.Path != tc.path {
					t.Errorf("error %v does not name %s", err, tc.path)
				}
			}
		})
	}
}

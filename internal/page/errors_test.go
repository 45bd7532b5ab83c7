package page

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The package's errors say "page:", its own name: a page is not a report
// (the reports are the JSON records export and merge leave), and a user who
// reads "report:" looks for the wrong file.
func TestErrorsSayPage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		run  func() error
	}{
		{"LoadShard of a missing shard", func() error {
			_, err := LoadShard(context.Background(), dir, filepath.Join(dir, "missing"))
			return err
		}},
		{"WriteFile under a regular file", func() error {
			file := filepath.Join(dir, "file")
			if err := os.WriteFile(file, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return WriteFile(filepath.Join(file, "index.html"), func(io.Writer) error { return nil })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil || !strings.HasPrefix(err.Error(), "page: ") {
				t.Errorf("error %v, want one starting with %q", err, "page: ")
			}
		})
	}
}

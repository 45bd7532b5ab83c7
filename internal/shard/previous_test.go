package shard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

func TestOpenPrevious(t *testing.T) {
	t.Parallel()
	dest := t.TempDir()
	video := layout.VideoPath("cam", 0, 0)
	for _, rel := range []string{layout.InfoPath, video, layout.VideoDir("cam") + "/notes.txt"} {
		p := filepath.Join(dest, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prev, err := OpenPrevious(dest)
	if err != nil || prev == nil {
		t.Fatalf("OpenPrevious: %v %v", prev, err)
	}
	if v := prev.VideoFiles("cam"); len(v) != 1 || v[0] != video {
		t.Errorf("VideoFiles = %v, want [%s]", v, video)
	}
}

func TestOpenPreviousMissing(t *testing.T) {
	t.Parallel()
	p, err := OpenPrevious(filepath.Join(t.TempDir(), "none"))
	if p != nil || err != nil {
		t.Errorf("OpenPrevious of a missing dir = %v, %v", p, err)
	}
}

// VideoFiles returns the mp4 files of one video feature, relative to Root
// (videos/<key>/chunk-CCC/file-FFF.mp4), sorted.
func (p *PreviousShard) VideoFiles(videoKey string) []string {
	prefix := layout.VideoDir(videoKey) + "/"
	var out []string
	for _, f := range p.Files {
		if strings.HasPrefix(f, prefix) && strings.HasSuffix(f, layout.VideoExt) {
			out = append(out, f)
		}
	}
	return out
}

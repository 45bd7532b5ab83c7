package testtree

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestFilesAndDiffering(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"a": "1", "sub/b": "2", "sub/deeper/c": ""} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := Files(t, dir)
	if len(got) != 3 || string(got["a"]) != "1" || string(got["sub/b"]) != "2" || got["sub/deeper/c"] == nil {
		t.Fatalf("Files: %q", got)
	}
	for _, c := range []struct {
		name string
		b    map[string][]byte
		want []string
	}{
		{"same", map[string][]byte{"a": []byte("1"), "sub/b": []byte("2"), "sub/deeper/c": {}}, nil},
		{"other bytes", map[string][]byte{"a": []byte("x"), "sub/b": []byte("2"), "sub/deeper/c": {}}, []string{"a"}},
		{"one missing, one more", map[string][]byte{"a": []byte("1"), "sub/b": []byte("2"), "z": nil}, []string{"sub/deeper/c", "z"}},
	} {
		if d := Differing(got, c.b); !slices.Equal(d, c.want) {
			t.Errorf("%s: Differing %q, want %q", c.name, d, c.want)
		}
	}
}

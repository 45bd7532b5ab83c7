//go:build cgo

package verify

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// A shard whose own records are corrupt is not sound: ceres/videos.json
// (which a re-export trusts) and ceres/export-report.json are checked, and
// a FIFO anywhere in the shard is reported, never opened.
func TestCeresRecordsChecked(t *testing.T) {
	for _, c := range []struct {
		name   string
		mutate func(t *testing.T, dir string)
		code   string
	}{
		{"videos.json truncated", func(t *testing.T, dir string) { truncateHalf(t, filepath.Join(dir, videosPath)) }, "ceres.videos"},
		{"videos.json not JSON", func(t *testing.T, dir string) { write(t, filepath.Join(dir, videosPath), "garbage") }, "ceres.videos"},
		{"videos.json hash wrong", func(t *testing.T, dir string) {
			mutateJSON(t, filepath.Join(dir, videosPath), func(d map[string]any) {
				cam := d["cameras"].([]any)[0].(map[string]any)
				cam["fileSha256"].([]any)[0] = "0000000000000000000000000000000000000000000000000000000000000000"
			})
		}, "ceres.videos"},
		{"videos.json hashes missing", func(t *testing.T, dir string) {
			mutateJSON(t, filepath.Join(dir, videosPath), func(d map[string]any) {
				delete(d["cameras"].([]any)[0].(map[string]any), "fileSha256")
			})
		}, "ceres.videos"},
		{"videos.json names an unknown camera", func(t *testing.T, dir string) {
			mutateJSON(t, filepath.Join(dir, videosPath), func(d map[string]any) {
				d["cameras"].([]any)[0].(map[string]any)["stream"] = "nosuch"
			})
		}, "ceres.videos"},
		{"a video rotted", func(t *testing.T, dir string) {
			mp4s, _ := filepath.Glob(filepath.Join(dir, "videos", "*", "chunk-*", "*.mp4"))
			b, err := os.ReadFile(mp4s[0])
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 1
			write(t, mp4s[0], string(b))
		}, "ceres.videos"},
		{"export-report.json truncated", func(t *testing.T, dir string) { truncateHalf(t, filepath.Join(dir, reportPath)) }, "ceres.report"},
		{"export-report.json an array", func(t *testing.T, dir string) { write(t, filepath.Join(dir, reportPath), "[]") }, "ceres.report"},
		{"info.json a FIFO", func(t *testing.T, dir string) { fifo(t, filepath.Join(dir, infoPath)) }, "layout.not-regular"},
		{"videos.json a FIFO", func(t *testing.T, dir string) { fifo(t, filepath.Join(dir, videosPath)) }, "layout.not-regular"},
		{"a data file a FIFO", func(t *testing.T, dir string) { fifo(t, filepath.Join(dir, "data/chunk-000/file-000.parquet")) }, "layout.not-regular"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyShard(t)
			if _, err := os.Stat(filepath.Join(dir, videosPath)); err != nil {
				t.Fatalf("the fixture shard has no %s: %v", videosPath, err)
			}
			c.mutate(t, dir)
			res, err := shardVideo(context.Background(), dir, Options{Quick: true})
			if err != nil {
				t.Fatalf("Shard: %v", err)
			}
			if res.Sound || !slices.Contains(res.Codes(), c.code) {
				t.Errorf("sound %v, codes %v; want %s", res.Sound, res.Codes(), c.code)
			}
		})
	}
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func truncateHalf(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
}

func fifo(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

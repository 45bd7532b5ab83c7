//go:build cgo

package verify

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/video"
	"github.com/ceres-robotics/ceres-export/profiles"
)

// profileShard exports the fixture session with the synth profile.
func profileShard(t *testing.T) (session, shard string) {
	t.Helper()
	fx := goodShard(t)
	shard = filepath.Join(t.TempDir(), "shard")
	if _, err := export.Export(context.Background(), fx.session, shard, export.Options{VideoFiles: video.Files{}, Profile: profiles.Synth(), Video: export.VideoOptions{Codec: "h264"}}); err != nil {
		t.Fatal(err)
	}
	return fx.session, shard
}

// TestProfileChecks: verify, without the session, catches an action that is
// not the next frame's state, a stored profile that is not the reported one
// or not canonical, and declared names info.json does not carry.
func TestProfileChecks(t *testing.T) {
	_, good := profileShard(t)
	res, err := shardVideo(context.Background(), good, Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Sound || len(res.Findings) != 0 {
		t.Fatalf("profile shard: sound=%v\n%s", res.Sound, findingLines(res))
	}
	tests := []struct {
		name   string
		mutate func(t *testing.T, shard string)
		code   string
	}{
		{"action of the last frame is not its own state", func(t *testing.T, shard string) {
			mutateParquet(t, filepath.Join(shard, "data/chunk-000/file-000.parquet"), func(m *mtable) {
				lastOfFirst := -1
				ep := m.cols[m.idx("episode_index")]
				for r := 0; r < m.rows(); r++ {
					if ep.ValueStr(r) == "0" {
						lastOfFirst = r
					}
				}
				m.mapFixedFloat32("action", func(r, e int, v float32) float32 {
					if r == lastOfFirst && e == 1 {
						return v + 0.5
					}
					return v
				})
			})
		}, "data.profile-next"},
		{"action of frame 0 is its own state", func(t *testing.T, shard string) {
			mutateParquet(t, filepath.Join(shard, "data/chunk-000/file-000.parquet"), func(m *mtable) {
				m.mapFixedFloat32("action", func(r, e int, v float32) float32 {
					if r == 0 && e == 0 {
						return v - 1
					}
					return v
				})
			})
		}, "data.profile-next"},
		{"stored profile is not the reported one", func(t *testing.T, shard string) {
			p := profiles.Synth()
			p.Drop = nil
			if err := os.WriteFile(filepath.Join(shard, "ceres/profile.json"), p.Canonical(), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "ceres.profile-hash"},
		{"stored profile is indented", func(t *testing.T, shard string) {
			path := filepath.Join(shard, "ceres/profile.json")
			b, _ := os.ReadFile(path)
			if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "ceres.profile-canonical"},
		{"stored profile is missing", func(t *testing.T, shard string) {
			if err := os.Remove(filepath.Join(shard, "ceres/profile.json")); err != nil {
				t.Fatal(err)
			}
		}, "ceres.profile-missing"},
		{"names differ from the profile's", func(t *testing.T, shard string) {
			mutateJSON(t, filepath.Join(shard, "meta/info.json"), func(doc map[string]any) {
				f := doc["features"].(map[string]any)["observation.state"].(map[string]any)
				f["names"].([]any)[0] = "x"
			})
		}, "info.profile-names"},
		{"card without the LeRobot tag", func(t *testing.T, shard string) {
			editFile(t, filepath.Join(shard, "README.md"), "- LeRobot\n", "")
		}, "card.front-matter"},
		{"card data_files miss the data", func(t *testing.T, shard string) {
			editFile(t, filepath.Join(shard, "README.md"), "data_files: data/*/*.parquet", "data_files: data/*.parquet")
		}, "card.configs"},
		{"card info.json is stale", func(t *testing.T, shard string) {
			editFile(t, filepath.Join(shard, "README.md"), `"total_frames": `, `"total_frames": 1`)
		}, "card.info"},
		{"card names another session", func(t *testing.T, shard string) {
			editFile(t, filepath.Join(shard, "README.md"), "CERES session synth-7 exported", "CERES session synth-8 exported")
		}, "card.provenance"},
		{"card lists a retried attempt as accepted", func(t *testing.T, shard string) {
			editFile(t, filepath.Join(shard, "README.md"), "| retried |  |", "| accepted | 99 |")
		}, "card.provenance"},
		{"card lists an accepted attempt as retried", func(t *testing.T, shard string) {
			editFile(t, filepath.Join(shard, "README.md"), "| accepted | 0 |", "| retried |  |")
		}, "card.provenance"},
		{"card names a specification the shard lacks", func(t *testing.T, shard string) {
			path := filepath.Join(shard, "README.md")
			b, _ := os.ReadFile(path)
			other := regexp.MustCompile("(?m)^(\\| applied and recorded \\| \\d+ \\| `)[0-9a-f]{64}`")
			if !other.Match(b) {
				t.Fatal("the card has no specification row")
			}
			b = other.ReplaceAll(b, []byte("${1}"+strings.Repeat("0", 64)+"`"))
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "card.provenance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			shard := filepath.Join(t.TempDir(), "shard")
			if err := os.CopyFS(shard, os.DirFS(good)); err != nil {
				t.Fatal(err)
			}
			tt.mutate(t, shard)
			res, err := shardVideo(context.Background(), shard, Options{Quick: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Sound || !slices.Contains(res.Codes(), tt.code) {
				t.Errorf("sound=%v codes %v, want %s\n%s", res.Sound, res.Codes(), tt.code, findingLines(res))
			}
		})
	}
}

// TestCardInfoComparedAsJSON: the card's copy of info.json is compared as
// a document, not as bytes: spacing of its own is no finding.
func TestCardInfoComparedAsJSON(t *testing.T) {
	t.Parallel()
	shard := copyShard(t)
	editFile(t, filepath.Join(shard, "README.md"), `"total_frames": `, `"total_frames":   `)
	res, err := shardVideo(context.Background(), shard, Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(res.Codes(), "card.info") {
		t.Errorf("codes %v: a re-spaced copy of info.json is the same document\n%s", res.Codes(), findingLines(res))
	}
}

// editFile replaces the first old in the file with new; old must occur.
func editFile(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s lacks %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

//go:build cgo

package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/journal"
)

const (
	dataFile     = "data/chunk-000/file-000.parquet"
	episodesFile = "meta/episodes/chunk-000/file-000.parquet"
	videoFile0   = "videos/observation.images.front/chunk-000/file-000.mp4"
)

// specFile returns the shard-relative path of the fixture's one stored
// specification.
func specFile(t testing.TB, shard string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(shard, "ceres/task-specifications/*.json"))
	if err != nil || len(m) != 1 {
		t.Fatalf("want one stored specification, have %v (%v)", m, err)
	}
	rel, _ := filepath.Rel(shard, m[0])
	return filepath.ToSlash(rel)
}

func TestGoodShardIsSound(t *testing.T) {
	f := goodShard(t)
	for _, opts := range []Options{
		{},
		{Quick: true},
		{Journal: f.session},
	} {
		res, err := shardVideo(context.Background(), f.shard, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Sound || len(res.Findings) != 0 {
			t.Errorf("%+v: sound=%v, findings:\n%s", opts, res.Sound, findingLines(res))
		}
		want := 7
		if opts.Quick {
			want--
		}
		if opts.Journal != "" {
			want++
		}
		if len(res.Checks) != want {
			t.Errorf("%+v: checks %v, want %d groups", opts, res.Checks, want)
		}
	}
}

func findingLines(res *Result) string {
	var b strings.Builder
	for _, f := range res.Findings {
		b.WriteString("  " + f.String() + "\n")
	}
	return b.String()
}

// mutation is one corruption of the good shard and the finding it must
// cause.
type mutation struct {
	name    string
	journal bool // compare with the session
	mutate  func(t *testing.T, shard string)
	code    string // an error finding of this code must be reported
	file    string // ... about this file, when not ""
}

func TestMutations(t *testing.T) {
	fx := goodShard(t)
	path := func(shard, rel string) string { return filepath.Join(shard, filepath.FromSlash(rel)) }
	mutations := []mutation{
		{name: "dropped data row", code: "data.index-gap", file: dataFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, dataFile), func(m *mtable) { m.dropRow(40) })
		}},
		{name: "shifted timestamp", code: "data.timestamp", file: dataFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, dataFile), func(m *mtable) {
				m.mapFloat32("timestamp", func(i int, v float32) float32 {
					if i == 12 {
						return v + 0.01
					}
					return v
				})
			})
		}},
		{name: "gap in index", code: "data.index-gap", file: dataFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, dataFile), func(m *mtable) {
				m.mapInt64("index", func(i int, v int64) int64 {
					if i >= 100 {
						return v + 1
					}
					return v
				})
			})
		}},
		{name: "wrong frame_index", code: "data.frame-index", file: dataFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, dataFile), func(m *mtable) {
				m.mapInt64("frame_index", func(i int, v int64) int64 {
					if i == 3 {
						return 7
					}
					return v
				})
			})
		}},
		{name: "rows of an episode renumbered", code: "data.episode-order", file: dataFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, dataFile), func(m *mtable) {
				m.mapInt64("episode_index", func(i int, v int64) int64 {
					if v == 1 {
						return 2
					}
					return v
				})
			})
		}},
		{name: "wrong task_index", code: "data.task-index", file: dataFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, dataFile), func(m *mtable) {
				m.mapInt64("task_index", func(i int, v int64) int64 {
					if i == 5 {
						return 9
					}
					return v
				})
			})
		}},
		{name: "extra Parquet column", code: "data.extra-column", file: dataFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, dataFile), func(m *mtable) {
				b := array.NewFloat32Builder(memory.DefaultAllocator)
				for i := 0; i < m.rows(); i++ {
					b.Append(1)
				}
				m.add(arrow.Field{Name: "debug.value", Nullable: true}, b.NewArray())
			})
		}},
		{name: "missing data column", code: "data.missing-column", file: dataFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, dataFile), func(m *mtable) { m.remove("observation.gripper.force") })
		}},
		{name: "list where a scalar belongs", code: "data.column-type", file: dataFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, dataFile), func(m *mtable) {
				old := m.cols[m.idx("observation.gripper.force")].(*array.Float32)
				b := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Float32)
				vb := b.ValueBuilder().(*array.Float32Builder)
				for i := 0; i < old.Len(); i++ {
					b.Append(true)
					vb.Append(old.Value(i))
				}
				m.set("observation.gripper.force", b.NewArray())
			})
		}},
		{name: "row groups not per episode", code: "data.row-groups", file: dataFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, dataFile), func(m *mtable) { m.groups = []int64{int64(m.rows())} })
		}},
		{name: "truncated data file", code: "data.unreadable", file: dataFile, mutate: func(t *testing.T, s string) {
			b, _ := os.ReadFile(path(s, dataFile))
			os.WriteFile(path(s, dataFile), b[:len(b)/2], 0o644)
		}},
		{name: "stray parquet file", code: "layout.stray-parquet", file: "data/chunk-000/extra.parquet", mutate: func(t *testing.T, s string) {
			b, _ := os.ReadFile(path(s, dataFile))
			os.WriteFile(path(s, "data/chunk-000/extra.parquet"), b, 0o644)
		}},
		{name: "missing stats.json", code: "layout.missing-file", file: statsPath, mutate: func(t *testing.T, s string) {
			os.Remove(path(s, statsPath))
		}},
		{name: "stale total_frames", code: "info.total-frames", file: infoPath, mutate: func(t *testing.T, s string) {
			mutateJSON(t, path(s, infoPath), func(d map[string]any) { d["total_frames"] = 246 })
		}},
		{name: "stale total_episodes", code: "info.total-episodes", file: infoPath, mutate: func(t *testing.T, s string) {
			mutateJSON(t, path(s, infoPath), func(d map[string]any) { d["total_episodes"] = 9 })
		}},
		{name: "wrong codebase_version", code: "info.codebase-version", file: infoPath, mutate: func(t *testing.T, s string) {
			mutateJSON(t, path(s, infoPath), func(d map[string]any) { d["codebase_version"] = "v2.1" })
		}},
		{name: "non-default data_path", code: "info.path-template", file: infoPath, mutate: func(t *testing.T, s string) {
			mutateJSON(t, path(s, infoPath), func(d map[string]any) {
				d["data_path"] = "data/chunk-{chunk_index:03d}/episode-{file_index:06d}.parquet"
			})
		}},
		{name: "feature without names", code: "info.features", file: infoPath, mutate: func(t *testing.T, s string) {
			mutateJSON(t, path(s, infoPath), func(d map[string]any) {
				delete(d["features"].(map[string]any)["observation.imu.accel"].(map[string]any), "names")
			})
		}},
		{name: "wrong codec in info", code: "video.info", file: infoPath, mutate: func(t *testing.T, s string) {
			mutateJSON(t, path(s, infoPath), func(d map[string]any) {
				d["features"].(map[string]any)["observation.images.front"].(map[string]any)["info"].(map[string]any)["video.codec"] = "av1"
			})
		}},
		{name: "NaN in stats", code: "stats.nonfinite", file: statsPath, mutate: func(t *testing.T, s string) {
			b, _ := os.ReadFile(path(s, statsPath))
			i := bytes.Index(b, []byte(`"mean"`))
			j := i + bytes.IndexAny(b[i:], "0123456789-")
			k := j + bytes.IndexAny(b[j:], ",\n]")
			os.WriteFile(path(s, statsPath), append(append(append([]byte{}, b[:j]...), "NaN"...), b[k:]...), 0o644)
		}},
		{name: "stats count wrong", code: "stats.count", file: statsPath, mutate: func(t *testing.T, s string) {
			mutateJSON(t, path(s, statsPath), func(d map[string]any) {
				d["observation.imu.gyro"].(map[string]any)["count"] = []any{7}
			})
		}},
		{name: "stats vector of the wrong length", code: "stats.shape", file: statsPath, mutate: func(t *testing.T, s string) {
			mutateJSON(t, path(s, statsPath), func(d map[string]any) {
				d["observation.imu.accel"].(map[string]any)["std"] = []any{1, 2}
			})
		}},
		{name: "stats max not the data's", code: "stats.mismatch", file: statsPath, mutate: func(t *testing.T, s string) {
			mutateJSON(t, path(s, statsPath), func(d map[string]any) {
				st := d["observation.gripper.force"].(map[string]any)
				for _, k := range []string{"max"} {
					v, _ := st[k].([]any)[0].(json.Number).Float64()
					st[k] = []any{v + 1}
				}
			})
		}},
		{name: "quantiles out of order", code: "stats.order", file: statsPath, mutate: func(t *testing.T, s string) {
			mutateJSON(t, path(s, statsPath), func(d map[string]any) {
				st := d["observation.imu.accel"].(map[string]any)
				st["q01"], st["q99"] = st["q99"], st["q01"]
			})
		}},
		{name: "tasks.parquet without pandas metadata", code: "tasks.pandas-metadata", file: tasksPath, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, tasksPath), func(m *mtable) { m.meta = arrow.Metadata{} })
		}},
		{name: "task string changed", code: "ceres.task-string", file: episodesFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, tasksPath), func(m *mtable) {
				m.mapString("task", func(i int, v string) string { return v + "!" })
			})
		}},
		{name: "wrong dataset_to_index", code: "episodes.to-index", file: episodesFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, episodesFile), func(m *mtable) {
				m.mapInt64("dataset_to_index", func(i int, v int64) int64 {
					if i == 2 {
						return v + 1
					}
					return v
				})
			})
		}},
		{name: "wrong length", code: "episodes.length", file: episodesFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, episodesFile), func(m *mtable) {
				m.mapInt64("length", func(i int, v int64) int64 {
					if i == 1 {
						return v - 1
					}
					return v
				})
			})
		}},
		{name: "wrong from_timestamp", code: "episodes.from-timestamp", file: episodesFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, episodesFile), func(m *mtable) {
				m.mapFloat64("videos/observation.images.front/from_timestamp", func(i int, v float64) float64 {
					if i == 3 {
						return v + 1.0/30
					}
					return v
				})
			})
		}},
		{name: "episodes out of order", code: "episodes.order", file: episodesFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, episodesFile), func(m *mtable) {
				order := []int{1, 0}
				for i := 2; i < m.rows(); i++ {
					order = append(order, i)
				}
				m.take(order)
			})
		}},
		{name: "missing ceres column", code: "ceres.missing-column", file: episodesFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, episodesFile), func(m *mtable) { m.remove("ceres/task_id") })
		}},
		{name: "ceres column of the wrong type", code: "ceres.column-type", file: episodesFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, episodesFile), func(m *mtable) {
				old := m.cols[m.idx("ceres/cycle")].(*array.Int64)
				b := array.NewInt32Builder(memory.DefaultAllocator)
				for i := 0; i < old.Len(); i++ {
					b.Append(int32(old.Value(i)))
				}
				m.set("ceres/cycle", b.NewArray())
			})
		}},
		{name: "wrong spec hash", code: "spec.missing", file: episodesFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, episodesFile), func(m *mtable) {
				m.mapString("ceres/task_specification/hash", func(i int, v string) string {
					if i == 0 {
						return strings.Repeat("ab", 32)
					}
					return v
				})
			})
		}},
		{name: "renamed spec file", code: "spec.file-name", mutate: func(t *testing.T, s string) {
			rel := specFile(t, s)
			os.Rename(path(s, rel), path(s, "ceres/task-specifications/"+strings.Repeat("0", 64)+".json"))
		}},
		{name: "non-canonical spec", code: "spec.non-canonical", mutate: func(t *testing.T, s string) {
			rel := specFile(t, s)
			b, _ := os.ReadFile(path(s, rel))
			var pretty bytes.Buffer
			json.Indent(&pretty, b, "", "  ")
			sum := sha256.Sum256(pretty.Bytes())
			os.Remove(path(s, rel))
			os.WriteFile(path(s, "ceres/task-specifications/"+hex.EncodeToString(sum[:])+".json"), pretty.Bytes(), 0o644)
			// The episodes name the new file, so only its form is wrong.
			mutateParquet(t, path(s, episodesFile), func(m *mtable) {
				for _, c := range []string{"ceres/task_specification/hash", "ceres/task_specification/recorded_hash"} {
					m.mapString(c, func(int, string) string { return hex.EncodeToString(sum[:]) })
				}
			})
		}},
		{name: "task label not the specification's", code: "ceres.task-label", file: episodesFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, episodesFile), func(m *mtable) {
				m.mapString("ceres/task_label", func(i int, v string) string { return v + " (edited)" })
			})
		}},
		{name: "descriptors missing", code: "descriptors.missing", file: descriptorsPath, mutate: func(t *testing.T, s string) {
			os.Remove(path(s, descriptorsPath))
		}},
		{name: "descriptor id not derived from its task", code: "descriptors.seed", file: descriptorsPath, mutate: func(t *testing.T, s string) {
			editJSONFile(t, path(s, descriptorsPath), func(v map[string]any) {
				v["tasks"].([]any)[0].(map[string]any)["id"] = "ceres-task-0000"
			})
		}},
		{name: "descriptor groups not root first", code: "descriptors.seed", file: descriptorsPath, mutate: func(t *testing.T, s string) {
			editJSONFile(t, path(s, descriptorsPath), func(v map[string]any) {
				d := v["tasks"].([]any)[0].(map[string]any)
				g := d["groups"].([]any)
				g[0], g[len(g)-1] = g[len(g)-1], g[0]
			})
		}},
		{name: "descriptor episode count off", code: "descriptors.features", file: descriptorsPath, mutate: func(t *testing.T, s string) {
			editJSONFile(t, path(s, descriptorsPath), func(v map[string]any) {
				f := v["tasks"].([]any)[0].(map[string]any)["features"].(map[string]any)
				f["episodes"] = f["episodes"].(float64) + 1
				f["frames"] = f["frames"].(float64) + 1
				f["meanEpisodeLength"] = f["frames"].(float64) / f["episodes"].(float64)
			})
		}},
		{name: "episode names another task's descriptor", code: "descriptors.episode", file: episodesFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, episodesFile), func(m *mtable) {
				m.mapString("ceres/task_descriptor_id", func(i int, v string) string {
					if i == 0 {
						return "ceres-task-ffffffffffffffffffffffffffffffff"
					}
					return v
				})
			})
		}},
		{name: "missing video frame", code: "video.frame-count", file: videoFile0, mutate: func(t *testing.T, s string) {
			reencodeCamera(t, s, 30, func(w []episodeWindow) []videoTimes {
				return frameTimes(w, 30, func(e int, ts []int64) []int64 {
					if e == len(w)-1 {
						return ts[:len(ts)-1]
					}
					return ts
				})
			})
		}},
		{name: "video at the wrong fps", code: "video.fps", file: videoFile0, mutate: func(t *testing.T, s string) {
			reencodeCamera(t, s, 15, func(w []episodeWindow) []videoTimes { return frameTimes(w, 30, nil) })
		}},
		{name: "video with an audio stream", code: "video.audio", file: videoFile0, mutate: func(t *testing.T, s string) {
			addAudioStream(t, path(s, videoFile0))
		}},
		{name: "video file missing", code: "episodes.video-location", file: episodesFile, mutate: func(t *testing.T, s string) {
			os.Remove(path(s, videoFile0))
		}},
		{name: "video frames from the wrong time", journal: true, code: "journal.video-frame", file: videoFile0, mutate: func(t *testing.T, s string) {
			reencodeCamera(t, s, 30, func(w []episodeWindow) []videoTimes {
				return frameTimes(w, 30, func(e int, ts []int64) []int64 {
					if e == 2 {
						for k := range ts {
							ts[k] += 200_000_000
						}
					}
					return ts
				})
			})
		}},
		{name: "held sensor value changed", journal: true, code: "journal.sensor-value", file: dataFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, dataFile), func(m *mtable) {
				m.mapFixedFloat32("observation.imu.accel", func(r, e int, v float32) float32 {
					if r == 50 && e == 1 {
						return v + 0.5
					}
					return v
				})
			})
		}},
		{name: "row from a retried attempt injected back", journal: true, code: "journal.attempt", file: episodesFile, mutate: func(t *testing.T, s string) {
			retried := retriedAttempt(t, fx.session)
			mutateParquet(t, path(s, episodesFile), func(m *mtable) {
				m.mapInt64("ceres/attempt", func(i int, v int64) int64 {
					if i == 0 {
						return int64(retried.Attempt)
					}
					return v
				})
				m.mapInt64("ceres/cycle", func(i int, v int64) int64 {
					if i == 0 {
						return int64(retried.Cycle)
					}
					return v
				})
				m.mapInt64("ceres/repetition", func(i int, v int64) int64 {
					if i == 0 {
						return int64(retried.Repetition)
					}
					return v
				})
				m.mapString("ceres/task_id", func(i int, v string) string {
					if i == 0 {
						return retried.Task
					}
					return v
				})
			})
		}},
		{name: "window shifted", journal: true, code: "journal.window", file: episodesFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, episodesFile), func(m *mtable) {
				for _, c := range []string{"ceres/start_ns", "ceres/end_ns"} {
					m.mapInt64(c, func(i int, v int64) int64 {
						if i == 4 {
							return v + 5_000_000
						}
						return v
					})
				}
			})
		}},
		{name: "outcome changed", journal: true, code: "journal.outcome", file: episodesFile, mutate: func(t *testing.T, s string) {
			mutateParquet(t, path(s, episodesFile), func(m *mtable) {
				b := array.NewStringBuilder(memory.DefaultAllocator)
				for i := 0; i < m.rows(); i++ {
					b.Append("fail")
				}
				m.set("ceres/outcome", b.NewArray())
			})
		}},
	}
	seen := map[string]bool{}
	for _, mu := range mutations {
		if seen[mu.name] {
			t.Fatalf("mutation %q listed twice", mu.name)
		}
		seen[mu.name] = true
		t.Run(strings.ReplaceAll(mu.name, " ", "_"), func(t *testing.T) {
			shard := copyShard(t)
			mu.mutate(t, shard)
			opts := Options{}
			if mu.journal {
				opts.Journal = fx.session
			}
			res, err := shardVideo(context.Background(), shard, opts)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, f := range res.Findings {
				if f.Code == mu.code && f.Severity != SeverityNote && (mu.file == "" || f.File == mu.file) {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s finding (file %q); findings:\n%s", mu.code, mu.file, findingLines(res))
			}
			if mu.code != "data.row-groups" && res.Sound {
				t.Errorf("shard still sound")
			}
			if testing.Verbose() {
				t.Logf("findings:\n%s", findingLines(res))
			}
		})
	}
	codes := map[string]bool{}
	for _, mu := range mutations {
		codes[mu.code] = true
	}
	if len(codes) < 25 {
		t.Errorf("the suite asserts %d distinct codes, want at least 25", len(codes))
	}
}

// retriedAttempt returns an attempt of the session that was retried.
func retriedAttempt(t testing.TB, session string) plan.Key {
	t.Helper()
	j, err := journal.Open(context.Background(), session, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(j.Events, plan.SpecTypes(j.Spec), 30)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range p.Attempts {
		if a.Fate == plan.Retried {
			return a.Key
		}
	}
	t.Fatal("the fixture session has no retried attempt")
	return plan.Key{}
}

// editJSONFile rewrites a JSON file through edit.
func editJSONFile(t *testing.T, file string, edit func(map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	edit(v)
	if b, err = json.Marshal(v); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

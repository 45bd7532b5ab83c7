//go:build cgo

package merge

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/benchround"
	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/synth"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// benchShards exports n shards whose video dominates their bytes, as a real
// camera's does: two cameras at 640×480, H.264 at CRF 4 (about 35 KB per
// frame per camera, 8 Mbit/s at 30 fps), from synthetic sessions.
func benchShards(b *testing.B, dir string, n int) ([]string, int64) {
	b.Helper()
	ctx := context.Background()
	var dirs []string
	var bytes int64
	for i := 0; i < n; i++ {
		session := filepath.Join(dir, fmt.Sprintf("session-%d", i))
		out := filepath.Join(dir, fmt.Sprintf("shard-%d", i))
		if _, err := synth.Write(ctx, session, synth.Options{Seed: uint64(100 + i), TimeScale: 0.25, Cameras: 2, Width: 320, Height: 240}); err != nil {
			b.Fatal(err)
		}
		if _, err := export.Export(ctx, session, out, export.Options{VideoFiles: video.Files{}, Video: export.VideoOptions{Codec: "h264", CRF: 4, Width: 640, Height: 480}}); err != nil {
			b.Fatal(err)
		}
		dirs = append(dirs, out)
		bytes += treeBytes(b, out)
	}
	return dirs, bytes
}

func treeBytes(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// lerobotPython finds the conformance venv's python: CONFORMANCE_VENV, or
// the repository's .cache/conformance-venv; "" when there is none.
func lerobotPython() string {
	venv := os.Getenv("CONFORMANCE_VENV")
	if venv == "" {
		venv = filepath.Join("..", "..", ".cache", "conformance-venv")
	}
	p := filepath.Join(venv, "bin", "python")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// aggregateScript times LeRobot's aggregate_datasets alone (not Python's
// start or torch's import) and prints the seconds.
const aggregateScript = `
import sys, time
from pathlib import Path
from lerobot.datasets.aggregate import aggregate_datasets
out, roots = Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]
t = time.perf_counter()
aggregate_datasets([f"local/{r.name}" for r in roots], "local/aggr", roots=roots, aggr_root=out)
print(time.perf_counter() - t)
`

// BenchmarkMerge merges shards and compares, in alternating rounds of the
// same run, with copying the same bytes (cp -r, and cp -r followed by sync,
// as durable as the merge's fsynced output) and, where the conformance
// venv exists, with LeRobot's aggregate_datasets on the same shards.
// Goals: ratio_merge_vs_cp ≤ 2; ratio_aggregate_vs_merge ≥ 5.
func BenchmarkMerge(b *testing.B) {
	dir := b.TempDir()
	shards, bytes := benchShards(b, dir, 3)
	py := lerobotPython()
	var merge, cp, cpSync, aggr benchround.Times
	const rounds = 3
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			dst := filepath.Join(dir, "cp")
			os.RemoveAll(dst)
			os.MkdirAll(dst, 0o755)
			t := time.Now()
			if out, err := exec.Command("cp", append(append([]string{"-r"}, shards...), dst)...).CombinedOutput(); err != nil {
				b.Fatalf("cp: %v %s", err, out)
			}
			cp.Add(time.Since(t))
			os.RemoveAll(dst)
			os.MkdirAll(dst, 0o755)
			t = time.Now()
			args := append(append([]string{"-c", `cp -r "$@" && sync -f "$0"`, dst}, shards...), dst)
			if out, err := exec.Command("sh", args...).CombinedOutput(); err != nil {
				b.Fatalf("cp+sync: %v %s", err, out)
			}
			cpSync.Add(time.Since(t))
			os.RemoveAll(dst)

			out := filepath.Join(dir, "merged")
			os.RemoveAll(out)
			t = time.Now()
			if _, err := mergeVideo(context.Background(), Options{Sources: shards, Output: out}); err != nil {
				b.Fatal(err)
			}
			merge.Add(time.Since(t))

			if py != "" && r < 2 { // LeRobot's merge is slow; two rounds
				aggrOut := filepath.Join(dir, "aggr")
				os.RemoveAll(aggrOut)
				cmd := exec.Command(py, append([]string{"-c", aggregateScript, aggrOut}, shards...)...)
				cmd.Env = append(os.Environ(), "HF_HUB_OFFLINE=1", "HF_DATASETS_OFFLINE=1", "HF_HOME="+filepath.Join(dir, "hf"), "PYTHONWARNINGS=ignore")
				res, err := cmd.Output()
				if err != nil {
					b.Fatalf("aggregate_datasets: %v", err)
				}
				lines := strings.Fields(string(res))
				secs, err := strconv.ParseFloat(lines[len(lines)-1], 64)
				if err != nil {
					b.Fatalf("aggregate_datasets printed %q", res)
				}
				aggr.Add(time.Duration(secs * float64(time.Second)))
				os.RemoveAll(aggrOut)
			}
		}
	}
	b.StopTimer()
	mean := func(t benchround.Times) float64 { return t.Total.Seconds() / float64(t.N) }
	b.ReportMetric(float64(bytes)/(1<<20), "MiB_shards")
	b.ReportMetric(merge.Min.Seconds(), "s_merge_fastest")
	b.ReportMetric(cp.Min.Seconds(), "s_cp_fastest")
	b.ReportMetric(cpSync.Min.Seconds(), "s_cp_sync_fastest")
	b.ReportMetric(merge.Min.Seconds()/cp.Min.Seconds(), "ratio_merge_vs_cp")
	b.ReportMetric(mean(merge)/mean(cp), "ratio_merge_vs_cp_mean")
	b.ReportMetric(merge.Min.Seconds()/cpSync.Min.Seconds(), "ratio_merge_vs_cp_sync")
	if aggr.N > 0 {
		b.ReportMetric(aggr.Min.Seconds(), "s_aggregate_fastest")
		b.ReportMetric(aggr.Min.Seconds()/merge.Min.Seconds(), "ratio_aggregate_vs_merge")
	} else {
		b.Log("no conformance venv (CONFORMANCE_VENV or .cache/conformance-venv): LeRobot's aggregate_datasets not measured")
	}
}

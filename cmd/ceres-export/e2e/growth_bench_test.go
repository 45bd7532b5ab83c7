package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/pqcolumns"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// timedPeak runs the binary under GNU time and returns its wall time and
// peak resident set (the merge's FFmpeg memory is C memory, which Go's
// own statistics do not see).
func timedPeak(b *testing.B, args ...string) (time.Duration, int64) {
	b.Helper()
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", ceresBinary}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("ceres-export %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	took := time.Since(start)
	lines := strings.Fields(stderr.String())
	kib, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	if err != nil {
		b.Fatalf("/usr/bin/time printed %q", stderr.String())
	}
	return took, kib << 10
}

// growthShards exports n small shards (one camera, a few seconds, as a
// short take of a lab's week is), two at a time, under dir.
func growthShards(b *testing.B, dir string, n int) []string {
	b.Helper()
	shards := make([]string, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			session := filepath.Join(dir, fmt.Sprintf("session-%03d", i))
			shards[i] = filepath.Join(dir, fmt.Sprintf("shard-%03d", i))
			if _, stderr, err := runCmd("synth", "-o", session, "--seed", strconv.Itoa(1000+i), "--time-scale", "0.05", "--cycles", "1",
				"--cameras", "1", "--width", "64", "--height", "48"); err != nil {
				errs[i] = fmt.Errorf("synth: %v\n%s", err, stderr)
				return
			}
			if _, stderr, err := runCmd("export", session, "-o", shards[i], "--vcodec", "h264", "--no-report", "--quiet"); err != nil {
				errs[i] = fmt.Errorf("export: %v\n%s", err, stderr)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return shards
}

// renamedShards makes n shards under dir from copies of shards, each a
// shard of its own: its export report names another session (what tells
// shards apart, checkDuplicates) and its seal is written anew, so that a
// merge quick-verifies it as it does an exported one. Exporting a
// thousand sessions would take most of the benchmark's time.
func renamedShards(b *testing.B, dir string, shards []string, n int) []string {
	b.Helper()
	ctx := context.Background()
	out := make([]string, n)
	for i := range n {
		src := shards[i%len(shards)]
		dst := filepath.Join(dir, fmt.Sprintf("copy-%04d", i))
		if out, err := exec.Command("cp", "-r", src, dst).CombinedOutput(); err != nil {
			b.Fatalf("cp: %v %s", err, out)
		}
		report := filepath.Join(dst, filepath.FromSlash(layout.ExportReportPath))
		data, err := os.ReadFile(report)
		if err != nil {
			b.Fatal(err)
		}
		var r map[string]any
		if err := json.Unmarshal(data, &r); err != nil {
			b.Fatalf("%s: %v", report, err)
		}
		r["sessionId"] = fmt.Sprintf("%v-copy-%04d", r["sessionId"], i)
		if data, err = json.MarshalIndent(r, "", "  "); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(report, data, 0o644); err != nil {
			b.Fatal(err)
		}
		seal, err := shard.SealOf(ctx, dst, nil)
		if err != nil {
			b.Fatal(err)
		}
		if data, err = json.MarshalIndent(seal, "", "  "); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, filepath.FromSlash(layout.SealPath)), data, 0o644); err != nil {
			b.Fatal(err)
		}
		out[i] = dst
	}
	return out
}

// BenchmarkMergeGrowth: a merge's cost as the shard count grows to a lab's
// week. Goals (docs/benchmarks.md, "Merge at scale"), each a ratio in one
// run: per-shard time of merging 256 shards at most 1.25 × that of 8; the
// 256-shard merge at most 5 × cp -r + sync of the same bytes; its peak
// memory at most 1.5 × the 8-shard merge's; appending one shard to the
// 256-shard dataset (merge --into) at most 2 × merging two shards; and
// at 1,000 shards (a lab's year of short takes; 743 of them copies of the
// others under other sessions' names, renamedShards), peak memory at most
// 1.5 × the 8-shard merge's and an append at most 2 × merging two.
// ratio_floor_256_vs_cp_sync is no goal but the bound under the second
// one: the least any merge of the 256 shards does (readFloor, a copy of
// the merged dataset, the process's start) against the same copy.
func BenchmarkMergeGrowth(b *testing.B) {
	const small, large, year = 8, 256, 1000
	dir := b.TempDir()
	shards := growthShards(b, dir, large+1)
	extra, shards := shards[large], shards[:large]
	yearShards := append(append([]string(nil), shards...), renamedShards(b, dir, shards, year-large)...)
	var bytes int64
	for _, s := range shards {
		bytes += dirBytes(b, s)
	}
	// Each timed run writes a directory of its own and nothing is removed
	// before the end. This kernel's ext4 runs without a journal, and there
	// a new inode is not given the number of one deleted in the last 60 s
	// (300 s more while its inode table block is dirty): allocation scans
	// past each (recently_deleted). Removing the previous round's output
	// made the next cp -r spend up to 58 % of 0.7–4.3 s of system time in
	// that scan (perf), against 0.15–0.2 s with nothing deleted, and the
	// copy makes 21 times the merge's inodes (5,889 against 280). sync -f
	// before each run leaves nothing of the last one to write back.
	settle := func(dir string) {
		if out, err := exec.Command("sync", "-f", dir).CombinedOutput(); err != nil {
			b.Fatalf("sync: %v %s", err, out)
		}
	}
	round := 0
	fresh := func(name string) string {
		round++
		return filepath.Join(dir, fmt.Sprintf("%s-%d", name, round))
	}
	var lastMerge string
	merge := func(name string, srcs []string, extraArgs ...string) (time.Duration, int64) {
		lastMerge = fresh(name)
		settle(dir)
		args := append(append([]string{"merge"}, srcs...), "-o", lastMerge)
		return timedPeak(b, append(args, extraArgs...)...)
	}
	best := func(rounds int, f func() (time.Duration, int64)) (time.Duration, int64) {
		var t time.Duration
		var peak int64
		for r := range rounds {
			d, p := f()
			if r == 0 || d < t {
				t = d
			}
			peak = max(peak, p)
		}
		return t, peak
	}
	b.ResetTimer()
	for range b.N {
		t2, _ := best(3, func() (time.Duration, int64) { return merge("m2", shards[:2]) })
		t8, peak8 := best(3, func() (time.Duration, int64) { return merge("m8", shards[:small]) })
		t256, peak256 := best(2, func() (time.Duration, int64) { return merge("m256", shards) })
		largeDir := lastMerge
		// The copy's system time tells a file system in its steady state
		// (0.15–0.2 s here) from one still scanning past inodes deleted
		// in the last minutes, by this benchmark's neighbours too.
		var cpFastest, cpSystem time.Duration
		cp, _ := best(3, func() (time.Duration, int64) {
			dst := fresh("cp")
			if err := os.MkdirAll(dst, 0o755); err != nil {
				b.Fatal(err)
			}
			settle(dir)
			start := time.Now()
			args := append(append([]string{"-c", `cp -r "$@" && sync -f "$0"`, dst}, shards...), dst)
			cmd := exec.Command("sh", args...)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("cp+sync: %v %s", err, out)
			}
			took := time.Since(start)
			if cpFastest == 0 || took < cpFastest {
				// sh waited for cp and sync: its rusage holds theirs.
				cpFastest, cpSystem = took, cmd.ProcessState.SystemTime()
			}
			return took, 0
		})
		into, _ := best(2, func() (time.Duration, int64) {
			out := fresh("into")
			// Durable first, as the merge that made it left it: the
			// append fsyncs the files it links, which would otherwise
			// write the copy's pages out inside the timed run.
			if out, err := exec.Command("sh", "-c", `cp -a "$0" "$1" && sync -f "$1"`, largeDir, out).CombinedOutput(); err != nil {
				b.Fatalf("cp: %v %s", err, out)
			}
			return timedPeak(b, "merge", extra, "--into", out)
		})
		_, peak1000 := merge("m1000", yearShards)
		yearDir := lastMerge
		into1000, _ := best(2, func() (time.Duration, int64) {
			out := fresh("into1000")
			if out, err := exec.Command("sh", "-c", `cp -a "$0" "$1" && sync -f "$1"`, yearDir, out).CombinedOutput(); err != nil {
				b.Fatalf("cp: %v %s", err, out)
			}
			return timedPeak(b, "merge", extra, "--into", out)
		})
		// The floor: what any merge of these shards must do at least,
		// timed on its own (docs/benchmarks.md, "Merge at scale").
		floorRead := bestOf(3, func() time.Duration { return readFloor(b, shards) })
		floorWrite := bestOf(3, func() time.Duration {
			dst := fresh("cp-merged")
			settle(dir)
			start := time.Now()
			if out, err := exec.Command("sh", "-c", `cp -r "$0" "$1" && sync -f "$1"`, largeDir, dst).CombinedOutput(); err != nil {
				b.Fatalf("cp: %v %s", err, out)
			}
			return time.Since(start)
		})
		floorStart := bestOf(3, func() time.Duration {
			start := time.Now()
			if out, err := exec.Command(ceresBinary, "--version").CombinedOutput(); err != nil {
				b.Fatalf("ceres-export --version: %v %s", err, out)
			}
			return time.Since(start)
		})
		floor := floorRead + floorWrite + floorStart
		b.ReportMetric(floorRead.Seconds(), "s_floor_read_256")
		b.ReportMetric(floorWrite.Seconds(), "s_floor_write_256")
		b.ReportMetric(floorStart.Seconds(), "s_floor_start")
		b.ReportMetric(floor.Seconds()/cp.Seconds(), "ratio_floor_256_vs_cp_sync")
		b.ReportMetric(float64(bytes)/(1<<20), "MiB_256_shards")
		b.ReportMetric(t2.Seconds(), "s_merge_2")
		b.ReportMetric(t8.Seconds(), "s_merge_8")
		b.ReportMetric(t256.Seconds(), "s_merge_256")
		b.ReportMetric(cp.Seconds(), "s_cp_sync_256")
		b.ReportMetric(cpSystem.Seconds(), "s_cp_sync_256_system")
		b.ReportMetric(into.Seconds(), "s_merge_into_256")
		b.ReportMetric(float64(peak8)/(1<<20), "MiB_peak_merge_8")
		b.ReportMetric(float64(peak256)/(1<<20), "MiB_peak_merge_256")
		b.ReportMetric((t256.Seconds()/large)/(t8.Seconds()/small), "ratio_merge_per_shard_256_vs_8")
		b.ReportMetric(t256.Seconds()/cp.Seconds(), "ratio_merge_256_vs_cp_sync")
		b.ReportMetric(float64(peak256)/float64(peak8), "ratio_peak_mem_merge_256_vs_8")
		b.ReportMetric(into.Seconds()/t2.Seconds(), "ratio_merge_into_256_vs_merge_2")
		b.ReportMetric(float64(peak1000)/(1<<20), "MiB_peak_merge_1000")
		b.ReportMetric(into1000.Seconds(), "s_merge_into_1000")
		b.ReportMetric(float64(peak1000)/float64(peak8), "ratio_peak_mem_merge_1000_vs_8")
		b.ReportMetric(into1000.Seconds()/t2.Seconds(), "ratio_merge_into_1000_vs_merge_2")
	}
}

func bestOf(rounds int, f func() time.Duration) time.Duration {
	var best time.Duration
	for r := range rounds {
		if d := f(); r == 0 || d < best {
			best = d
		}
	}
	return best
}

// readFloor times the least reading a merge of shards does, two shards at
// a time as the merge opens them, with no check and nothing written: each
// Parquet file's footer and every column but the statistics decoded by
// the reader the merge uses, each JSON file parsed, every file hashed once
// (a merge hashes each source's files for its provenance and its videos
// against ceres/videos.json), and each video opened by FFmpeg once (the
// join opens it to copy its packets).
func readFloor(b *testing.B, shards []string) time.Duration {
	b.Helper()
	files := make([][]string, len(shards))
	for i, s := range shards {
		err := filepath.WalkDir(s, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				files[i] = append(files[i], p)
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	pages := &pqcolumns.PagePool{}
	notStats := func(name string) bool { return !strings.HasPrefix(name, layout.StatsColumnPrefix) }
	errs := make([]error, len(shards))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range shards {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			pq := pqcolumns.NewFiles(pages)
			defer pq.Close()
			for _, p := range files[i] {
				var err error
				switch filepath.Ext(p) {
				case ".parquet":
					var f *pqcolumns.File
					if f, err = pq.Open(p); err == nil {
						var cols map[string]arrow.Array
						cols, _, err = f.Columns(ctx, notStats)
						for _, c := range cols {
							c.Release()
						}
					}
				case ".json":
					var body []byte
					if body, err = input.ReadFile(p); err == nil {
						var v any
						err = json.Unmarshal(body, &v)
					}
				case layout.VideoExt:
					_, err = video.ReadStreamSignature(p)
				}
				if err == nil {
					_, _, err = input.SHA256(p)
				}
				if err != nil {
					errs[i] = fmt.Errorf("%s: %w", p, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return took
}

func dirBytes(b *testing.B, dir string) int64 {
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

// scaleCampaign writes a JSON Lines manifest of n tasks and, under out, a
// finished attempt record for each, as a campaign of n tasks leaves them.
func scaleCampaign(b *testing.B, dir string, n int) (manifest, out string) {
	b.Helper()
	manifest = filepath.Join(dir, fmt.Sprintf("m%d.jsonl", n))
	out = filepath.Join(dir, fmt.Sprintf("out%d", n))
	var m bytes.Buffer
	for i := range n {
		fmt.Fprintf(&m, `{"campaign_id": "scale", "case_id": "c%06d", "setting_id": "s", "run_id": "1", "session": "sessions/s%06d"}`+"\n", i, i)
	}
	if err := os.WriteFile(manifest, m.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := campaign.PrepareOut(out, nil); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		id := fmt.Sprintf("scale__c%06d__s__run-1", i)
		r := campaign.Record{RecordVersion: campaign.RecordVersion, TaskID: id, CampaignID: "scale", CaseID: fmt.Sprintf("c%06d", i),
			SettingID: "s", RunID: "1", AttemptNo: 1, State: campaign.StateSucceeded, Fingerprint: "sha256:" + strings.Repeat("0", 64),
			Inputs:  campaign.Inputs{Files: []campaign.FileHash{{Path: "journal/000001.cjl", Size: 1 << 20, SHA256: strings.Repeat("0", 64)}}},
			Session: fmt.Sprintf("sessions/s%06d", i), Shard: id, Episodes: 4, Frames: 1200, Host: "node1", PID: 1}
		r.SetExitStatus(0)
		r.Start(time.Unix(1764662400, 0))
		r.End(time.Unix(1764662460, 0))
		d := filepath.Join(out, layout.AttemptsDir, id)
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		data, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			b.Fatal(err)
		}
		// Plain writes: the benchmark measures reading the records.
		if err := os.WriteFile(filepath.Join(d, layout.AttemptRecordName(1)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return manifest, out
}

// BenchmarkCampaignScale: batch plan and batch status of a JSON Lines
// campaign of 1,000 and of 100,000 tasks. Goals (docs/benchmarks.md,
// "Campaigns at scale"): the time and the memory each task adds, at most
// 1.25 × at 100,000 what they are at 1,000. What a task adds is the run's
// figure less that of a one-task campaign in the same run (the process's
// start, FFmpeg's libraries).
func BenchmarkCampaignScale(b *testing.B) {
	dir := b.TempDir()
	sizes := []int{1, 1000, 100000}
	manifests, outs := map[int]string{}, map[int]string{}
	for _, n := range sizes {
		manifests[n], outs[n] = scaleCampaign(b, dir, n)
	}
	type figure struct {
		t    time.Duration
		peak int64
	}
	measure := func(rounds int, args ...string) figure {
		var f figure
		for r := range rounds {
			t, p := timedPeak(b, args...)
			if r == 0 || t < f.t {
				f.t = t
			}
			if r == 0 || p < f.peak {
				f.peak = p
			}
		}
		return f
	}
	b.ResetTimer()
	for range b.N {
		for _, cmd := range []string{"plan", "status"} {
			figs := map[int]figure{}
			for _, n := range sizes {
				// A small campaign's figure is mostly the process's start,
				// whose spread is as large as a thousand tasks' work: more
				// rounds, and the fastest.
				rounds := 9
				if n == 100000 {
					rounds = 2
				}
				args := []string{"batch", "plan", manifests[n]}
				if cmd == "status" {
					args = []string{"batch", "status", outs[n], manifests[n]}
				}
				figs[n] = measure(rounds, args...)
			}
			perTask := func(n int) (float64, float64) {
				return (figs[n].t - figs[1].t).Seconds() / float64(n-1), float64(figs[n].peak-figs[1].peak) / float64(n-1)
			}
			t1k, m1k := perTask(1000)
			t100k, m100k := perTask(100000)
			b.ReportMetric(t1k*1e6, "us_per_task_"+cmd+"_1k")
			b.ReportMetric(t100k*1e6, "us_per_task_"+cmd+"_100k")
			b.ReportMetric(m1k, "B_per_task_"+cmd+"_1k")
			b.ReportMetric(m100k, "B_per_task_"+cmd+"_100k")
			b.ReportMetric(t100k/t1k, "ratio_"+cmd+"_time_per_task_100k_vs_1k")
			b.ReportMetric(m100k/max(m1k, 1), "ratio_"+cmd+"_mem_per_task_100k_vs_1k")
		}
	}
}

package batch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/report"
)

// The campaign page's rows come from the attempt records: a task retried
// after a failure, one that failed, one never run; the session page is
// linked where the shard has one.
func TestCampaignPageFromRecords(t *testing.T) {
	out, tasks := fakeCampaign(t, 3)
	var firstCalls atomic.Int32 // calls for tasks[0]
	opts := Options{Out: out, ToolVersion: "test", RetryFailed: true,
		export: func(_ context.Context, _, shardDir string, _ export.Options) (*export.Report, error) {
			first := strings.HasSuffix(shardDir, tasks[0].ID) && firstCalls.Add(1) == 1
			if strings.HasSuffix(shardDir, tasks[1].ID) || first {
				return nil, errors.New("encoder: out of memory")
			}
			if err := os.MkdirAll(filepath.Join(shardDir, "ceres"), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(shardDir, filepath.FromSlash(layout.SessionPagePath)), []byte("<!DOCTYPE html>"), 0o644); err != nil {
				return nil, err
			}
			return &export.Report{Episodes: 7, Frames: 700}, nil
		}}
	for range 2 {
		if _, err := Run(context.Background(), tasks[:2], opts); err != nil {
			t.Fatal(err)
		}
	}
	merged := []MergedDataset{{SettingID: "s", Dir: filepath.Join(out, "..", "merged", "s"), Shards: 1, Episodes: 7, Frames: 700}}
	c, err := Campaign("c", tasks, out, merged)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tasks) != 3 {
		t.Fatalf("%d rows, want 3", len(c.Tasks))
	}
	ok, bad, never := c.Tasks[0], c.Tasks[1], c.Tasks[2]
	if ok.State != StateSucceeded || len(ok.Attempts) != 2 || ok.Attempts[0].State != StateFailed || ok.Episodes != 7 || ok.Frames != 700 ||
		ok.Page != tasks[0].ID+"/ceres/report.html" || ok.Attempts[1].End.Before(ok.Attempts[1].Start) || ok.Attempts[1].Start.IsZero() {
		t.Errorf("retried task: %+v", ok)
	}
	if bad.State != StateFailed || len(bad.Attempts) != 2 || bad.Error != "encoder: out of memory" || bad.Attempts[1].ExitStatus != 4 || bad.Page != "" {
		t.Errorf("failed task: %+v", bad)
	}
	if never.State != report.StatePending || len(never.Attempts) != 0 {
		t.Errorf("task never run: %+v", never)
	}
	if len(c.Merges) != 1 || c.Merges[0].Path != "../merged/s" || c.Merges[0].Episodes != 7 {
		t.Errorf("merges %+v", c.Merges)
	}
	if err := WritePage("c", tasks, out, merged); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, layout.CampaignPagePath))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<a href="` + tasks[0].ID + `/ceres/report.html">`, "encoder: out of memory", `<svg id="cases"`, "../merged/s"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("OUT/index.html lacks %q", want)
		}
	}
}

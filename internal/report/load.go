package report

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/journal"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// PageName is where export writes the session page inside a shard.
const PageName = "ceres/report.html"

// exportReportName is the export report inside a shard.
const exportReportName = "ceres/export-report.json"

// LoadShard reads what a session page of an exported shard shows: the
// session's journal (with salvage when the export used it), the shard's
// export report and applied specification, and the plan they imply.
func LoadShard(ctx context.Context, sessionDir, shardDir string) (*export.Result, error) {
	path := filepath.Join(shardDir, filepath.FromSlash(exportReportName))
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("report: %s is not a ceres-export shard: %w", shardDir, err)
	}
	var rep export.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("report: %s: %w", path, err)
	}
	j, err := journal.Open(ctx, sessionDir, journal.Options{Salvage: rep.Exporter.Options.Salvage})
	if err != nil {
		return nil, err
	}
	if j.Spec == nil {
		return nil, fmt.Errorf("report: session %s has no task specification", sessionDir)
	}
	if j.Info.SessionID != rep.SessionID {
		return nil, fmt.Errorf("report: shard %s was exported from session %q, but %s is session %q", shardDir, rep.SessionID, sessionDir, j.Info.SessionID)
	}
	specPath := filepath.Join(shardDir, "ceres", "task-specifications", rep.Spec.Hash+".json")
	sb, err := os.ReadFile(specPath)
	if err != nil {
		return nil, fmt.Errorf("report: applied task specification: %w", err)
	}
	applied, err := taskspec.Parse(sb)
	if err != nil {
		return nil, fmt.Errorf("report: %s: %w", specPath, err)
	}
	p, err := plan.Build(j.Events, plan.SpecTypes(applied), rep.FPS)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return &export.Result{Dir: shardDir, Journal: j, Plan: p, Spec: applied, Report: &rep}, nil
}

// LoadSession reads a session that has not been exported: its journal and
// the plan an export with default options would apply. The page then shows
// what an export would take and leave, without video or shard figures.
func LoadSession(ctx context.Context, sessionDir string, salvage bool) (*export.Result, error) {
	j, err := journal.Open(ctx, sessionDir, journal.Options{Salvage: salvage})
	if err != nil {
		return nil, err
	}
	if j.Spec == nil {
		return nil, fmt.Errorf("report: session %s has no task specification", sessionDir)
	}
	fps, _, err := plan.DefaultFPS(j.Info.Streams)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	p, err := plan.Build(j.Events, plan.SpecTypes(j.Spec), fps)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return &export.Result{Journal: j, Plan: p, Spec: j.Spec}, nil
}

// ShardPage is export's Page hook: it writes the session page into the
// staged shard as ceres/report.html.
func ShardPage(ctx context.Context, r *export.Result) error {
	return WriteFile(filepath.Join(r.Dir, filepath.FromSlash(PageName)), func(w io.Writer) error {
		return WriteSession(ctx, w, r)
	})
}

// WriteFile writes a page atomically: into a temporary file beside path,
// synced, then renamed over it, so a failed or killed run leaves no
// half-written page and an existing one stays until the new one is whole.
func WriteFile(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

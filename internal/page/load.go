package page

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/output"
	"github.com/ceres-robotics/ceres-export/internal/plan"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/journal"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// LoadShard reads what a session page of an exported shard shows: the
// session's journal (with salvage when the export used it), the shard's
// export report and applied specification, and the plan they imply.
func LoadShard(ctx context.Context, sessionDir, shardDir string) (*export.Result, error) {
	ds, err := shard.Open(shardDir)
	if err == nil && ds.Merged {
		err = fmt.Errorf("%s is a merged dataset; a session page shows one shard", shardDir)
	}
	if err != nil {
		return nil, fmt.Errorf("page: %w", err)
	}
	var rep export.Report
	if err := ds.ReadJSON(layout.ExportReportPath, &rep); err != nil {
		return nil, fmt.Errorf("page: %w", err)
	}
	j, err := journal.Open(ctx, sessionDir, journal.Options{Salvage: rep.Exporter.Options.Salvage})
	if err != nil {
		return nil, err
	}
	if j.Spec == nil {
		return nil, fmt.Errorf("page: session %s has no task specification", sessionDir)
	}
	if j.Info.SessionID != rep.SessionID {
		return nil, fmt.Errorf("page: shard %s was exported from session %q, but %s is session %q", shardDir, rep.SessionID, sessionDir, j.Info.SessionID)
	}
	specs, err := ds.Specs()
	if err != nil {
		return nil, fmt.Errorf("page: %w", err)
	}
	sb, ok := specs[rep.Spec.Hash]
	if !ok {
		return nil, fmt.Errorf("page: applied task specification %s is not stored under %s", rep.Spec.Hash, ds.Path(ds.SpecsDir()))
	}
	applied, err := taskspec.Parse(sb)
	if err != nil {
		return nil, fmt.Errorf("page: %s: %w", ds.Path(layout.SpecPath(rep.Spec.Hash)), err)
	}
	p, err := plan.Build(j.Events, plan.SpecTypes(applied), rep.FPS)
	if err != nil {
		return nil, fmt.Errorf("page: %w", err)
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
		return nil, fmt.Errorf("page: session %s has no task specification", sessionDir)
	}
	fps, _, err := plan.DefaultFPS(j.Info.Streams)
	if err != nil {
		return nil, fmt.Errorf("page: %w", err)
	}
	p, err := plan.Build(j.Events, plan.SpecTypes(j.Spec), fps)
	if err != nil {
		return nil, fmt.Errorf("page: %w", err)
	}
	return &export.Result{Journal: j, Plan: p, Spec: j.Spec}, nil
}

// ShardPage is export's Page hook: it writes the session page into the
// staged shard at layout.SessionPagePath.
func ShardPage(ctx context.Context, r *export.Result) error {
	return WriteFile(filepath.Join(r.Dir, filepath.FromSlash(layout.SessionPagePath)), func(w io.Writer) error {
		return WriteSession(ctx, w, r)
	})
}

// pageMark is in the head of every page this package writes: an existing
// file is replaced only when it is one of them (IsPage).
const pageMark = `<meta name="generator" content="ceres-export">`

// IsPage reports whether the regular file at path is a page this package
// wrote (its head holds pageMark).
func IsPage(path string) bool {
	f, err := input.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	return bytes.Contains(head[:n], []byte(pageMark))
}

// WriteFile writes a page atomically (output.WriteFile): a failed or
// killed run leaves no half-written page and an existing one stays until
// the new one is whole.
func WriteFile(path string, write func(io.Writer) error) error {
	if err := output.WriteFile(path, 0o644, write); err != nil {
		return fmt.Errorf("page: %w", err)
	}
	return nil
}

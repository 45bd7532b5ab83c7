package campaign

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/output"
)

// Runner runs a job scheduler's command (sbatch) and returns its standard
// output. ExecRunner runs it on this host; a test gives a fake that
// records the calls and answers as the scheduler would.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// ExecRunner runs commands on this host; a failure's error carries their
// standard error.
type ExecRunner struct{}

// Run implements Runner.
func (ExecRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// SlurmScripts are the sbatch scripts of a campaign, written by
// WriteSlurmScripts.
type SlurmScripts struct {
	// Array is the job array's script; Merge the merge job's, "" without
	// a merge; Groups the first level of a tree merge's, "" without one.
	Array, Merge, Groups string
}

// WriteSlurmScripts writes the campaign's sbatch scripts under o.Out
// (layout.SlurmArrayScript and, with o.Merge, layout.SlurmMergeScript),
// each whole or not at all, and the log directory their --output names
// (sbatch does not make it).
func WriteSlurmScripts(campaignID string, tasks []Task, o ScriptOptions) (SlurmScripts, error) {
	o = o.ForTasks(tasks)
	// Both scripts first: a value they cannot carry writes nothing.
	array, err := SlurmArrayScript(campaignID, len(tasks), o)
	if err != nil {
		return SlurmScripts{}, err
	}
	var merge, groups string
	if o.Merge != "" {
		if merge, err = SlurmMergeScript(campaignID, tasks, o); err != nil {
			return SlurmScripts{}, err
		}
		if groups, err = SlurmGroupsScript(campaignID, tasks, o); err != nil {
			return SlurmScripts{}, err
		}
	}
	if err := os.MkdirAll(filepath.Join(o.Out, filepath.FromSlash(layout.SlurmLogsDir)), 0o755); err != nil {
		return SlurmScripts{}, fmt.Errorf("batch slurm: %w", err)
	}
	s := SlurmScripts{Array: filepath.Join(o.Out, filepath.FromSlash(layout.SlurmArrayScript))}
	if err := writeScript(s.Array, array); err != nil {
		return SlurmScripts{}, err
	}
	if o.Merge != "" {
		s.Merge = filepath.Join(o.Out, filepath.FromSlash(layout.SlurmMergeScript))
		if err := writeScript(s.Merge, merge); err != nil {
			return SlurmScripts{}, err
		}
	}
	if groups != "" {
		s.Groups = filepath.Join(o.Out, filepath.FromSlash(layout.SlurmGroupsScript))
		if err := writeScript(s.Groups, groups); err != nil {
			return SlurmScripts{}, err
		}
	}
	return s, nil
}

func writeScript(path, body string) error {
	if err := output.WriteFileBytes(path, 0o755, []byte(body)); err != nil {
		return fmt.Errorf("batch slurm: %w", err)
	}
	return nil
}

// The sbatch arguments that submit the scripts: the array first, then the
// merge job, which runs only when every array task ended as expected
// (afterok) and is cancelled rather than left pending when one did not.
func (s SlurmScripts) arrayArgs() []string { return []string{"--parsable", s.Array} }

// afterArgs submits script to run once job ended as expected.
func afterArgs(job, script string) []string {
	return []string{"--parsable", "--dependency=afterok:" + job, "--kill-on-invalid-dep=yes", script}
}

// SubmitCommand is the shell command that submits the scripts by hand.
func (s SlurmScripts) SubmitCommand() string {
	cmd := shellJoin(append([]string{"sbatch"}, s.arrayArgs()...))
	before := "<array job id>"
	if s.Groups != "" {
		cmd += " && " + shellJoin(append([]string{"sbatch"}, afterArgs(before, s.Groups)...))
		before = "<merge-groups job id>"
	}
	if s.Merge != "" {
		cmd += " && " + shellJoin(append([]string{"sbatch"}, afterArgs(before, s.Merge)...))
	}
	return cmd
}

// SlurmJobs are the ids of the submitted jobs; Merge is "" without a merge,
// Groups without a tree merge.
type SlurmJobs struct {
	Array, Groups, Merge string
}

// SubmitSlurm submits the scripts through r: the array, then the groups'
// merges depending on it, then the merge job depending on the last.
func SubmitSlurm(ctx context.Context, r Runner, s SlurmScripts) (SlurmJobs, error) {
	var jobs SlurmJobs
	var err error
	if jobs.Array, err = sbatch(ctx, r, s.arrayArgs()); err != nil {
		return jobs, err
	}
	last := jobs.Array
	if s.Groups != "" {
		if jobs.Groups, err = sbatch(ctx, r, afterArgs(last, s.Groups)); err != nil {
			return jobs, err
		}
		last = jobs.Groups
	}
	if s.Merge != "" {
		if jobs.Merge, err = sbatch(ctx, r, afterArgs(last, s.Merge)); err != nil {
			return jobs, err
		}
	}
	return jobs, nil
}

// sbatch runs sbatch args (with --parsable) and returns the job id it
// printed ("id" or "id;cluster").
func sbatch(ctx context.Context, r Runner, args []string) (string, error) {
	out, err := r.Run(ctx, "sbatch", args...)
	if err != nil {
		return "", fmt.Errorf("sbatch %s: %w", strings.Join(args, " "), err)
	}
	id, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	if _, err := strconv.Atoi(id); err != nil {
		return "", fmt.Errorf("sbatch %s: printed %q, want a job id", strings.Join(args, " "), strings.TrimSpace(string(out)))
	}
	return id, nil
}

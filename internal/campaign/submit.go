package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/output"
	"github.com/ceres-robotics/ceres-export/internal/textout"
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
	// Array is the job array's script; Rerun the job's after it (whatever
	// its state) that runs what it left undone; Merge the merge job's, ""
	// without a merge; Groups the first level of a tree merge's, ""
	// without one.
	Array, Rerun, Merge, Groups string
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
	rerun, err := SlurmRerunScript(campaignID, len(tasks), o)
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
	s.Rerun = filepath.Join(o.Out, filepath.FromSlash(layout.SlurmRerunScript))
	if err := writeScript(s.Rerun, rerun); err != nil {
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

// The sbatch arguments that submit the scripts: the array first; then the
// rerun job after it whatever became of it (afterany), which runs what the
// array left undone; then the merges, each only when the job before ended
// as expected (afterok) and cancelled rather than left pending when it did
// not.
func (s SlurmScripts) arrayArgs() []string { return []string{"--parsable", s.Array} }

// afterArgs submits script to run once job ended as expected.
func afterArgs(job, script string) []string { return dependentArgs("afterok", job, script) }

// dependentArgs submits script with a dependency of kind on job.
func dependentArgs(kind, job, script string) []string {
	return []string{"--parsable", "--dependency=" + kind + ":" + job, "--kill-on-invalid-dep=yes", script}
}

// SubmitCommand is the shell command that submits the scripts by hand.
func (s SlurmScripts) SubmitCommand() string {
	cmd := shellJoin(append([]string{"sbatch"}, s.arrayArgs()...))
	before := "<array job id>"
	if s.Rerun != "" {
		cmd += " && " + shellJoin(append([]string{"sbatch"}, dependentArgs("afterany", before, s.Rerun)...))
		before = "<rerun job id>"
	}
	if s.Groups != "" {
		cmd += " && " + shellJoin(append([]string{"sbatch"}, afterArgs(before, s.Groups)...))
		before = "<merge-groups job id>"
	}
	if s.Merge != "" {
		cmd += " && " + shellJoin(append([]string{"sbatch"}, afterArgs(before, s.Merge)...))
	}
	return cmd
}

// WriteText says what WriteSlurmScripts wrote for tasks tasks under o
// (the options it was given), a line per script.
func (s SlurmScripts) WriteText(w io.Writer, tasks int, o ScriptOptions) error {
	t := textout.New(w)
	t.Printf("array script %s (%d tasks in %d array tasks)\n", s.Array, tasks, o.ArrayCount)
	t.Printf("rerun script %s (after the array, whatever its state: runs what it left undone)\n", s.Rerun)
	if s.Groups != "" {
		t.Printf("merge-groups script %s (a tree merge: groups of at most %d shards)\n", s.Groups, o.MergeGroupSize)
	}
	if s.Merge != "" {
		t.Printf("merge script %s\n", s.Merge)
	}
	return t.Err()
}

// WriteText says which jobs were submitted, a line per job id.
func (j SlurmJobs) WriteText(w io.Writer) error {
	t := textout.New(w)
	for _, job := range []struct{ name, id string }{{"array", j.Array}, {"rerun", j.Rerun}, {"merge-groups", j.Groups}, {"merge", j.Merge}} {
		if job.id != "" {
			t.Printf("%s job %s\n", job.name, job.id)
		}
	}
	return t.Err()
}

// SlurmJobs are the ids of the submitted jobs; "" for a job not submitted
// (Merge without a merge, Groups without a tree merge).
type SlurmJobs struct {
	Array  string `json:"array"`
	Rerun  string `json:"rerun,omitempty"`
	Groups string `json:"groups,omitempty"`
	Merge  string `json:"merge,omitempty"`
}

// ids are the jobs' ids, in submission order.
func (j SlurmJobs) ids() []string {
	var out []string
	for _, id := range []string{j.Array, j.Rerun, j.Groups, j.Merge} {
		if id != "" {
			out = append(out, id)
		}
	}
	return out
}

// Submission is the record of a campaign's latest submission
// (layout.SlurmSubmissionPath).
type Submission struct {
	Jobs        SlurmJobs `json:"jobs"`
	SubmittedAt string    `json:"submitted_at"` // RFC 3339, UTC
}

// SubmitSlurm submits the scripts through r: the array, the rerun job
// after it, then the groups' merges, then the merge job. One campaign
// output runs one submission at a time: two pipelines in one OUT would
// share its merge groups and delete what the other uses. So a submission
// is refused (ErrDestinationBusy) while a job of the one recorded before
// is still queued or running (squeue lists it; a requeued job is listed
// too), and submissions into one OUT are made one at a time, under a lock
// beside the record.
func SubmitSlurm(ctx context.Context, r Runner, s SlurmScripts) (SlurmJobs, error) {
	dir := filepath.Dir(s.Array)
	record := filepath.Join(dir, filepath.Base(layout.SlurmSubmissionPath))
	lock, err := output.LockDestination(record)
	if err != nil {
		return SlurmJobs{}, fmt.Errorf("batch slurm: another submission into %s is being made: %w", filepath.Dir(dir), err)
	}
	defer lock.Unlock()
	if err := checkNoSubmissionQueued(ctx, r, record); err != nil {
		return SlurmJobs{}, err
	}
	jobs, err := submitSlurm(ctx, r, s)
	if jobs.Array != "" {
		b, merr := json.MarshalIndent(Submission{Jobs: jobs, SubmittedAt: time.Now().UTC().Format(time.RFC3339)}, "", "  ")
		if merr == nil {
			merr = output.WriteFileBytes(record, 0o644, append(b, '\n'))
		}
		if merr != nil && err == nil {
			err = fmt.Errorf("batch slurm: jobs %s submitted, but their record: %w", strings.Join(jobs.ids(), ", "), merr)
		}
	}
	return jobs, err
}

// checkNoSubmissionQueued refuses when a job of the submission recorded at
// record is in the queue (pending, running, requeued, suspended).
func checkNoSubmissionQueued(ctx context.Context, r Runner, record string) error {
	b, err := input.ReadFile(record)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("batch slurm: %w", err)
	}
	var sub Submission
	if err := json.Unmarshal(b, &sub); err != nil {
		return fmt.Errorf("batch slurm: submission record %s: %w (remove it once no job of the campaign is queued)", record, err)
	}
	ids := sub.Jobs.ids()
	if len(ids) == 0 {
		return nil
	}
	// Every job's id and its array's: an array task is listed as 12_3
	// (%i) with job id 15 (%A) and array id 12 (%F).
	q, err := r.Run(ctx, "squeue", "--noheader", "--format=%A %F")
	if err != nil {
		return fmt.Errorf("batch slurm: cannot tell whether the earlier submission into this campaign (jobs %s) still runs: squeue: %w", strings.Join(ids, ", "), err)
	}
	queued := map[string]bool{}
	for _, f := range strings.Fields(string(q)) {
		queued[f] = true
	}
	var running []string
	for _, id := range ids {
		if queued[id] {
			running = append(running, id)
		}
	}
	if len(running) > 0 {
		return fmt.Errorf("%w: campaign %s: jobs %s of the submission of %s are still queued or running; wait for them (or scancel them) before submitting again",
			output.ErrDestinationBusy, filepath.Dir(filepath.Dir(record)), strings.Join(running, ", "), sub.SubmittedAt)
	}
	return nil
}

// submitSlurm submits the scripts in order, each depending on the last.
func submitSlurm(ctx context.Context, r Runner, s SlurmScripts) (SlurmJobs, error) {
	var jobs SlurmJobs
	var err error
	if jobs.Array, err = sbatch(ctx, r, s.arrayArgs()); err != nil {
		return jobs, err
	}
	last := jobs.Array
	if s.Rerun != "" {
		if jobs.Rerun, err = sbatch(ctx, r, dependentArgs("afterany", last, s.Rerun)); err != nil {
			return jobs, err
		}
		last = jobs.Rerun
	}
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

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ceres-robotics/ceres-export/internal/batch"
	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/exitstatus"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/output"
	"github.com/ceres-robotics/ceres-export/internal/page"
	"github.com/ceres-robotics/ceres-export/internal/progress"
	"github.com/ceres-robotics/ceres-export/internal/version"
)

var batchExitStatus = exitstatus.Help("every task ended as expected (exported, up to date, or failed where the manifest expects it to)",
	exitstatus.NotSound.As("a task failed or missed its expectation (the summary says which)"),
	// No DestinationExists: batch replaces its own shards and merged
	// datasets, and refuses what is not its own (DestinationRefused). Its
	// privacy is a task's setting, not a flag.
	exitstatus.UsageError, exitstatus.Manifest, exitstatus.DestinationRefused,
	exitstatus.NoSalt.As("a task whose settings say privacy metadata-only, without --salt or $CERES_SALT"),
	exitstatus.LicensesDiffer.As("--merge: a setting's shards under different licences (give them one in the manifest)"),
	exitstatus.Interrupted, exitstatus.WriteFailed.As("OUT cannot be written"),
	exitstatus.Busy.As("another batch is running some of its tasks right now (run again when it is done)"))

// BatchOptions are the flags of `ceres-export batch`.
type BatchOptions struct {
	Manifest    string
	Output      string
	Jobs        int
	Selection   campaign.Selection
	ArrayIndex  int
	ArrayCount  int
	RetryFailed bool
	Merge       string
	Salt        string
	License     string
	JSON        bool
	WaitBusy    time.Duration
}

// AddFlags registers the options' flags on cmd.
func (o *BatchOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "campaign directory: a shard per task, attempt records under "+layout.AttemptsDir+"/ (required)")
	f.IntVar(&o.Jobs, "jobs", 0, "tasks exported side by side (default: the CPUs this process may use, at least 2)")
	addSelectionFlags(cmd, &o.Selection)
	addArrayFlags(cmd, &o.ArrayIndex, &o.ArrayCount)
	f.BoolVar(&o.RetryFailed, "retry-failed", false, "run tasks again whose last attempt failed with the same inputs")
	f.StringVar(&o.Merge, "merge", "", "then merge the shards: one dataset per setting, DATASET/<setting_id> (not in an array share)")
	f.StringVar(&o.Salt, "salt", "", "salt of the tasks whose settings say privacy metadata-only (default: $CERES_SALT; never stored)")
	addLicenseFlag(cmd, &o.License)
	addJSONFlag(cmd, &o.JSON)
	f.DurationVar(&o.WaitBusy, "wait-busy", 0, "wait this long for a task another process holds before giving up (exit 4); scheduler jobs wait")
}

func addSelectionFlags(cmd *cobra.Command, s *campaign.Selection) {
	f := cmd.Flags()
	f.StringArrayVar(&s.CaseIDs, "case-id", nil, "select tasks of this case_id (repeatable)")
	f.StringArrayVar(&s.SettingIDs, "setting-id", nil, "select tasks of this setting_id (repeatable)")
	f.StringArrayVar(&s.RunIDs, "run-id", nil, "select tasks of this run_id (repeatable)")
}

// addLicenseFlag registers batch's --license, the licence of every
// selected task (loadTasks).
func addLicenseFlag(cmd *cobra.Command, license *string) {
	cmd.Flags().StringVar(license, "license", "", "every task's dataset card licence, a Hugging Face Hub licence id, as the manifest's license option (a task whose manifest names another licence is refused)")
}

func addArrayFlags(cmd *cobra.Command, index, count *int) {
	f := cmd.Flags()
	f.IntVar(index, "array-index", -1, "run only this array share (default: SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX)")
	f.IntVar(count, "array-count", 0, "number of array shares (default: SLURM_ARRAY_TASK_COUNT)")
}

func newBatchCmd(s streams) *cobra.Command {
	opts := BatchOptions{}
	cmd := &cobra.Command{
		Use:   "batch MANIFEST -o OUT [flags]",
		Short: "Export a campaign: many sessions from one manifest",
		Long: `Export every task of a campaign manifest (JSON, or JSON Lines for large flat
batches; docs/campaigns.md) into OUT/<task id>/. Each execution of a task is
an attempt with a record under OUT/` + layout.AttemptsDir + `/<task id>/; a task whose shard
was made from the same inputs and options and passes a quick verify is
skipped, so a killed batch resumes where it stopped. One task failing does
not stop the others.` + batchExitStatus,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Manifest = args[0]
			return runBatch(cmd.Context(), opts, s)
		},
	}
	opts.AddFlags(cmd)
	_ = cmd.MarkFlagRequired("output")
	cmd.AddCommand(newBatchPlanCmd(s), newBatchStatusCmd(s), newBatchSlurmCmd(s), newBatchKubernetesCmd(s))
	return cmd
}

// loadTasks parses the manifest and selects its tasks; a license ("" for
// none) is every selected task's (campaign.WithLicense), as if the
// manifest's defaults said it.
func loadTasks(manifest string, sel campaign.Selection, license string) (*campaign.Manifest, []campaign.Task, error) {
	if err := checkLicenseFlag(license); err != nil {
		return nil, nil, withCode(exitstatus.UsageError, err)
	}
	m, err := batch.Load(manifest)
	if err != nil {
		return nil, nil, withCode(exitstatus.Manifest, err)
	}
	tasks, err := campaign.Select(m.Tasks, sel)
	if err != nil {
		return nil, nil, withCode(exitstatus.Manifest, err)
	}
	if err := campaign.WithLicense(tasks, license); err != nil {
		return nil, nil, withCode(exitstatus.Manifest, err)
	}
	return m, tasks, nil
}

func runBatch(ctx context.Context, opts BatchOptions, s streams) error {
	if opts.Jobs == 0 {
		opts.Jobs = batch.DefaultJobs()
	}
	if opts.Jobs < 1 {
		return withCode(exitstatus.UsageError, fmt.Errorf("--jobs %d: want at least 1", opts.Jobs))
	}
	m, tasks, err := loadTasks(opts.Manifest, opts.Selection, opts.License)
	if err != nil {
		return err
	}
	selected := len(tasks)
	tasks, share, err := selectShare(tasks, opts.ArrayIndex, opts.ArrayCount)
	if err != nil {
		return err
	}
	// Every output is checked before anything runs.
	if err := batch.CheckRun(share, opts.Merge, opts.Output, campaign.ReadPaths(m.Tasks, []string{opts.Manifest})); err != nil {
		return withCode(exitstatus.UsageError, err)
	}
	if share != nil {
		fmt.Fprintf(s.Err, "campaign %s: array share %d of %d: %d of %d selected tasks\n", m.CampaignID, share.Index, share.Count, len(tasks), selected)
	} else {
		fmt.Fprintf(s.Err, "campaign %s: %d tasks, %d at a time\n", m.CampaignID, len(tasks), opts.Jobs)
	}
	sum, runErr := runTasks(ctx, opts, s, tasks, share)
	if sum == nil {
		// A refused OUT or a missing salt is the table's (exitstatus.Of).
		return withCode(exitstatus.WriteFailed, runErr)
	}
	merged, err := finishBatch(ctx, opts, s, batch.Finished{Manifest: m, Tasks: tasks, Summary: sum, RunErr: runErr})
	if !opts.JSON {
		return err
	}
	// With --json stdout holds one JSON document, written last (it names
	// the merged datasets); the human summary went to stderr.
	doc := batch.NewDocument(m.CampaignID, opts.Output, share, sum, merged, int(exitstatus.Of(exitstatus.Stopped(ctx, err))))
	if werr := writeJSON(s, "batch", doc); werr != nil && err == nil {
		return werr
	}
	return err
}

// finishBatch settles the run f (batch.Finish): its summary on stdout, or
// on stderr when stdout holds the JSON document.
func finishBatch(ctx context.Context, opts BatchOptions, s streams, f batch.Finished) ([]batch.MergedDataset, error) {
	f.Out, f.Merge, f.Version, f.Human, f.Log = opts.Output, opts.Merge, version.Tool(), s.Out, s.Err
	if opts.JSON {
		f.Human = s.Err
	}
	if opts.Merge != "" {
		mergeGC()
	}
	return batch.Finish(ctx, f)
}

// runTasks runs the tasks with progress on stderr.
func runTasks(ctx context.Context, opts BatchOptions, s streams, tasks []campaign.Task, share *campaign.ArrayShare) (*batch.Summary, error) {
	watch := batch.NewProgress(len(tasks))
	if !progress.IsTerminal(s.Err) {
		stop := progress.Lines(s.Err, s.progressEvery(), watch.Lines)
		defer stop()
	}
	done := 0
	// The salt comes from the environment in scheduler jobs, so that no
	// generated script holds it.
	salt := opts.Salt
	if salt == "" {
		salt = os.Getenv("CERES_SALT")
	}
	return batch.Run(ctx, tasks, batch.Options{
		Out: opts.Output, Jobs: opts.Jobs, Array: share, ToolVersion: version.Tool(), Inputs: []string{opts.Manifest}, Salt: salt,
		Page: page.ShardPage, RetryFailed: opts.RetryFailed, Scheduler: campaign.SchedulerEnv(os.Getenv), WaitBusy: opts.WaitBusy,
		OnStart: watch.Start,
		OnDone: func(r batch.TaskResult) {
			watch.Done(r)
			done++
			fmt.Fprintf(s.Err, "[%d/%d] %s %s\n", done, len(tasks), r.Task.ID, r.Describe())
		},
	})
}

// --- batch plan

// PlanOptions are the flags of `ceres-export batch plan`.
type PlanOptions struct {
	Manifest   string
	Selection  campaign.Selection
	ArrayIndex int
	ArrayCount int
	License    string
}

func newBatchPlanCmd(s streams) *cobra.Command {
	var opts PlanOptions
	cmd := &cobra.Command{
		Use:   "plan MANIFEST [flags]",
		Short: "Print a campaign's normalised tasks as JSON",
		Long: `Print the selected tasks of a manifest as JSON: ids, resolved export options,
merged extensions and expectations; with an array share, only that share's.` +
			exitstatus.Help("printed", exitstatus.UsageError, exitstatus.Manifest),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Manifest = args[0]
			return runBatchPlan(opts, s)
		},
	}
	addSelectionFlags(cmd, &opts.Selection)
	addArrayFlags(cmd, &opts.ArrayIndex, &opts.ArrayCount)
	addLicenseFlag(cmd, &opts.License)
	return cmd
}

func runBatchPlan(opts PlanOptions, s streams) error {
	m, tasks, err := loadTasks(opts.Manifest, opts.Selection, opts.License)
	if err != nil {
		return err
	}
	tasks, share, err := selectShare(tasks, opts.ArrayIndex, opts.ArrayCount)
	if err != nil {
		return err
	}
	return writeJSON(s, "batch_plan", batch.Plan{CampaignID: m.CampaignID, Array: share, Tasks: tasks})
}

// selectShare selects the tasks of the array share that the flags or the
// scheduler's environment name (a nil share: all of them).
func selectShare(tasks []campaign.Task, index, count int) ([]campaign.Task, *campaign.ArrayShare, error) {
	share, err := campaign.ArrayFromEnv(os.Getenv, index, count)
	if err == nil && share != nil {
		tasks, err = campaign.Share(tasks, share.Index, share.Count)
	}
	return tasks, share, withCode(exitstatus.UsageError, err)
}

// --- batch status

// StatusOptions are the flags of `ceres-export batch status`.
type StatusOptions struct {
	Out       string
	Manifest  string // "" for none: no pending tasks are listed
	Selection campaign.Selection
	JSON      bool
}

func newBatchStatusCmd(s streams) *cobra.Command {
	var opts StatusOptions
	cmd := &cobra.Command{
		Use:   "status OUT [MANIFEST] [--json]",
		Short: "Show a campaign's tasks, attempts and states from its records",
		Long: `Show every task recorded under OUT/` + layout.AttemptsDir + `/: its attempts, the latest
attempt's state (running ones with their host and pid), episodes and frames.
With MANIFEST, the tasks it selects that no attempt has started yet are
listed as pending, so that a running campaign shows what is running, done,
failed and left. It reads only the records, which tasks replace
atomically: it works while the campaign runs.` +
			exitstatus.Help("shown", exitstatus.UsageError, exitstatus.Unreadable.As("OUT holds no attempt records"), exitstatus.Manifest,
				exitstatus.NotSound.As("shown, but some records are damaged (each is named; the tasks are listed from their other records)")),
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Out = args[0]
			if len(args) == 2 {
				opts.Manifest = args[1]
			}
			return runBatchStatus(opts, s)
		},
	}
	addJSONFlag(cmd, &opts.JSON)
	addSelectionFlags(cmd, &opts.Selection)
	return cmd
}

func runBatchStatus(opts StatusOptions, s streams) error {
	var tasks []campaign.Task
	if opts.Manifest != "" {
		var err error
		if _, tasks, err = loadTasks(opts.Manifest, opts.Selection, ""); err != nil {
			return err
		}
	}
	st, err := campaign.Status(opts.Out, tasks)
	if err != nil {
		return withCode(exitstatus.UsageError, err)
	}
	if opts.JSON {
		err = writeJSON(s, "batch_status", st)
	} else {
		err = st.WriteText(s.Out)
	}
	if err != nil {
		return err
	}
	for _, d := range st.Damaged {
		fmt.Fprintf(s.Err, "ceres-export: damaged %s\n", d.Error)
	}
	if len(st.Damaged) > 0 {
		return exitstatus.Printed(exitstatus.Findings)
	}
	return nil
}

// --- batch slurm

// defaultJobWaitBusy is how long a scheduler's array task waits for a task
// another process holds: a requeued task whose lost first attempt is still
// exporting on its node waits for it, then finds the shard up to date.
const defaultJobWaitBusy = time.Hour

// defaultMergeGroupSize is the largest setting batch slurm merges in one
// job; larger ones merge in a tree (docs/campaigns.md, "Merging a
// campaign", has the measurement behind it).
const defaultMergeGroupSize = 64

// SlurmOptions are the flags of `ceres-export batch slurm`: the scripts'
// options (Binary "" is this ceres-export; a wrapper runs the release
// image, Apptainer or podman run, on nodes that have no ceres-export of
// their own), and whether to submit them.
type SlurmOptions struct {
	Script campaign.ScriptOptions
	Submit bool
}

func newBatchSlurmCmd(s streams) *cobra.Command {
	opts := SlurmOptions{}
	cmd := &cobra.Command{
		Use:   "slurm MANIFEST -o OUT [flags]",
		Short: "Write (and submit) the SLURM job array of a campaign and its merge job",
		Long: `Write OUT/` + layout.SlurmArrayScript + `, an sbatch --array script whose task i exports
share i of the selected tasks; OUT/` + layout.SlurmRerunScript + `, the job that runs after the
array whatever became of it (afterany) and runs what it left undone (a task
whose export was killed, which SLURM does not requeue), so that a campaign
recovers from a failed array task by itself; and with --merge
OUT/` + layout.SlurmMergeScript + `, the merge job that depends on the rerun job (afterok,
and --kill-on-invalid-dep=yes so that it is cancelled rather than left
pending when a task failed). --submit submits them and prints their job ids;
it is refused (exit 4) while a job of the campaign's previous submission
into OUT is still queued or running.` +
			exitstatus.Help("written (and submitted)", exitstatus.UsageError, exitstatus.Manifest, exitstatus.DestinationRefused,
				exitstatus.WriteFailed.As("writing the scripts or sbatch failed"),
				exitstatus.Busy.As("--submit: a job of the previous submission into OUT is still queued or running")),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Script.Manifest = args[0]
			return runBatchSlurm(cmd.Context(), opts, s)
		},
	}
	f, o := cmd.Flags(), &opts.Script
	f.StringVarP(&o.Out, "output", "o", "", "campaign directory (required)")
	addSelectionFlags(cmd, &o.Selection)
	f.IntVar(&o.ArrayCount, "array-count", 0, "array tasks (default: one per selected task)")
	f.IntVar(&o.Jobs, "jobs", 0, "tasks side by side inside each array task (default: batch's)")
	f.IntVar(&o.CPUsPerTask, "cpus-per-task", 0, "sbatch --cpus-per-task (default: the manifest's execution_profile, else the cluster's)")
	f.StringVar(&o.Partition, "partition", "", "sbatch --partition")
	f.StringVar(&o.Time, "time", "", "sbatch --time limit")
	f.StringVar(&o.Merge, "merge", "", "merged dataset directory: one dataset per setting, DATASET/<setting_id>")
	f.BoolVar(&opts.Submit, "submit", false, "submit the array and the merge job with sbatch")
	f.DurationVar(&o.WaitBusy, "wait-busy", defaultJobWaitBusy, "how long a requeued array task waits for its lost first attempt (batch --wait-busy)")
	f.IntVar(&o.MergeGroupSize, "merge-group-size", defaultMergeGroupSize, "merge a setting of more shards than this in a tree: groups side by side, then the groups (0: one merge)")
	addLicenseFlag(cmd, &o.License)
	f.StringVar(&o.Binary, "binary", "", "the ceres-export the jobs run (default: this one), e.g. a wrapper that runs the image through Apptainer or podman (docs/campaigns.md)")
	_ = cmd.MarkFlagRequired("output")
	return cmd
}

func runBatchSlurm(ctx context.Context, opts SlurmOptions, s streams) error {
	m, tasks, err := loadTasks(opts.Script.Manifest, opts.Script.Selection, opts.Script.License)
	if err != nil {
		return err
	}
	inputs := campaign.ReadPaths(tasks, []string{opts.Script.Manifest})
	so, err := opts.Script.ForSlurm(len(tasks))
	if err == nil && so.Merge != "" {
		err = batch.CheckMergeDestination(so.Merge, so.Out, inputs)
	}
	if err != nil {
		return withCode(exitstatus.UsageError, err)
	}
	// OUT becomes the campaign's output before the jobs run, so that its
	// log directory is inside a campaign output, not a stray directory.
	if err := campaign.PrepareOut(so.Out, inputs); err != nil {
		return withCode(exitstatus.UsageError, err)
	}
	scripts, err := campaign.WriteSlurmScripts(m.CampaignID, tasks, so)
	if err != nil {
		return withCode(exitstatus.WriteFailed, err)
	}
	if err := scripts.WriteText(s.Out, len(tasks), so); err != nil {
		return withCode(exitstatus.WriteFailed, err)
	}
	if !opts.Submit {
		fmt.Fprintf(s.Out, "submit with: %s\n", scripts.SubmitCommand())
		return nil
	}
	jobs, err := campaign.SubmitSlurm(ctx, campaign.ExecRunner{}, scripts)
	_ = jobs.WriteText(s.Out)
	if errors.Is(err, output.ErrDestinationBusy) {
		return err // exit 4, as the table says of a busy destination
	}
	return withCode(exitstatus.WriteFailed, err)
}

// --- batch kubernetes

// KubernetesOptions are the flags of `ceres-export batch kubernetes`: the
// Job's options.
type KubernetesOptions struct {
	Job campaign.KubernetesOptions
}

func newBatchKubernetesCmd(s streams) *cobra.Command {
	var opts KubernetesOptions
	cmd := &cobra.Command{
		Use:   "kubernetes MANIFEST -o OUT --image IMAGE --claim PVC --mount DIR [flags]",
		Short: "Print a Kubernetes Indexed Job for a campaign",
		Long: `Print a Kubernetes Indexed Job (batch/v1, JSON, for kubectl apply -f -) whose
completion index i exports share i of the selected tasks, as a SLURM array
task does. The pods read and write only the PersistentVolumeClaim --claim,
mounted at --mount: the manifest, every session and OUT must lie under
--mount, at the paths this host sees them (relative paths are made
absolute here: a pod starts in its image's working directory). The pods
run as the image's user 65532 with a read-only root file system, no
capabilities and no privilege escalation; the Job has a deadline
(--active-deadline), is removed a while after it finished
(--ttl-after-finished), stops once more than --max-failed-indexes indexes
failed, and requests the tasks' execution_profile, else 1 CPU and 2 GiB
(docs/campaigns.md).` +
			exitstatus.Help("printed", exitstatus.UsageError.As("usage error; a path the pods could not see"), exitstatus.Manifest),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Job.Manifest = args[0]
			return runBatchKubernetes(opts, s)
		},
	}
	f := cmd.Flags()
	j := &opts.Job
	f.StringVarP(&j.Out, "output", "o", "", "campaign directory, under --mount (required)")
	f.StringVar(&j.Image, "image", "", "container image holding ceres-export (required): the release image, pushed to the cluster's registry (docs/campaigns.md)")
	f.StringVar(&j.Binary, "binary", "ceres-export", "ceres-export inside the image")
	f.StringVar(&j.Namespace, "namespace", "", "the Job's namespace")
	f.StringVar(&j.Claim, "claim", "", "PersistentVolumeClaim holding the manifest, sessions and OUT (required)")
	f.StringVar(&j.MountPath, "mount", "", "where the claim is mounted, in the pods as on this host (required)")
	f.IntVar(&j.ArrayCount, "array-count", 0, "completions (default: one per selected task)")
	f.IntVar(&j.Jobs, "jobs", 0, "tasks side by side in each pod (default: 1 when a request is made, as it always is)")
	f.IntVar(&j.CPUsPerTask, "cpus-per-task", 0, "CPU request of each pod (default: the manifest's execution_profile, else 1)")
	f.DurationVar(&j.WaitBusy, "wait-busy", defaultJobWaitBusy, "how long a pod waits for a task another pod still writes (batch --wait-busy)")
	f.DurationVar(&j.ActiveDeadline, "active-deadline", 0, "activeDeadlineSeconds: the longest the whole Job may run (default 24h)")
	f.DurationVar(&j.TTLAfterFinished, "ttl-after-finished", 0, "ttlSecondsAfterFinished: how long a finished Job and its pods' logs stay (default 168h)")
	f.IntVar(&j.MaxFailedIndexes, "max-failed-indexes", 0, "fail the Job once more indexes than this failed (default: half the completions, rounded up)")
	addSelectionFlags(cmd, &j.Selection)
	addLicenseFlag(cmd, &j.License)
	_ = cmd.MarkFlagRequired("output")
	_ = cmd.MarkFlagRequired("image")
	return cmd
}

func runBatchKubernetes(opts KubernetesOptions, s streams) error {
	// The pods get the paths as they are; made absolute here, the
	// manifest's relative sessions are too.
	j := opts.Job
	var err error
	if j.Manifest, err = filepath.Abs(j.Manifest); err == nil {
		j.Out, err = filepath.Abs(j.Out)
	}
	if err != nil {
		return withCode(exitstatus.UsageError, err)
	}
	m, tasks, err := loadTasks(j.Manifest, j.Selection, j.License)
	if err != nil {
		return err
	}
	b, err := campaign.KubernetesJob(m.CampaignID, tasks, j)
	if err != nil {
		return withCode(exitstatus.UsageError, err)
	}
	_, err = s.Out.Write(b)
	return err
}

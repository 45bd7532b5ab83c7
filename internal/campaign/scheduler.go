package campaign

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// ArrayFromEnv decides the array share of this run. Flags given explicitly
// (index >= 0, count > 0) win; otherwise SLURM's SLURM_ARRAY_TASK_ID (made
// zero-based with SLURM_ARRAY_TASK_MIN) and SLURM_ARRAY_TASK_COUNT, or a
// Kubernetes Indexed Job's JOB_COMPLETION_INDEX with the count given (a Job
// does not tell its pods its completions). nil means no array: run every
// selected task.
func ArrayFromEnv(getenv func(string) string, index, count int) (*ArrayShare, error) {
	envInt := func(name string) (int, bool, error) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, false, fmt.Errorf("%s=%q: want a non-negative integer", name, v)
		}
		return n, true, nil
	}
	// In a SLURM array task the count comes from SLURM unless given, also
	// with an --array-index of one's own.
	_, inSlurm, err := envInt("SLURM_ARRAY_TASK_ID")
	if err != nil {
		return nil, err
	}
	if inSlurm && count <= 0 {
		n, ok, err := envInt("SLURM_ARRAY_TASK_COUNT")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not: pass --array-count")
		}
		count = n
	}
	if index < 0 {
		if id, ok, _ := envInt("SLURM_ARRAY_TASK_ID"); ok {
			min, _, err := envInt("SLURM_ARRAY_TASK_MIN")
			if err != nil {
				return nil, err
			}
			if id < min {
				return nil, fmt.Errorf("SLURM_ARRAY_TASK_ID=%d is below SLURM_ARRAY_TASK_MIN=%d: not a task of this array", id, min)
			}
			index = id - min
		} else if id, ok, err := envInt("JOB_COMPLETION_INDEX"); err != nil {
			return nil, err
		} else if ok {
			if count <= 0 {
				return nil, fmt.Errorf("JOB_COMPLETION_INDEX is set but the array count is not: pass --array-count (the Job's completions)")
			}
			index = id
		}
	}
	switch {
	case index < 0 && count <= 0:
		return nil, nil
	case index < 0:
		return nil, fmt.Errorf("--array-count %d without an array index (--array-index, SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX)", count)
	case count <= 0:
		return nil, fmt.Errorf("--array-index %d without --array-count", index)
	case index >= count:
		return nil, fmt.Errorf("array index %d: want 0 to %d (array count %d)", index, count-1, count)
	}
	return &ArrayShare{Index: index, Count: count}, nil
}

// SchedulerEnv picks the scheduler's ids out of the environment, for the
// attempt records.
func SchedulerEnv(getenv func(string) string) map[string]string {
	out := map[string]string{}
	for _, k := range []string{"SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_JOB_NODELIST", "JOB_COMPLETION_INDEX", "HOSTNAME"} {
		if v := getenv(k); v != "" {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// ScriptOptions describe the scheduler jobs of one campaign.
type ScriptOptions struct {
	// Binary, Manifest and Out are the paths the jobs use (absolute: jobs
	// start in another directory).
	Binary, Manifest, Out string
	// Selection narrows the campaign as on the batch command line.
	Selection Selection
	// ArrayCount is the number of array tasks.
	ArrayCount int
	// Jobs is --jobs inside each array task (0: the batch default).
	Jobs int
	// CPUsPerTask, Partition and Time are sbatch's options ("" or 0 leave
	// them to the cluster's defaults).
	CPUsPerTask     int
	Partition, Time string
	// Merge is the merged dataset's directory; "" writes no merge job.
	Merge string
	// WaitBusy is batch's --wait-busy in each array task: how long a
	// requeued task waits for its lost first attempt, still writing.
	WaitBusy time.Duration
	// License is batch's --license in each array task ("" for none): the
	// licence every task's shard carries.
	License string
	// MergeGroupSize, when positive, merges a setting of more shards than
	// this in a tree: groups of at most MergeGroupSize shards merged side
	// by side (a job array), then one merge of the groups. A merge of
	// merged datasets writes the bytes a merge of their shards writes.
	MergeGroupSize int

	// What the tasks ask of the scheduler (ForTasks fills these from the
	// manifest). Request is one array task's reservation: the largest
	// execution_profile of the tasks, times the tasks it runs side by side;
	// Exclusive asks for whole nodes. Requeue lets SLURM requeue an array
	// task whose node was lost, MaxAttempts bounds a Kubernetes index's
	// pods: both from the tasks' retry policies.
	Request     Resources
	Exclusive   bool
	Requeue     bool
	MaxAttempts int
}

// ForTasks returns o with what tasks ask of the scheduler: their largest
// resource request, whole nodes when any asks for one, and their retry
// policies. A request is for tasks side by side: with resources declared
// and no --jobs, each array task runs one task at a time (--jobs 1), so
// that the reservation is what each task declared.
func (o ScriptOptions) ForTasks(tasks []Task) ScriptOptions {
	r, exclusive := MaxResources(tasks)
	if r.Any() && o.Jobs == 0 {
		o.Jobs = 1
	}
	o.Request, o.Exclusive = r.Times(max(o.Jobs, 1)), exclusive
	o.Requeue, o.MaxAttempts = false, 0
	bounded := len(tasks) > 0
	for _, t := range tasks {
		p := t.Policy()
		o.Requeue = o.Requeue || slices.Contains(p.RetryCategories, CategoryLost)
		if p.MaxAttempts == 0 {
			bounded = false
		}
		o.MaxAttempts = max(o.MaxAttempts, p.MaxAttempts)
	}
	if !bounded {
		o.MaxAttempts = 0
	}
	return o
}

// batchArgs is the batch command line every array task runs.
func (o ScriptOptions) batchArgs() []string {
	return o.batchArgsOf([]string{"--array-count", strconv.Itoa(o.ArrayCount)})
}

// batchArgsOf is the batch command line with share, the array flags ("" for
// the whole selection).
func (o ScriptOptions) batchArgsOf(share []string) []string {
	args := append([]string{o.Binary, "batch", o.Manifest, "-o", o.Out}, share...)
	if o.Jobs > 0 {
		args = append(args, "--jobs", strconv.Itoa(o.Jobs))
	}
	if o.WaitBusy > 0 {
		args = append(args, "--wait-busy", o.WaitBusy.String())
	}
	if o.License != "" {
		args = append(args, "--license", o.License)
	}
	return append(args, o.Selection.Args()...)
}

// SlurmArrayScript is the sbatch script of the campaign's job array: array
// task i runs share i of the selected tasks (SLURM_ARRAY_TASK_ID). Every
// value it holds is quoted for the line it is on; a value no quoting can
// hold is refused (CheckSlurmValues).
func SlurmArrayScript(campaignID string, tasks int, o ScriptOptions) (string, error) {
	if err := o.CheckSlurmValues(); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n# ceres-export campaign %s: %d tasks in %d array tasks.\n", campaignID, tasks, o.ArrayCount)
	sbatchLine(&b, "--job-name", jobName(campaignID, ""))
	sbatchLine(&b, "--array", fmt.Sprintf("0-%d", o.ArrayCount-1))
	sbatchLine(&b, "--output", slurmFilename(o.Out+"/"+layout.SlurmLogsDir+"/")+"array-%A_%a.out")
	sbatchCommon(&b, o)
	sbatchRequest(&b, o)
	// A task whose node is lost goes back to the queue, when the tasks'
	// retry policies retry lost attempts; its rerun skips what is done
	// and waits for a first attempt still writing (docs/campaigns.md).
	if o.Requeue {
		// A requeued task's log is truncated by default while the lost
		// first run, still alive on its node, writes on into it: both
		// runs' lines are kept by appending.
		b.WriteString("#SBATCH --requeue\n#SBATCH --open-mode=append\n")
	} else {
		b.WriteString("#SBATCH --no-requeue\n")
	}
	b.WriteString("set -euo pipefail\nexec " + shellJoin(o.batchArgs()) + "\n")
	return b.String(), nil
}

// SlurmRerunScript is the sbatch script of the job that runs after the
// array whatever became of it (--dependency=afterany): the whole selection
// as one batch, which skips every task that is done and runs only what is
// not (an array task that failed because its export was killed on a node
// that stayed up, which SLURM does not requeue; a task whose attempt was
// lost). The merge depends on it (afterok), so that a campaign recovers
// from a failed array task without a resubmission by hand. It asks to be
// requeued when its node is lost.
func SlurmRerunScript(campaignID string, tasks int, o ScriptOptions) (string, error) {
	if err := o.CheckSlurmValues(); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n# ceres-export campaign %s: after the array, whatever became of it, run what of its %d tasks is not done.\n", campaignID, tasks)
	sbatchLine(&b, "--job-name", jobName(campaignID, "-rerun"))
	sbatchLine(&b, "--output", slurmFilename(o.Out+"/"+layout.SlurmLogsDir+"/")+"rerun-%j.out")
	sbatchCommon(&b, o)
	sbatchRequest(&b, o)
	b.WriteString(requeueLines)
	b.WriteString("set -euo pipefail\nexec " + shellJoin(o.batchArgsOf(nil)) + "\n")
	return b.String(), nil
}

// requeueLines ask SLURM to requeue a job whose node is lost, whatever the
// cluster's JobRequeue says, and keep both runs' lines in its log (a
// requeued job's log is truncated by default while the lost run, still
// alive on its node, may write on into it).
const requeueLines = "#SBATCH --requeue\n#SBATCH --open-mode=append\n"

// mergeWaitArgs are the merge command's flags that wait for a destination
// another merge still holds (a merge job whose node froze and that SLURM
// requeued), as the array's tasks wait for theirs.
func (o ScriptOptions) mergeWaitArgs() []string {
	if o.WaitBusy > 0 {
		return []string{"--wait-busy", o.WaitBusy.String()}
	}
	return nil
}

// CheckSlurmValues refuses the values that no quoting carries through an
// #SBATCH line: sbatch reads a directive up to the end of its line, and
// the rest of a value after a newline would be a shell line of the script.
// NUL ends a C string early; a backslash in OUT breaks its log path.
// Everything else is quoted (sbatchQuote, shellJoin).
func (o ScriptOptions) CheckSlurmValues() error {
	for _, v := range []struct{ what, value string }{
		{"OUT", o.Out}, {"the manifest path", o.Manifest}, {"the binary path", o.Binary}, {"--merge", o.Merge},
		{"--partition", o.Partition}, {"--time", o.Time},
	} {
		if i := strings.IndexAny(v.value, "\n\x00"); i >= 0 {
			return fmt.Errorf("%s %s: holds %q at byte %d, which no SLURM script can carry (a job script line ends there); choose another", v.what, quoteCut(v.value), v.value[i:i+1], i)
		}
	}
	if o.MergeGroupSize < 0 {
		return fmt.Errorf("--merge-group-size %d: want 0 or more", o.MergeGroupSize)
	}
	// OUT is in --output, a filename pattern: slurmstepd reads any
	// backslash in one as "no substitutions" and drops it, so the logs
	// would go to another directory and the job fail to start.
	if i := strings.IndexByte(o.Out, '\\'); i >= 0 {
		return fmt.Errorf("OUT %s: holds a backslash at byte %d, which no SLURM script can carry (SLURM drops it from the log file's path); choose another", quoteCut(o.Out), i)
	}
	for _, d := range o.Selection.dimensions() {
		for _, v := range d.values {
			if strings.ContainsRune(v, 0) {
				return fmt.Errorf("--%s %s: holds a NUL byte", d.flag, quoteCut(v))
			}
		}
	}
	return nil
}

// sbatchLine writes one #SBATCH directive, its value quoted for sbatch.
func sbatchLine(b *strings.Builder, option, value string) {
	fmt.Fprintf(b, "#SBATCH %s=%s\n", option, sbatchQuote(value))
}

// sbatchQuote quotes a value for an #SBATCH line as sbatch's directive
// parser reads it (src/sbatch/opt.c, _get_argument): inside double quotes
// white space and '#' are plain characters, and a backslash makes the next
// character plain, '"' and '\\' included. The value holds no newline
// (CheckSlurmValues).
func sbatchQuote(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

// slurmFilename escapes a literal path for a filename pattern (--output):
// SLURM replaces %A, %j and the like, and reads %% as %.
func slurmFilename(p string) string { return strings.ReplaceAll(p, "%", "%%") }

// quoteCut quotes a value for a message, cutting a long one.
func quoteCut(v string) string { return strconv.Quote(cutLong(v)) }

// MergeGroups returns, per setting in first-appearance order, the shards a
// campaign merge joins: the tasks expected to succeed. The merge job runs
// only when every array task ended as expected (afterok), and then exactly
// these tasks have shards. Merge requires the same features, fps and codec
// across its inputs, which a setting (one export profile) fixes; hence one
// dataset per setting, DATASET/<setting_id>.
func MergeGroups(tasks []Task) (settings []string, shards map[string][]string) {
	shards = map[string][]string{}
	for _, t := range tasks {
		if t.Expected != nil && t.Expected.State == StateFailed {
			continue
		}
		if _, ok := shards[t.SettingID]; !ok {
			settings = append(settings, t.SettingID)
		}
		shards[t.SettingID] = append(shards[t.SettingID], t.ID)
	}
	return settings, shards
}

// mergeGroup is one first-level merge of a tree: shards of one setting
// into OUT/layout.MergeGroupPath(setting, index).
type mergeGroup struct {
	setting string
	index   int
	shards  []string
}

// mergeTree splits each setting's shards into groups of at most size
// (consecutive, in task order) when it has more than size; a setting at or
// under it, or size <= 0, is merged in one step.
func mergeTree(tasks []Task, size int) (settings []string, shards map[string][]string, groups []mergeGroup) {
	settings, shards = MergeGroups(tasks)
	if size <= 0 {
		return settings, shards, nil
	}
	for _, s := range settings {
		ids := shards[s]
		if len(ids) <= size {
			continue
		}
		n := (len(ids) + size - 1) / size
		for g := range n {
			// Even groups: ceil would leave the last one small.
			lo, hi := g*len(ids)/n, (g+1)*len(ids)/n
			groups = append(groups, mergeGroup{setting: s, index: g, shards: ids[lo:hi]})
		}
	}
	return settings, shards, groups
}

// SlurmGroupsScript is the sbatch script of the first level of a tree
// merge: array task i merges group i; "" when no setting needs a tree. It
// is submitted with --dependency=afterok:<rerun job>, and the merge job
// then depends on it.
func SlurmGroupsScript(campaignID string, tasks []Task, o ScriptOptions) (string, error) {
	if err := o.CheckSlurmValues(); err != nil {
		return "", err
	}
	_, _, groups := mergeTree(tasks, o.MergeGroupSize)
	if len(groups) == 0 {
		return "", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n# ceres-export campaign %s: merge %d groups of at most %d shards side by side, the first level of the merge.\n", campaignID, len(groups), o.MergeGroupSize)
	sbatchLine(&b, "--job-name", jobName(campaignID, "-merge-groups"))
	sbatchLine(&b, "--array", fmt.Sprintf("0-%d", len(groups)-1))
	sbatchLine(&b, "--output", slurmFilename(o.Out+"/"+layout.SlurmLogsDir+"/")+"merge-groups-%A_%a.out")
	sbatchCommon(&b, o)
	b.WriteString(requeueLines)
	b.WriteString("set -euo pipefail\ncase \"$SLURM_ARRAY_TASK_ID\" in\n")
	for i, g := range groups {
		dst := o.Out + "/" + layout.MergeGroupPath(g.setting, g.index)
		args := []string{o.Binary, "merge"}
		for _, id := range g.shards {
			args = append(args, o.Out+"/"+id)
		}
		args = append(append(args, "-o", dst, "--replace"), o.mergeWaitArgs()...)
		fmt.Fprintf(&b, "%d)\n\t%s\n\texec %s\n\t;;\n", i, shellJoin([]string{"mkdir", "-p", path.Dir(dst)}), shellJoin(args))
	}
	b.WriteString("*)\n\techo \"no merge group $SLURM_ARRAY_TASK_ID\" >&2\n\texit 2\n\t;;\nesac\n")
	return b.String(), nil
}

// SlurmMergeScript is the sbatch script of the merge job, to be submitted
// with --dependency=afterok:<rerun job, or the groups' job array>
// --kill-on-invalid-dep=yes. A setting merged in a tree joins its groups'
// datasets, which are removed once every dataset is written.
func SlurmMergeScript(campaignID string, tasks []Task, o ScriptOptions) (string, error) {
	if err := o.CheckSlurmValues(); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n# ceres-export campaign %s: merge the array's shards, one dataset per setting.\n", campaignID)
	sbatchLine(&b, "--job-name", jobName(campaignID, "-merge"))
	sbatchLine(&b, "--output", slurmFilename(o.Out+"/"+layout.SlurmLogsDir+"/")+"merge-%j.out")
	sbatchCommon(&b, o)
	b.WriteString(requeueLines)
	b.WriteString("set -euo pipefail\n")
	b.WriteString(shellJoin([]string{"mkdir", "-p", o.Merge}) + "\n")
	settings, shards, groups := mergeTree(tasks, o.MergeGroupSize)
	inputs := map[string][]string{}
	for _, g := range groups {
		inputs[g.setting] = append(inputs[g.setting], o.Out+"/"+layout.MergeGroupPath(g.setting, g.index))
	}
	for _, s := range settings {
		args := []string{o.Binary, "merge"}
		if in, ok := inputs[s]; ok {
			args = append(args, in...)
		} else {
			for _, id := range shards[s] {
				args = append(args, o.Out+"/"+id)
			}
		}
		args = append(append(args, "-o", o.Merge+"/"+s, "--replace"), o.mergeWaitArgs()...)
		b.WriteString(shellJoin(args) + "\n")
	}
	if len(groups) > 0 {
		b.WriteString(shellJoin([]string{"rm", "-rf", o.Out + "/" + layout.MergeGroupsDir}) + "\n")
	}
	return b.String(), nil
}

func sbatchCommon(b *strings.Builder, o ScriptOptions) {
	if o.CPUsPerTask > 0 {
		sbatchLine(b, "--cpus-per-task", strconv.Itoa(o.CPUsPerTask))
	}
	if o.Partition != "" {
		sbatchLine(b, "--partition", o.Partition)
	}
	if o.Time != "" {
		sbatchLine(b, "--time", o.Time)
	}
}

// sbatchRequest writes the array tasks' reservation from the manifest's
// execution profiles (--cpus-per-task given on the command line wins over
// cpu_millis); SLURM counts whole CPUs and MB of 2^20 bytes. The merge
// job reads and copies, and asks for none of it.
func sbatchRequest(b *strings.Builder, o ScriptOptions) {
	if cpus := o.Request.CPUs(); o.CPUsPerTask == 0 && cpus > 0 {
		sbatchLine(b, "--cpus-per-task", strconv.Itoa(cpus))
	}
	if o.Request.MemoryMB > 0 {
		sbatchLine(b, "--mem", strconv.Itoa(o.Request.MemoryMB)+"M")
	}
	if o.Request.DiskMB > 0 {
		sbatchLine(b, "--tmp", strconv.Itoa(o.Request.DiskMB)+"M")
	}
	if o.Exclusive {
		b.WriteString("#SBATCH --exclusive\n")
	}
}

// jobName is the campaign's job name for SLURM and Kubernetes: a DNS-1123
// label, as a Kubernetes Job's name must be for its pods' hostnames
// (lower-case letters, digits and '-', starting and ending with a letter or
// digit, at most 63 characters; 50 here, leaving room for the suffix and an
// index). A normalised campaign id may hold '.' and '_' ("a..b_c").
func jobName(campaignID, suffix string) string {
	var b strings.Builder
	for _, r := range "ceres-" + campaignID {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else if s := b.String(); !strings.HasSuffix(s, "-") {
			b.WriteByte('-')
		}
	}
	name := b.String()
	if len(name) > 50 {
		name = name[:50]
	}
	return strings.Trim(name, "-") + suffix
}

// shellJoin quotes each argument for a POSIX shell.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
		}) < 0 {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// KubernetesOptions describe the Indexed Job of one campaign.
type KubernetesOptions struct {
	ScriptOptions
	// Image holds ceres-export (Binary is its path inside the image).
	Image string
	// Namespace of the Job; "" leaves it to kubectl.
	Namespace string
	// Claim is a PersistentVolumeClaim mounted at MountPath, holding the
	// manifest, the sessions and OUT; both are required.
	Claim, MountPath string
	// ActiveDeadline bounds the whole Job's run; 0 means
	// DefaultActiveDeadline.
	ActiveDeadline time.Duration
	// TTLAfterFinished is how long a finished Job and its pods stay; 0
	// means DefaultTTLAfterFinished.
	TTLAfterFinished time.Duration
	// MaxFailedIndexes fails the Job once more indexes than this failed;
	// 0 means half the completions, rounded up.
	MaxFailedIndexes int
}

// checkRequest refuses what the command line asked of a Job of tasks
// tasks that none can be: more completions than tasks (an ArrayCount of 0
// is one per task), negative bounds.
func (o *KubernetesOptions) checkRequest(tasks int) error {
	if o.ArrayCount <= 0 {
		o.ArrayCount = tasks
	}
	switch {
	case o.ArrayCount > tasks:
		return fmt.Errorf("--array-count %d: only %d tasks are selected", o.ArrayCount, tasks)
	case o.MaxFailedIndexes < 0 || o.ActiveDeadline < 0 || o.TTLAfterFinished < 0:
		return fmt.Errorf("--max-failed-indexes %d, --active-deadline %v, --ttl-after-finished %v: none may be negative", o.MaxFailedIndexes, o.ActiveDeadline, o.TTLAfterFinished)
	}
	return nil
}

// ImageUser is the release image's user and group id (release/image.sh).
const ImageUser = 65532

// Defaults of a campaign's Kubernetes Job (docs/campaigns.md says what an
// operator gets).
const (
	// DefaultActiveDeadline bounds a Job's whole run: a campaign still
	// running after a day is stuck, not slow (an index's pods wait for
	// each other at most --wait-busy, an hour).
	DefaultActiveDeadline = 24 * time.Hour
	// DefaultTTLAfterFinished keeps a finished Job and its pods' logs a
	// week; the results are in OUT, not in the Job.
	DefaultTTLAfterFinished = 7 * 24 * time.Hour
	// maxIndexedCompletions is the API server's bound on completions with
	// backoffLimitPerIndex.
	maxIndexedCompletions = 100000
)

// DefaultPodResources is what a pod requests when no task declares an
// execution_profile: one CPU and 2 GiB, the memory limited at the
// request. A pod that requests nothing is BestEffort, the first evicted
// under pressure and bounded by nothing; 2 GiB holds one task's export
// (about 300 MB per 720p SVT-AV1 camera, docs/video.md) with room for
// several cameras. The pod then runs one task at a time, as with a
// declared request.
var DefaultPodResources = Resources{CPUMillis: 1000, MemoryMB: 2048}

// KubernetesJob is an Indexed Job (batch/v1) for the campaign's tasks as
// JSON, which kubectl apply -f takes as it takes YAML: completion index i
// runs share i (JOB_COMPLETION_INDEX), every index once, and a failed
// index is retried on its own (backoffLimitPerIndex) without redoing the
// others'. The pods request what the tasks declare (ForTasks), else
// DefaultPodResources; a pod lost to a disruption (a node drained, lost
// or shut down, a pod evicted or preempted) is ignored whatever its exit
// status, and an index whose batch exits 1 or 2 (a task's failure stands
// under its retry policy, or the manifest is wrong) is not retried, since
// a new pod would fail the same way. The pods run as the restricted Pod
// Security Standard asks (non-root, no capabilities, no privilege
// escalation, RuntimeDefault seccomp, a read-only root file system: the
// tool writes only under OUT), and read and write only the claim: the
// manifest, every session and export file and OUT must be absolute paths
// under MountPath.
func KubernetesJob(campaignID string, tasks []Task, o KubernetesOptions) ([]byte, error) {
	o.ScriptOptions = o.ForTasks(tasks)
	if o.Exclusive {
		return nil, errors.New(`execution_profile placement "exclusive": a Kubernetes Job has no whole-node placement of its own; use shared placement with resources that fill a node, or SLURM`)
	}
	if !o.Request.Any() {
		o.Request = DefaultPodResources
		if o.Jobs == 0 {
			o.Jobs = 1
		}
	}
	if err := o.checkPaths(tasks); err != nil {
		return nil, err
	}
	if err := o.checkRequest(len(tasks)); err != nil {
		return nil, err
	}
	if o.ArrayCount < 1 || o.ArrayCount > maxIndexedCompletions {
		return nil, fmt.Errorf("array count %d: want 1 to %d (Kubernetes' bound on an Indexed Job's completions with a per-index backoff)", o.ArrayCount, maxIndexedCompletions)
	}
	maxFailed := o.MaxFailedIndexes
	if maxFailed == 0 {
		maxFailed = (o.ArrayCount + 1) / 2
	}
	if maxFailed < 1 || maxFailed > o.ArrayCount {
		return nil, fmt.Errorf("max failed indexes %d: want 1 to %d (the completions)", maxFailed, o.ArrayCount)
	}
	deadline, ttl := cmp.Or(o.ActiveDeadline, DefaultActiveDeadline), cmp.Or(o.TTLAfterFinished, DefaultTTLAfterFinished)
	if deadline < time.Second || ttl < 0 {
		return nil, fmt.Errorf("active deadline %v, time to live %v: want at least a second, and not negative", deadline, ttl)
	}
	container := map[string]any{
		"name":    "ceres-export",
		"image":   o.Image,
		"command": []string{o.Binary},
		"args":    o.ScriptOptions.batchArgs()[1:],
		"securityContext": map[string]any{
			"readOnlyRootFilesystem":   true,
			"allowPrivilegeEscalation": false,
			"privileged":               false,
			"capabilities":             map[string]any{"drop": []string{"ALL"}},
		},
		"volumeMounts": []any{map[string]any{"name": "campaign", "mountPath": o.MountPath}},
	}
	if res := o.kubernetesResources(); res != nil {
		container["resources"] = res
	}
	pod := map[string]any{
		"restartPolicy":                "Never",
		"automountServiceAccountToken": false,
		"securityContext": map[string]any{
			"runAsNonRoot":   true,
			"runAsUser":      ImageUser,
			"runAsGroup":     ImageUser,
			"seccompProfile": map[string]any{"type": "RuntimeDefault"},
		},
		"containers": []any{container},
		"volumes":    []any{map[string]any{"name": "campaign", "persistentVolumeClaim": map[string]any{"claimName": o.Claim}}},
	}
	meta := map[string]any{"name": jobName(campaignID, ""), "labels": map[string]any{"app.kubernetes.io/name": "ceres-export"}}
	if o.Namespace != "" {
		meta["namespace"] = o.Namespace
	}
	backoff := 1
	if o.MaxAttempts > 0 {
		backoff = o.MaxAttempts - 1
	}
	job := map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "Job",
		"metadata":   meta,
		"spec": map[string]any{
			"completionMode":       "Indexed",
			"completions":          o.ArrayCount,
			"parallelism":          o.ArrayCount,
			"backoffLimitPerIndex": backoff,
			// A pod being stopped is replaced only once it has
			// terminated, so that an index never has two writers (the
			// default with a podFailurePolicy, said here).
			"podReplacementPolicy":    "Failed",
			"maxFailedIndexes":        maxFailed,
			"activeDeadlineSeconds":   int64(deadline / time.Second),
			"ttlSecondsAfterFinished": int64(ttl / time.Second),
			// First match wins: a disruption is ignored whatever its
			// exit status; so is a pod stopped by SIGTERM with no
			// disruption said (deleted by hand), which a batch tells by
			// its status, 143, from a failure that must count (4, a full
			// disk); 1 and 2 fail the index, which a new pod would fail
			// the same way.
			"podFailurePolicy": map[string]any{"rules": []any{
				map[string]any{"action": "Ignore", "onPodConditions": []any{map[string]any{"type": "DisruptionTarget"}}},
				map[string]any{"action": "Ignore", "onExitCodes": map[string]any{
					"containerName": "ceres-export", "operator": "In", "values": []int{exitSIGTERM}}},
				map[string]any{"action": "FailIndex", "onExitCodes": map[string]any{
					"containerName": "ceres-export", "operator": "In", "values": []int{exitFindings, exitUsage}}},
			}},
			"template": map[string]any{"spec": pod},
		},
	}
	b, err := json.MarshalIndent(job, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// The exit statuses a Job's podFailurePolicy names (internal/exitstatus
// holds them; campaign stays free of what that package imports, and a test
// there holds these to its table).
const (
	exitFindings = 1   // the input is not sound: a new pod fails the same way
	exitUsage    = 2   // the manifest or an input is refused: likewise
	exitSIGTERM  = 143 // stopped by SIGTERM: a pod deleted by hand
)

// checkPaths refuses a Job whose pods could not find their inputs or
// OUT: the pods see the claim at MountPath and nothing else of the
// campaign, and start in the image's working directory, so every path
// they are given must be absolute and under MountPath.
func (o KubernetesOptions) checkPaths(tasks []Task) error {
	if o.Claim == "" || o.MountPath == "" {
		return errors.New("--claim and --mount: a claim and its mount are needed: the pods read the manifest and the sessions and write OUT on a PersistentVolumeClaim, their image's own file system being read-only")
	}
	if !filepath.IsAbs(o.MountPath) {
		return fmt.Errorf("mount %q is not an absolute path", o.MountPath)
	}
	under := func(what, p string) error {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("%s %q is not an absolute path: a pod starts in its image's working directory", what, p)
		}
		if rel, err := filepath.Rel(filepath.Clean(o.MountPath), filepath.Clean(p)); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return fmt.Errorf("%s %s is not under the claim's mount %s: the pods see only the claim", what, p, o.MountPath)
		}
		return nil
	}
	if err := under("manifest", o.Manifest); err != nil {
		return err
	}
	if err := under("OUT", o.Out); err != nil {
		return err
	}
	for _, t := range tasks {
		if err := under("session", t.SessionDir); err != nil {
			return fmt.Errorf("%s: %w", t.ID, err)
		}
		for _, f := range t.Export.Files(t.BaseDir) {
			if err := under("export file", f); err != nil {
				return fmt.Errorf("%s: %w", t.ID, err)
			}
		}
	}
	return nil
}

// kubernetesResources are the container's requests and limits, nil when
// nothing is requested. --cpus-per-task wins over cpu_millis. Memory and
// ephemeral storage are limited at their request (a pod past them is
// evicted, not the node); CPU is requested only, since a CPU limit would
// throttle the encoder's threads below what the node has free.
func (o KubernetesOptions) kubernetesResources() map[string]any {
	requests, limits := map[string]any{}, map[string]any{}
	switch {
	case o.CPUsPerTask > 0:
		requests["cpu"] = strconv.Itoa(o.CPUsPerTask)
	case o.Request.CPUMillis > 0:
		requests["cpu"] = strconv.Itoa(o.Request.CPUMillis) + "m"
	}
	if o.Request.MemoryMB > 0 {
		requests["memory"] = strconv.Itoa(o.Request.MemoryMB) + "Mi"
		limits["memory"] = requests["memory"]
	}
	if o.Request.DiskMB > 0 {
		requests["ephemeral-storage"] = strconv.Itoa(o.Request.DiskMB) + "Mi"
		limits["ephemeral-storage"] = requests["ephemeral-storage"]
	}
	if len(requests) == 0 {
		return nil
	}
	res := map[string]any{"requests": requests}
	if len(limits) > 0 {
		res["limits"] = limits
	}
	return res
}

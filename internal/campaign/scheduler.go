package campaign

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

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
}

// batchArgs is the batch command line every array task runs.
func (o ScriptOptions) batchArgs() []string {
	args := []string{o.Binary, "batch", o.Manifest, "-o", o.Out, "--array-count", strconv.Itoa(o.ArrayCount)}
	if o.Jobs > 0 {
		args = append(args, "--jobs", strconv.Itoa(o.Jobs))
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
	b.WriteString("set -euo pipefail\nexec " + shellJoin(o.batchArgs()) + "\n")
	return b.String(), nil
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

// SlurmMergeScript is the sbatch script of the merge job, to be submitted
// with --dependency=afterok:<array job> --kill-on-invalid-dep=yes.
func SlurmMergeScript(campaignID string, tasks []Task, o ScriptOptions) (string, error) {
	if err := o.CheckSlurmValues(); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n# ceres-export campaign %s: merge the array's shards, one dataset per setting.\n", campaignID)
	sbatchLine(&b, "--job-name", jobName(campaignID, "-merge"))
	sbatchLine(&b, "--output", slurmFilename(o.Out+"/"+layout.SlurmLogsDir+"/")+"merge-%j.out")
	sbatchCommon(&b, o)
	b.WriteString("set -euo pipefail\n")
	b.WriteString(shellJoin([]string{"mkdir", "-p", o.Merge}) + "\n")
	settings, shards := MergeGroups(tasks)
	for _, s := range settings {
		args := []string{o.Binary, "merge"}
		for _, id := range shards[s] {
			args = append(args, o.Out+"/"+id)
		}
		args = append(args, "-o", o.Merge+"/"+s, "--replace")
		b.WriteString(shellJoin(args) + "\n")
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
	// manifest, the sessions and OUT; "" mounts nothing.
	Claim, MountPath string
}

// KubernetesJob is an Indexed Job (batch/v1) for the campaign as JSON,
// which kubectl apply -f takes as it takes YAML: completion index i runs
// share i (JOB_COMPLETION_INDEX), every index once, and a failed index is
// retried on its own (backoffLimitPerIndex) without redoing the others'.
func KubernetesJob(campaignID string, o KubernetesOptions) ([]byte, error) {
	container := map[string]any{
		"name":    "ceres-export",
		"image":   o.Image,
		"command": []string{o.Binary},
		"args":    o.batchArgs()[1:],
	}
	if o.CPUsPerTask > 0 {
		container["resources"] = map[string]any{"requests": map[string]any{"cpu": strconv.Itoa(o.CPUsPerTask)}}
	}
	pod := map[string]any{"restartPolicy": "Never", "containers": []any{container}}
	if o.Claim != "" {
		container["volumeMounts"] = []any{map[string]any{"name": "campaign", "mountPath": o.MountPath}}
		pod["volumes"] = []any{map[string]any{"name": "campaign", "persistentVolumeClaim": map[string]any{"claimName": o.Claim}}}
	}
	meta := map[string]any{"name": jobName(campaignID, ""), "labels": map[string]any{"app.kubernetes.io/name": "ceres-export"}}
	if o.Namespace != "" {
		meta["namespace"] = o.Namespace
	}
	job := map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "Job",
		"metadata":   meta,
		"spec": map[string]any{
			"completionMode":       "Indexed",
			"completions":          o.ArrayCount,
			"parallelism":          o.ArrayCount,
			"backoffLimitPerIndex": 1,
			"template":             map[string]any{"spec": pod},
		},
	}
	b, err := json.MarshalIndent(job, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// sortedIDs returns the tasks' ids sorted (tests, status).
func sortedIDs(tasks []Task) []string {
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ID
	}
	slices.Sort(ids)
	return ids
}

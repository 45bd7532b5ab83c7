package campaign

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// kubeManifest parses doc as the manifest /campaign/c.json, so that its
// relative sessions lie under the claim mounted at /campaign.
func kubeManifest(t *testing.T, doc string) []Task {
	t.Helper()
	m, err := Parse("/campaign/c.json", []byte(doc), false)
	if err != nil {
		t.Fatal(err)
	}
	return m.Tasks
}

// underCampaign puts tasks' relative sessions under /campaign, where the
// tests' claims are mounted.
func underCampaign(tasks []Task) []Task {
	for i := range tasks {
		if !filepath.IsAbs(tasks[i].SessionDir) {
			tasks[i].SessionDir = filepath.Join("/campaign", tasks[i].SessionDir)
		}
	}
	return tasks
}

// plainTasks declare no execution_profile and no retry policy.
const plainTasks = `{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}},
	"cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "sessions/a"},
		{"case_id": "b", "setting_id": "s", "run_id": "1", "session": "/campaign/sessions/b"}]}`

func kubeOptions() KubernetesOptions {
	return KubernetesOptions{
		ScriptOptions: ScriptOptions{Binary: "ceres-export", Manifest: "/campaign/c.json", Out: "/campaign/out", ArrayCount: 2},
		Image:         "registry.example/ceres-export:0.1", Claim: "campaign-pvc", MountPath: "/campaign",
	}
}

// strictJob generates the Job and decodes it strictly into batch/v1.
func strictJob(t *testing.T, tasks []Task, o KubernetesOptions) *batchv1.Job {
	t.Helper()
	b, err := KubernetesJob("c", tasks, o)
	if err != nil {
		t.Fatal(err)
	}
	job, err := decodeJob(b)
	if err != nil {
		t.Fatalf("strict decode into batch/v1 Job: %v\n%s", err, b)
	}
	return job
}

// The pods run as the restricted Pod Security Standard asks: not as root
// (the release image's user 65532), no privilege escalation, no
// capabilities, the runtime's seccomp profile, and a read-only root file
// system, the tool writing nothing but OUT (its staging and video parts
// lie beside the output, on the claim).
func TestKubernetesJobSecurityContext(t *testing.T) {
	job := strictJob(t, kubeManifest(t, plainTasks), kubeOptions())
	pod := job.Spec.Template.Spec
	ps := pod.SecurityContext
	if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.RunAsUser == nil || *ps.RunAsUser != ImageUser ||
		ps.RunAsGroup == nil || *ps.RunAsGroup != ImageUser ||
		ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext %+v, want runAsNonRoot, user and group %d, seccomp RuntimeDefault", ps, ImageUser)
	}
	cs := pod.Containers[0].SecurityContext
	switch {
	case cs == nil:
		t.Fatal("the container has no securityContext")
	case cs.ReadOnlyRootFilesystem == nil || !*cs.ReadOnlyRootFilesystem:
		t.Errorf("readOnlyRootFilesystem %v, want true", cs.ReadOnlyRootFilesystem)
	case cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation:
		t.Errorf("allowPrivilegeEscalation %v, want false", cs.AllowPrivilegeEscalation)
	case cs.Capabilities == nil || len(cs.Capabilities.Drop) != 1 || cs.Capabilities.Drop[0] != "ALL" || len(cs.Capabilities.Add) != 0:
		t.Errorf("capabilities %+v, want drop ALL", cs.Capabilities)
	case cs.Privileged != nil && *cs.Privileged:
		t.Error("privileged")
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("automountServiceAccountToken %v, want false: the pods never call the API", pod.AutomountServiceAccountToken)
	}
}

// A Job ends: a deadline for the whole Job, removal some time after it
// finished, and no more indexes started once so many failed that every
// pod meets the same fault. Defaults, and the values given.
func TestKubernetesJobLifetime(t *testing.T) {
	for _, c := range []struct {
		name                 string
		count                int
		deadline, ttl        time.Duration
		maxFailed            int
		wantDeadline, wantTT int64
		wantMaxFailed        int32
	}{
		{"defaults, 2 indexes", 2, 0, 0, 0, 86400, 7 * 86400, 1},
		{"defaults, 9 indexes", 9, 0, 0, 0, 86400, 7 * 86400, 5},
		{"given", 2, 90 * time.Minute, 2 * time.Hour, 2, 5400, 7200, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			var cases []string
			for i := range c.count {
				cases = append(cases, `{"case_id": "a`+string(rune('0'+i))+`", "setting_id": "s", "run_id": "1", "session": "x"}`)
			}
			tasks := kubeManifest(t, `{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}}, "cases": [`+strings.Join(cases, ",")+`]}`)
			o := kubeOptions()
			o.ArrayCount, o.ActiveDeadline, o.TTLAfterFinished, o.MaxFailedIndexes = c.count, c.deadline, c.ttl, c.maxFailed
			spec := strictJob(t, tasks, o).Spec
			if spec.ActiveDeadlineSeconds == nil || *spec.ActiveDeadlineSeconds != c.wantDeadline {
				t.Errorf("activeDeadlineSeconds %v, want %d", spec.ActiveDeadlineSeconds, c.wantDeadline)
			}
			if spec.TTLSecondsAfterFinished == nil || int64(*spec.TTLSecondsAfterFinished) != c.wantTT {
				t.Errorf("ttlSecondsAfterFinished %v, want %d", spec.TTLSecondsAfterFinished, c.wantTT)
			}
			// The API server takes maxFailedIndexes only beside
			// backoffLimitPerIndex, and at most completions.
			if spec.MaxFailedIndexes == nil || *spec.MaxFailedIndexes != c.wantMaxFailed || spec.BackoffLimitPerIndex == nil ||
				*spec.MaxFailedIndexes > *spec.Completions {
				t.Errorf("maxFailedIndexes %v (backoffLimitPerIndex %v, completions %v), want %d", spec.MaxFailedIndexes, spec.BackoffLimitPerIndex, spec.Completions, c.wantMaxFailed)
			}
		})
	}
	o := kubeOptions()
	o.MaxFailedIndexes = 3
	if _, err := KubernetesJob("c", kubeManifest(t, plainTasks), o); err == nil || !strings.Contains(err.Error(), "max failed indexes 3: want 1 to 2") {
		t.Errorf("maxFailedIndexes past completions: %v", err)
	}
}

// Without an execution_profile a pod still requests and is limited to
// documented defaults (no BestEffort pods, first evicted and unbounded),
// and runs one task at a time, so that the request is what a task gets.
func TestKubernetesJobDefaultResources(t *testing.T) {
	c := strictJob(t, kubeManifest(t, plainTasks), kubeOptions()).Spec.Template.Spec.Containers[0]
	for _, q := range []struct {
		list corev1.ResourceList
		name corev1.ResourceName
		want string
	}{
		{c.Resources.Requests, corev1.ResourceCPU, "1"},
		{c.Resources.Requests, corev1.ResourceMemory, "2048Mi"},
		{c.Resources.Limits, corev1.ResourceMemory, "2048Mi"},
	} {
		got, ok := q.list[q.name]
		if !ok || got.Cmp(resource.MustParse(q.want)) != 0 {
			t.Errorf("%s = %v, want %s (resources %+v)", q.name, got.String(), q.want, c.Resources)
		}
	}
	if !strings.Contains(strings.Join(c.Args, " "), "--jobs 1") {
		t.Errorf("args %q: want --jobs 1 with the default request", c.Args)
	}
}

// A pod lost to a disruption (drained, evicted, preempted, its node shut
// down or lost) is ignored whatever its exit status, so the first rule
// that matches it must be the disruption's: a failure that stands (1) or
// a manifest error (2) found while stopping does not make it the index's
// fault. A pod stopped by SIGTERM without a disruption (deleted by hand)
// exits 143 and is ignored too; an I/O failure (4) counts.
func TestKubernetesJobDisruptionRuleFirst(t *testing.T) {
	spec := strictJob(t, kubeManifest(t, plainTasks), kubeOptions()).Spec
	// The replacement of a pod being stopped starts only once that pod
	// has terminated: never two writers of one index's tasks.
	if spec.PodReplacementPolicy == nil || *spec.PodReplacementPolicy != batchv1.Failed {
		t.Errorf("podReplacementPolicy %v, want Failed", spec.PodReplacementPolicy)
	}
	rules := spec.PodFailurePolicy.Rules
	if len(rules) != 3 || rules[0].Action != batchv1.PodFailurePolicyActionIgnore || len(rules[0].OnPodConditions) != 1 ||
		rules[0].OnPodConditions[0].Type != corev1.DisruptionTarget {
		t.Fatalf("rules %+v: want Ignore on DisruptionTarget first, then Ignore on 143, then FailIndex on exit 1 and 2", rules)
	}
	// What each exit status does, as the Job controller matches it: the
	// first rule whose exit codes hold it.
	action := func(code int32) batchv1.PodFailurePolicyAction {
		for _, r := range rules {
			if r.OnExitCodes != nil && r.OnExitCodes.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && slices.Contains(r.OnExitCodes.Values, code) {
				return r.Action
			}
		}
		return batchv1.PodFailurePolicyActionCount
	}
	for code, want := range map[int32]batchv1.PodFailurePolicyAction{
		1:   batchv1.PodFailurePolicyActionFailIndex,
		2:   batchv1.PodFailurePolicyActionFailIndex,
		3:   batchv1.PodFailurePolicyActionCount,
		4:   batchv1.PodFailurePolicyActionCount,
		137: batchv1.PodFailurePolicyActionCount, // SIGKILL: out of memory
		143: batchv1.PodFailurePolicyActionIgnore,
	} {
		if got := action(code); got != want {
			t.Errorf("exit %d: %s, want %s", code, got, want)
		}
	}
}

// The pods see only the claim: a manifest, session, export file or OUT
// outside --mount, or a path that is not absolute (a pod starts in the
// image's working directory), is refused, naming it.
func TestKubernetesJobPathsUnderMount(t *testing.T) {
	withProfile := `{"schema_version": 1, "campaign_id": "c", "settings": {"s": {"export": {"profile": "/etc/profile.yaml"}}},
		"cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x"}]}`
	for _, c := range []struct {
		name string
		doc  string
		edit func(*KubernetesOptions)
		want string
	}{
		{"manifest outside", plainTasks, func(o *KubernetesOptions) { o.Manifest = "/home/lab/c.json" }, "manifest /home/lab/c.json is not under the claim's mount /campaign"},
		{"OUT outside", plainTasks, func(o *KubernetesOptions) { o.Out = "/campaignout" }, "OUT /campaignout is not under the claim's mount /campaign"},
		{"OUT relative", plainTasks, func(o *KubernetesOptions) { o.Out = "out" }, `OUT "out" is not an absolute path`},
		{"session outside", `{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}},
			"cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "../data/a"}]}`, nil, "c__a__s__run-1: session /data/a is not under the claim's mount /campaign"},
		{"profile outside", withProfile, nil, "c__a__s__run-1: export file /etc/profile.yaml is not under the claim's mount /campaign"},
		{"mount relative", plainTasks, func(o *KubernetesOptions) { o.MountPath = "campaign" }, `mount "campaign" is not an absolute path`},
		{"no claim", plainTasks, func(o *KubernetesOptions) { o.Claim, o.MountPath = "", "" }, "a claim and its mount are needed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := kubeOptions()
			if c.edit != nil {
				c.edit(&o)
			}
			_, err := KubernetesJob("c", kubeManifest(t, c.doc), o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
	// The mount itself and paths below it are accepted.
	o := kubeOptions()
	o.Out = "/campaign"
	if _, err := KubernetesJob("c", kubeManifest(t, plainTasks), o); err != nil {
		t.Errorf("OUT at the mount: %v", err)
	}
}

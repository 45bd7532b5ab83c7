package campaign

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Loom's precedence: extensions campaign < defaults < defaults.payload <
// case < case.payload, by top-level key; execution_profile defaults <
// defaults.payload < case < case.payload, by resource field; retry_policy
// is one contract, a case's replaces the default's whole.
func TestExecutionPrecedence(t *testing.T) {
	m := mustParse(t, `{"schema_version": 1, "campaign_id": "c",
		"extensions": {"k1": "campaign", "k2": "campaign", "k3": "campaign", "k4": "campaign", "k5": "campaign"},
		"defaults": {
			"extensions": {"k2": "defaults", "k3": "defaults", "k4": "defaults", "k5": "defaults"},
			"execution_profile": {"resources": {"cpu_millis": 750, "memory_mb": 1536}},
			"retry_policy": {"max_attempts": 3, "retry_categories": ["io_error", "lost"]},
			"payload": {"extensions": {"k3": "defaults.payload", "k4": "defaults.payload", "k5": "defaults.payload"},
				"execution_profile": {"resources": {"disk_mb": 2048}}}
		},
		"settings": {"s": {}},
		"cases": [
			{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x",
			 "extensions": {"k4": "case", "k5": "case"},
			 "execution_profile": {"resources": {"memory_mb": 4096}},
			 "retry_policy": {"max_attempts": 1},
			 "payload": {"extensions": {"k5": {"nested": "case.payload"}}, "execution_profile": {"placement": "exclusive"}}},
			{"case_id": "b", "setting_id": "s", "run_id": "1", "session": "x"}
		]}`)
	a, b := m.Tasks[0], m.Tasks[1]
	want := map[string]string{"k1": `"campaign"`, "k2": `"defaults"`, "k3": `"defaults.payload"`, "k4": `"case"`, "k5": `{"nested":"case.payload"}`}
	for k, v := range want {
		if got := string(a.Extensions[k]); got != v {
			t.Errorf("extension %s = %s, want %s", k, got, v)
		}
	}
	if got, want := a.Execution, (ExecutionProfile{Placement: PlacementExclusive, Resources: Resources{CPUMillis: 750, MemoryMB: 4096, DiskMB: 2048}}); got != want {
		t.Errorf("case a's execution profile %+v, want %+v", got, want)
	}
	if got, want := b.Execution, (ExecutionProfile{Placement: PlacementShared, Resources: Resources{CPUMillis: 750, MemoryMB: 1536, DiskMB: 2048}}); got != want {
		t.Errorf("case b's execution profile %+v, want %+v", got, want)
	}
	if got := a.Policy(); got.MaxAttempts != 1 || len(got.RetryCategories) != 0 {
		t.Errorf("case a's policy %+v, want its own whole (max_attempts 1, no category)", got)
	}
	if got := b.Policy(); got.MaxAttempts != 3 || !slices.Equal(got.RetryCategories, []string{CategoryIOError, CategoryLost}) {
		t.Errorf("case b's policy %+v, want the default's", got)
	}
	// Without a retry_policy anywhere, the default one holds.
	m = mustParse(t, `{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}},
		"cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x"}]}`)
	if got := m.Tasks[0].Policy(); !reflect.DeepEqual(got, DefaultRetryPolicy) {
		t.Errorf("policy %+v, want the default %+v", got, DefaultRetryPolicy)
	}
}

func TestExecutionJSONL(t *testing.T) {
	m, err := Parse("c.jsonl", []byte(`{"campaign_id": "c", "case_id": "a", "setting_id": "s", "run_id": "1", "session": "x", `+
		`"extensions": {"k": 1, "j": 1}, "payload": {"extensions": {"k": 2}, "execution_profile": {"resources": {"memory_mb": 512}}}, `+
		`"execution_profile": {"resources": {"cpu_millis": 2000, "memory_mb": 256}}, "retry_policy": {"max_attempts": 2, "retry_categories": ["lost"]}}`), true)
	if err != nil {
		t.Fatal(err)
	}
	task := m.Tasks[0]
	if string(task.Extensions["k"]) != "2" || string(task.Extensions["j"]) != "1" {
		t.Errorf("extensions %s", task.Extensions)
	}
	if task.Execution.Resources != (Resources{CPUMillis: 2000, MemoryMB: 512}) {
		t.Errorf("resources %+v", task.Execution.Resources)
	}
	if p := task.Policy(); p.MaxAttempts != 2 || !slices.Equal(p.RetryCategories, []string{CategoryLost}) {
		t.Errorf("policy %+v", p)
	}
}

// Every error of the new fields names its JSON path and what was expected.
func TestExecutionErrors(t *testing.T) {
	wrap := func(caseExtra string) string {
		return `{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}}, "cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x", ` + caseExtra + `}]}`
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"gpu", wrap(`"execution_profile": {"resources": {"gpu_count": 1}}`), `campaign.json: cases[0].execution_profile.resources.gpu_count: 1: ceres-export uses no GPU; want 0`},
		{"negative", wrap(`"execution_profile": {"resources": {"memory_mb": -1}}`), `campaign.json: cases[0].execution_profile.resources.memory_mb: -1: want 0 or more`},
		{"not an integer", wrap(`"execution_profile": {"resources": {"cpu_millis": "750m"}}`), `campaign.json: cases[0].execution_profile.resources.cpu_millis: want an integer, got a string`},
		{"unknown resource", wrap(`"execution_profile": {"resources": {"cpus": 1}}`), `campaign.json: cases[0].execution_profile.resources.cpus: unknown field (want one of cpu_millis, memory_mb, disk_mb, gpu_count)`},
		{"placement", wrap(`"execution_profile": {"placement": "dedicated"}`), `campaign.json: cases[0].execution_profile.placement: "dedicated": want shared or exclusive`},
		{"no max_attempts", wrap(`"retry_policy": {"retry_categories": []}`), `campaign.json: cases[0].retry_policy.max_attempts: required field missing (the attempts allowed, the first included)`},
		{"max_attempts 0", wrap(`"retry_policy": {"max_attempts": 0}`), `campaign.json: cases[0].retry_policy.max_attempts: 0: want at least 1 (the first attempt counts)`},
		{"category", wrap(`"retry_policy": {"max_attempts": 2, "retry_categories": ["lost", "network_unavailable"]}`),
			`campaign.json: cases[0].retry_policy.retry_categories[1]: "network_unavailable" is not a failure category (want one of input_invalid, input_unreadable, journal_corrupt, io_error, interrupted, lost, busy)`},
		{"categories string", wrap(`"retry_policy": {"max_attempts": 2, "retry_categories": "lost"}`), `campaign.json: cases[0].retry_policy.retry_categories: want an array of strings, got a string`},
		{"different_worker", wrap(`"retry_policy": {"max_attempts": 2, "different_worker": "yes"}`), `campaign.json: cases[0].retry_policy.different_worker: want a boolean, got a string`},
		{"payload field", wrap(`"payload": {"env": {}}`), `campaign.json: cases[0].payload.env: unknown field (want one of extensions, execution_profile)`},
		{"payload extensions", wrap(`"payload": {"extensions": []}`), `campaign.json: cases[0].payload.extensions: want an object, got an array`},
		{"defaults payload", `{"schema_version": 1, "campaign_id": "c", "defaults": {"payload": {"execution_profile": {"placement": 1}}}, "settings": {"s": {}}, "cases": []}`,
			`campaign.json: defaults.payload.execution_profile.placement: want a string, got a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("campaign.json", []byte(tc.doc), false)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error\n got %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestRetryPolicyAllows(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 3, RetryCategories: []string{CategoryIOError, CategoryLost}}
	for _, tc := range []struct {
		category string
		attempts int
		want     bool
	}{
		{CategoryIOError, 1, true}, {CategoryIOError, 2, true}, {CategoryIOError, 3, false},
		{CategoryLost, 2, true}, {CategoryJournalCorrupt, 1, false}, {CategoryInputInvalid, 1, false},
	} {
		if got := p.Allows(tc.category, tc.attempts); got != tc.want {
			t.Errorf("Allows(%s, %d) = %v, want %v", tc.category, tc.attempts, got, tc.want)
		}
	}
	// The default retries what did not run to its end, without limit.
	if !DefaultRetryPolicy.Allows(CategoryLost, 1000) || DefaultRetryPolicy.Allows(CategoryIOError, 1) {
		t.Errorf("default policy %+v", DefaultRetryPolicy)
	}
}

// resourceManifest is a campaign whose tasks declare resources: the array
// tasks must request the largest.
func resourceManifest(t *testing.T, retry string) *Manifest {
	return mustParse(t, `{"schema_version": 1, "campaign_id": "c",
		"defaults": {"execution_profile": {"resources": {"cpu_millis": 750, "memory_mb": 1536, "disk_mb": 2048}}`+retry+`},
		"settings": {"s": {}},
		"cases": [
			{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x"},
			{"case_id": "b", "setting_id": "s", "run_id": "1", "session": "x", "execution_profile": {"resources": {"cpu_millis": 1500}}}
		]}`)
}

func TestSlurmRequest(t *testing.T) {
	m := resourceManifest(t, "")
	o := ScriptOptions{Binary: "/b", Manifest: "/m.json", Out: "/o", Merge: "/d", ArrayCount: 2, WaitBusy: time.Hour}
	s, err := SlurmArrayScript("c", len(m.Tasks), o.ForTasks(m.Tasks))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`#SBATCH --cpus-per-task="2"` + "\n", `#SBATCH --mem="1536M"` + "\n", `#SBATCH --tmp="2048M"` + "\n",
		"#SBATCH --requeue\n#SBATCH --open-mode=append\n", "exec /b batch /m.json -o /o --array-count 2 --jobs 1 --wait-busy 1h0m0s\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("array script lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "--exclusive") {
		t.Errorf("shared tasks ask for whole nodes:\n%s", s)
	}
	merge, err := SlurmMergeScript("c", m.Tasks, o.ForTasks(m.Tasks))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(merge, "--mem") || strings.Contains(merge, "--cpus-per-task") {
		t.Errorf("the merge job asks for the exports' resources:\n%s", merge)
	}
	// Two tasks side by side in an array task ask for twice one; the
	// command line's --cpus-per-task wins over cpu_millis.
	o.Jobs, o.CPUsPerTask = 2, 8
	s, err = SlurmArrayScript("c", len(m.Tasks), o.ForTasks(m.Tasks))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`#SBATCH --cpus-per-task="8"` + "\n", `#SBATCH --mem="3072M"` + "\n", "--jobs 2 "} {
		if !strings.Contains(s, want) {
			t.Errorf("array script lacks %q:\n%s", want, s)
		}
	}
	if strings.Count(s, "--cpus-per-task") != 1 {
		t.Errorf("two --cpus-per-task lines:\n%s", s)
	}
	// A policy that does not retry lost attempts does not requeue; an
	// exclusive task gets whole nodes.
	m = mustParse(t, `{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}},
		"defaults": {"retry_policy": {"max_attempts": 1}, "execution_profile": {"placement": "exclusive"}},
		"cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x"}]}`)
	s, err = SlurmArrayScript("c", 1, ScriptOptions{Binary: "/b", Manifest: "/m.json", Out: "/o", ArrayCount: 1}.ForTasks(m.Tasks))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s, "#SBATCH --no-requeue\n") || !strings.Contains(s, "#SBATCH --exclusive\n") {
		t.Errorf("array script:\n%s", s)
	}
}

// decodeJob decodes b into the real Kubernetes API type, strictly: a field
// that batch/v1 does not know is an error, as the API server's strict
// field validation makes it.
func decodeJob(b []byte) (*batchv1.Job, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var job batchv1.Job
	if err := dec.Decode(&job); err != nil {
		return nil, err
	}
	return &job, nil
}

// The generated Job decodes strictly into k8s.io/api's batch/v1 types, and
// requests what the tasks declare.
func TestKubernetesJobStrict(t *testing.T) {
	m := resourceManifest(t, `, "retry_policy": {"max_attempts": 3, "retry_categories": ["io_error", "lost"]}`)
	o := KubernetesOptions{
		ScriptOptions: ScriptOptions{Binary: "/usr/local/bin/ceres-export", Manifest: "/campaign/c.json", Out: "/campaign/out", ArrayCount: 2, WaitBusy: time.Hour},
		Image:         "registry.example/ceres-export:0.1", Namespace: "lab", Claim: "campaign-pvc", MountPath: "/campaign",
	}
	b, err := KubernetesJob("week-48", underCampaign(m.Tasks), o)
	if err != nil {
		t.Fatal(err)
	}
	job, err := decodeJob(b)
	if err != nil {
		t.Fatalf("strict decode into batch/v1 Job: %v\n%s", err, b)
	}
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Name != "ceres-week-48" || job.Namespace != "lab" {
		t.Fatalf("type and metadata %+v", job.TypeMeta)
	}
	spec := job.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion || *spec.Completions != 2 || *spec.Parallelism != 2 {
		t.Fatalf("spec %+v", spec)
	}
	if spec.BackoffLimitPerIndex == nil || *spec.BackoffLimitPerIndex != 2 {
		t.Errorf("backoffLimitPerIndex %v, want max_attempts-1 = 2", spec.BackoffLimitPerIndex)
	}
	rules := spec.PodFailurePolicy.Rules
	if len(rules) != 3 || rules[2].Action != batchv1.PodFailurePolicyActionFailIndex || !slices.Equal(rules[2].OnExitCodes.Values, []int32{1, 2}) ||
		rules[1].Action != batchv1.PodFailurePolicyActionIgnore || !slices.Equal(rules[1].OnExitCodes.Values, []int32{143}) ||
		rules[0].Action != batchv1.PodFailurePolicyActionIgnore || rules[0].OnPodConditions[0].Type != corev1.DisruptionTarget {
		t.Errorf("pod failure policy %+v", spec.PodFailurePolicy)
	}
	pod := spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Containers) != 1 || pod.Volumes[0].PersistentVolumeClaim.ClaimName != "campaign-pvc" {
		t.Fatalf("pod %+v", pod)
	}
	c := pod.Containers[0]
	if rules[2].OnExitCodes.ContainerName == nil || c.Name != *rules[2].OnExitCodes.ContainerName || c.VolumeMounts[0].MountPath != "/campaign" {
		t.Errorf("container %+v", c)
	}
	wantArgs := []string{"batch", "/campaign/c.json", "-o", "/campaign/out", "--array-count", "2", "--jobs", "1", "--wait-busy", "1h0m0s"}
	if !slices.Equal(c.Args, wantArgs) {
		t.Errorf("args %q, want %q", c.Args, wantArgs)
	}
	for _, q := range []struct {
		list corev1.ResourceList
		name corev1.ResourceName
		want string
	}{
		{c.Resources.Requests, corev1.ResourceCPU, "1500m"},
		{c.Resources.Requests, corev1.ResourceMemory, "1536Mi"},
		{c.Resources.Requests, corev1.ResourceEphemeralStorage, "2048Mi"},
		{c.Resources.Limits, corev1.ResourceMemory, "1536Mi"},
		{c.Resources.Limits, corev1.ResourceEphemeralStorage, "2048Mi"},
	} {
		got, ok := q.list[q.name]
		if !ok || got.Cmp(resource.MustParse(q.want)) != 0 {
			t.Errorf("%s = %v, want %s", q.name, got.String(), q.want)
		}
	}
	if _, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		t.Errorf("a CPU limit would throttle the encoder: %v", c.Resources.Limits)
	}
	// The check can fail: a field batch/v1 does not know is refused.
	bad := bytes.Replace(b, []byte(`"completionMode"`), []byte(`"completionMod"`), 1)
	if _, err := decodeJob(bad); err == nil || !strings.Contains(err.Error(), "completionMod") {
		t.Fatalf("an unknown field decoded: %v", err)
	}
	// Whole-node placement has no Job equivalent: refused, not dropped.
	m = mustParse(t, `{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}},
		"cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "x", "execution_profile": {"placement": "exclusive"}}]}`)
	if _, err := KubernetesJob("c", m.Tasks, o); err == nil || !strings.Contains(err.Error(), "exclusive") {
		t.Fatalf("exclusive placement: %v", err)
	}
}

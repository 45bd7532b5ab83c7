package campaign

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// A Kubernetes Indexed Job gives each pod JOB_COMPLETION_INDEX: with the
// Job's completions as --array-count, the pods together run every task
// exactly once, as SLURM's array tasks do.
func TestKubernetesIndexedJob(t *testing.T) {
	tasks := selectionManifest(t)
	o := KubernetesOptions{
		ScriptOptions: ScriptOptions{Binary: "/usr/local/bin/ceres-export", Manifest: "/campaign/c.json", Out: "/campaign/out",
			Selection: Selection{SettingIDs: []string{"av1"}}, ArrayCount: 3, Jobs: 1, CPUsPerTask: 2},
		Image: "registry.example/ceres-export:0.1", Claim: "campaign-pvc", MountPath: "/campaign",
	}
	b, err := KubernetesJob("c", underCampaign(tasks), o)
	if err != nil {
		t.Fatal(err)
	}
	var job struct {
		APIVersion, Kind string
		Spec             struct {
			CompletionMode       string `json:"completionMode"`
			Completions          int
			Parallelism          int
			BackoffLimitPerIndex int `json:"backoffLimitPerIndex"`
			Template             struct {
				Spec struct {
					RestartPolicy string `json:"restartPolicy"`
					Containers    []struct {
						Image   string
						Command []string
						Args    []string
					}
					Volumes []struct {
						PersistentVolumeClaim struct{ ClaimName string } `json:"persistentVolumeClaim"`
					}
				}
			}
		}
	}
	if err := json.Unmarshal(b, &job); err != nil {
		t.Fatal(err)
	}
	s := job.Spec
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || s.CompletionMode != "Indexed" || s.Completions != 3 || s.Parallelism != 3 ||
		s.BackoffLimitPerIndex != 1 || s.Template.Spec.RestartPolicy != "Never" || len(s.Template.Spec.Containers) != 1 ||
		s.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "campaign-pvc" {
		t.Fatalf("job %s", b)
	}
	c := s.Template.Spec.Containers[0]
	wantArgs := []string{"batch", "/campaign/c.json", "-o", "/campaign/out", "--array-count", "3", "--jobs", "1", "--setting-id", "av1"}
	if c.Image != o.Image || !reflect.DeepEqual(c.Command, []string{o.Binary}) || !reflect.DeepEqual(c.Args, wantArgs) {
		t.Fatalf("container %+v", c)
	}
	// Each pod's share, from its environment and the count in its args.
	selected, err := Select(tasks, o.Selection)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i := range s.Completions {
		env := map[string]string{"JOB_COMPLETION_INDEX": string(rune('0' + i))}
		share, err := ArrayFromEnv(func(k string) string { return env[k] }, -1, 3)
		if err != nil {
			t.Fatal(err)
		}
		part, err := Share(selected, share.Index, share.Count)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range part {
			seen[p.ID]++
		}
	}
	if len(seen) != len(selected) {
		t.Fatalf("%d of %d tasks run", len(seen), len(selected))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("%s run %d times", id, n)
		}
	}
}

func TestSlurmScripts(t *testing.T) {
	m := mustParse(t, `{"schema_version": 1, "campaign_id": "c", "settings": {"av1": {}, "h264": {}},
		"cases": [
			{"case_id": "a", "setting_id": "av1", "run_id": "1", "session": "x"},
			{"case_id": "b", "setting_id": "h264", "run_id": "1", "session": "x"},
			{"case_id": "c", "setting_id": "av1", "run_id": "1", "session": "x", "expected": {"state": "failed"}},
			{"case_id": "d's", "setting_id": "av1", "run_id": "1", "session": "x"}
		]}`)
	o := ScriptOptions{Binary: "/opt/ceres export", Manifest: "/m/c.json", Out: "/o", Merge: "/d", ArrayCount: 2, Partition: "gpu", Time: "01:00:00", Selection: Selection{RunIDs: []string{"1"}}}
	array, err := SlurmArrayScript("c", len(m.Tasks), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`#SBATCH --array="0-1"` + "\n", `#SBATCH --partition="gpu"` + "\n", `#SBATCH --time="01:00:00"` + "\n",
		`#SBATCH --output="/o/` + layout.SlurmLogsDir + `/array-%A_%a.out"` + "\n", "exec '/opt/ceres export' batch /m/c.json -o /o --array-count 2 --run-id 1\n"} {
		if !strings.Contains(array, want) {
			t.Errorf("array script lacks %q:\n%s", want, array)
		}
	}
	merge, err := SlurmMergeScript("c", m.Tasks, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mkdir -p /d\n",
		"'/opt/ceres export' merge /o/c__a__av1__run-1 /o/c__d-s__av1__run-1 -o /d/av1 --replace\n",
		"'/opt/ceres export' merge /o/c__b__h264__run-1 -o /d/h264 --replace\n"} {
		if !strings.Contains(merge, want) {
			t.Errorf("merge script lacks %q:\n%s", want, merge)
		}
	}
	if strings.Contains(merge, "c__c__av1") {
		t.Errorf("the task expected to fail is merged:\n%s", merge)
	}
}

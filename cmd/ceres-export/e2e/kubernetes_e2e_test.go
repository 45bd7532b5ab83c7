package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
)

// kubernetesJob runs batch kubernetes in dir (the operator's working
// directory) and returns its stdout, stderr and exit code.
func kubernetesJob(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd, _, cancel := binaryCommand(append([]string{"batch", "kubernetes"}, args...)...)
	defer cancel()
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

// A Job written from relative paths runs: its pods start in the image's
// working directory, not the operator's, so the manifest and OUT go into
// the args absolute, as batch slurm's scripts hold them. The test runs the
// Job's container as a pod would: its command and args from another
// directory, with JOB_COMPLETION_INDEX and no usable TMPDIR (the root file
// system is read-only and no scratch volume is mounted: the tool writes
// only under OUT). Paths outside --mount, which no pod could see, are
// refused with exit 2, naming the path.
func TestE2EBatchKubernetesPodRuns(t *testing.T) {
	mount := t.TempDir()
	synth := filepath.Join(mount, "sessions", "a")
	mustRun(t, "synth", "-o", synth, "--time-scale", "0.1", "--width", "64", "--height", "48")
	manifest := `{"schema_version": 1, "campaign_id": "k", "settings": {"s": {"export": {"vcodec": "h264"}}},
		"cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "sessions/a"}]}`
	if err := os.WriteFile(filepath.Join(mount, "c.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := kubernetesJob(t, mount, "c.json", "-o", "out", "--image", "registry.example/ceres-export:0.1", "--claim", "pvc", "--mount", mount)
	if code != 0 {
		t.Fatalf("batch kubernetes: exit %d\n%s", code, stderr)
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	var job batchv1.Job
	if err := dec.Decode(&job); err != nil {
		t.Fatalf("strict decode into batch/v1 Job: %v\n%s", err, stdout)
	}
	c := job.Spec.Template.Spec.Containers[0]
	if len(c.Args) < 4 || c.Args[1] != filepath.Join(mount, "c.json") || c.Args[3] != filepath.Join(mount, "out") {
		t.Fatalf("args %q: want the manifest %s and OUT %s", c.Args, filepath.Join(mount, "c.json"), filepath.Join(mount, "out"))
	}
	pod, _, cancel := binaryCommand(c.Args...)
	defer cancel()
	pod.Dir = t.TempDir()
	// A scratch image's environment: no HOME, and a TMPDIR that is not
	// there, as a read-only root file system would leave it.
	pod.Env = []string{"JOB_COMPLETION_INDEX=0", "TMPDIR=" + filepath.Join(pod.Dir, "missing")}
	if b, err := pod.CombinedOutput(); err != nil {
		t.Fatalf("the pod's batch %q: %v\n%s", c.Args, err, b)
	}
	for _, f := range []string{"meta/info.json", "ceres/report.html"} {
		if _, err := os.Stat(filepath.Join(mount, "out", "k__a__s__run-1", f)); err != nil {
			t.Errorf("the pod wrote no shard: %v", err)
		}
	}
	for _, bad := range []struct {
		name string
		args []string
		want string
	}{
		{"OUT outside the mount", []string{"c.json", "-o", t.TempDir(), "--claim", "pvc", "--mount", mount}, "is not under the claim's mount " + mount},
		{"manifest and sessions outside the mount", []string{"c.json", "-o", "out", "--claim", "pvc", "--mount", filepath.Join(mount, "out")}, "manifest " + filepath.Join(mount, "c.json") + " is not under the claim's mount"},
		{"no claim", []string{"c.json", "-o", "out"}, "a claim and its mount are needed"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			stdout, stderr, code := kubernetesJob(t, mount, append(bad.args, "--image", "i")...)
			if code != 2 || !strings.Contains(stderr, bad.want) || stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %d bytes; want exit 2 saying %q and no Job", code, stderr, len(stdout), bad.want)
			}
		})
	}
}

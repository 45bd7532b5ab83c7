package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// TestE2EProfile exports a synthetic session with the shipped synth profile
// plus a --map feature, verifies it against the session, and checks the
// features LeRobot will see; a broken profile is a usage error naming the
// file and the key path.
func TestE2EProfile(t *testing.T) {
	session := synthSession(t, "--seed", "5", "--cameras", "1")
	dest := filepath.Join(t.TempDir(), "shard")
	prof, err := filepath.Abs("../../../profiles/synth.yaml")
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, "export", session, "-o", dest, "--vcodec", "h264", "-q", "--profile", prof, "--map", "observation.gripper_mode=gripper.mode")
	out := mustRun(t, "verify", dest, "--journal", session, "--json")
	var res struct {
		Sound    bool  `json:"sound"`
		Findings []any `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if !res.Sound || len(res.Findings) != 0 {
		t.Fatalf("verify: %s", out)
	}
	var info struct {
		Features map[string]struct {
			Dtype string   `json:"dtype"`
			Shape []int    `json:"shape"`
			Names []string `json:"names"`
		} `json:"features"`
	}
	b, err := os.ReadFile(filepath.Join(dest, filepath.FromSlash(layout.InfoPath)))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatal(err)
	}
	names := []string{"accel_x", "accel_y", "accel_z", "gyro_x", "gyro_y", "gyro_z", "gripper_closed", "gripper_force"}
	for _, key := range []string{"observation.state", "action"} {
		f := info.Features[key]
		if f.Dtype != "float32" || !slices.Equal(f.Shape, []int{8}) || !slices.Equal(f.Names, names) {
			t.Errorf("%s: %+v, want float32 [8] %v", key, f, names)
		}
	}
	if _, ok := info.Features["observation.gripper_mode"]; !ok {
		t.Error("the --map feature is missing")
	}
	for _, gone := range []string{"observation.imu.accel", "observation.gripper.force", "observation.gripper.mode"} {
		if _, ok := info.Features[gone]; ok {
			t.Errorf("%s is exported although the profile takes its field", gone)
		}
	}
	stored, err := os.ReadFile(filepath.Join(dest, filepath.FromSlash(layout.ProfilePath)))
	if err != nil || !strings.Contains(string(stored), `"name":"observation.gripper_mode"`) {
		t.Errorf("%s %s (%v) lacks the --map feature", layout.ProfilePath, stored, err)
	}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("schema: ceres-feature-profile\nversion: 1\nfeatures:\n  - name: action\n    fields:\n      - {stream: imu, field: acel}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := run(t, "export", session, "-o", filepath.Join(t.TempDir(), "x"), "--profile", bad)
	if code != exitFindings || !strings.Contains(errOut, bad+":6: profile features[0].fields[0].field") || !strings.Contains(errOut, "(have accel, gyro)") {
		t.Errorf("profile that does not fit: exit %d, stderr %q; want %d naming %s:6 and the key path", code, errOut, exitFindings, bad)
	}
	if err := os.WriteFile(bad, []byte("schema: ceres-feature-profile\nversion: 1\nfeatures:\n  - name: action\n    feilds: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = run(t, "export", session, "-o", filepath.Join(t.TempDir(), "x"), "--profile", bad)
	if code != exitUsage || !strings.Contains(errOut, bad+":5: profile features[0].feilds: unknown key") {
		t.Errorf("malformed profile: exit %d, stderr %q; want %d naming %s:5 and the key path", code, errOut, exitUsage, bad)
	}
	_, errOut, code = run(t, "export", session, "-o", filepath.Join(t.TempDir(), "y"), "--profile", prof, "--map", "action=imu.gyro")
	if code != exitUsage || !strings.Contains(errOut, `"action" is already the name of features[1]`) {
		t.Errorf("--map clashing with the profile: exit %d, stderr %q", code, errOut)
	}
}

// TestE2EArmSession is make demo's path: an arm session exported with the
// shipped arm profile is sound against its journal, its state and action
// are the arm's six joints named as SO-101's, and nothing of the index-coded
// mode's debug fields reaches it.
func TestE2EArmSession(t *testing.T) {
	session := synthSession(t, "--seed", "6", "--cameras", "1", "--motion", "arm", "--height", "64", "--width", "64")
	dest := filepath.Join(t.TempDir(), "shard")
	prof, err := filepath.Abs("../../../profiles/synth-arm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, "export", session, "-o", dest, "--vcodec", "h264", "-q", "--profile", prof)
	if out := mustRun(t, "verify", dest, "--journal", session); !strings.Contains(out, "sound: 0 errors, 0 warnings") {
		t.Fatalf("verify: %s", out)
	}
	b, err := os.ReadFile(filepath.Join(dest, filepath.FromSlash(layout.InfoPath)))
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		RobotType string `json:"robot_type"`
		Features  map[string]struct {
			Shape []int    `json:"shape"`
			Names []string `json:"names"`
		} `json:"features"`
	}
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatal(err)
	}
	joints := []string{"shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"}
	for _, k := range []string{"observation.state", "action"} {
		if f := info.Features[k]; !slices.Equal(f.Names, joints) || !slices.Equal(f.Shape, []int{6}) {
			t.Errorf("%s: shape %v names %v, want the six joints", k, f.Shape, f.Names)
		}
	}
	for k := range info.Features {
		if strings.Contains(k, "counter") || strings.Contains(k, "mode") {
			t.Errorf("feature %s: a debug field reached the dataset", k)
		}
	}
	if info.RobotType != "synthetic-arm" {
		t.Errorf("robot_type %q", info.RobotType)
	}
	if _, _, code := run(t, "synth", "-o", filepath.Join(t.TempDir(), "s"), "--motion", "walk"); code != exitUsage {
		t.Errorf("synth --motion walk: exit %d, want a usage error", code)
	}
}

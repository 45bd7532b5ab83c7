package profiles

import (
	"os"
	"testing"
)

// The embedded bytes are the files', and both parse as the profiles their
// sessions need.
func TestShippedProfiles(t *testing.T) {
	t.Parallel()
	for path, embedded := range map[string][]byte{"synth.yaml": synthYAML, "synth-arm.yaml": synthArmYAML} {
		if b, err := os.ReadFile(path); err != nil || string(b) != string(embedded) {
			t.Errorf("embedded bytes differ from %s (%v)", path, err)
		}
	}
	if p := Synth(); len(p.Features) == 0 || p.Features[0].Name != "observation.state" {
		t.Errorf("synth profile declares %+v, want observation.state first", p.Features)
	}
	if p := SynthArm(); len(p.Features) != 3 || p.Features[0].Name != "observation.state" || p.Features[1].Name != "action" {
		t.Errorf("synth arm profile declares %+v, want observation.state, action and the gripper", p.Features)
	}
}

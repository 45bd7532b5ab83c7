package profile

import "testing"

// The shipped profiles parse.
func TestShippedProfiles(t *testing.T) {
	t.Parallel()
	p := Synth()
	if len(p.Features) == 0 || p.Features[0].Name != "observation.state" {
		t.Errorf("synth profile declares %+v, want observation.state first", p.Features)
	}
	if p := SynthArm(); len(p.Features) != 3 || p.Features[0].Name != "observation.state" || p.Features[1].Name != "action" {
		t.Errorf("synth arm profile declares %+v, want observation.state, action and the gripper", p.Features)
	}
}

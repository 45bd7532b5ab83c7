package profiles

import (
	"os"
	"testing"
)

// The embedded bytes are the file's (internal/profile's tests parse them).
func TestShippedProfiles(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("synth.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(SynthYAML()) {
		t.Error("embedded bytes differ from synth.yaml")
	}
	if b, err = os.ReadFile("synth-arm.yaml"); err != nil || string(b) != string(SynthArmYAML()) {
		t.Errorf("embedded bytes differ from synth-arm.yaml (%v)", err)
	}
}

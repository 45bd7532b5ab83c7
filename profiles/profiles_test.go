package profiles

import (
	"os"
	"testing"
)

// The shipped profiles parse, and the embedded bytes are the file's.
func TestShippedProfiles(t *testing.T) {
	t.Parallel()
	p := Synth()
	if len(p.Features) == 0 || p.Features[0].Name != "observation.state" {
		t.Errorf("synth profile declares %+v, want observation.state first", p.Features)
	}
	b, err := os.ReadFile("synth.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(SynthYAML()) {
		t.Error("embedded bytes differ from synth.yaml")
	}
}

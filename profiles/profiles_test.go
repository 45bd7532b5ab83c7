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
}

// Package profiles holds the feature profiles shipped with ceres-export
// (docs/profiles.md), embedded so that tests and the demo use the very
// bytes of the files beside this one. It exports the files only, as bytes;
// internal/profile parses them (profile.Synth).
package profiles

import (
	_ "embed"
)

// SynthPath is the synth profile's path in the repository.
const SynthPath = "profiles/synth.yaml"

//go:embed synth.yaml
var synthYAML []byte

// SynthYAML returns the bytes of profiles/synth.yaml.
func SynthYAML() []byte { return append([]byte(nil), synthYAML...) }

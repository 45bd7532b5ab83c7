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

// SynthArmPath is the profile of synth --motion arm sessions (make demo).
const SynthArmPath = "profiles/synth-arm.yaml"

//go:embed synth-arm.yaml
var synthArmYAML []byte

// SynthArmYAML returns the bytes of profiles/synth-arm.yaml.
func SynthArmYAML() []byte { return append([]byte(nil), synthArmYAML...) }

// SynthYAML returns the bytes of profiles/synth.yaml.
func SynthYAML() []byte { return append([]byte(nil), synthYAML...) }

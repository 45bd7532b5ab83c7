// Package profiles holds the feature profiles shipped with ceres-export
// (docs/profiles.md), embedded so that tests and the demo use the very
// bytes of the files beside this one.
package profiles

import (
	_ "embed"

	"github.com/ceres-robotics/ceres-export/internal/profile"
)

// SynthPath is the synth profile's path in the repository.
const SynthPath = "profiles/synth.yaml"

//go:embed synth.yaml
var synthYAML []byte

// SynthYAML returns the bytes of profiles/synth.yaml.
func SynthYAML() []byte { return append([]byte(nil), synthYAML...) }

// Synth parses profiles/synth.yaml.
func Synth() *profile.Profile {
	p, err := profile.Parse(SynthPath, synthYAML)
	if err != nil {
		panic(err) // a test of this package parses it
	}
	return p
}

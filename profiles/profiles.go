// Package profiles holds the feature profiles shipped with ceres-export
// (docs/profiles.md), embedded so that tests use the very bytes of the
// files beside this one. It is test support: the program reads a profile
// from the path a user gives (--profile), never from here.
package profiles

import (
	_ "embed"

	"github.com/ceres-robotics/ceres-export/internal/profile"
)

// synthPath is the synth profile's path in the repository.
const synthPath = "profiles/synth.yaml"

//go:embed synth.yaml
var synthYAML []byte

// synthArmPath is the profile of synth --motion arm sessions (make demo).
const synthArmPath = "profiles/synth-arm.yaml"

//go:embed synth-arm.yaml
var synthArmYAML []byte

// Synth parses the shipped profile of synth sessions (profiles/synth.yaml).
func Synth() *profile.Profile { return mustParse(synthPath, synthYAML) }

// SynthArm parses the shipped profile of synth --motion arm sessions
// (profiles/synth-arm.yaml).
func SynthArm() *profile.Profile { return mustParse(synthArmPath, synthArmYAML) }

func mustParse(path string, yaml []byte) *profile.Profile {
	p, err := profile.Parse(path, append([]byte(nil), yaml...))
	if err != nil {
		panic(err) // TestShippedProfiles parses both
	}
	return p
}

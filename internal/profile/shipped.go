package profile

import "github.com/ceres-robotics/ceres-export/profiles"

// Synth parses the shipped profile of synth sessions (profiles/synth.yaml).
func Synth() *Profile {
	p, err := Parse(profiles.SynthPath, profiles.SynthYAML())
	if err != nil {
		panic(err) // TestShippedProfiles parses it
	}
	return p
}

// SynthArm is the shipped profile of synth --motion arm sessions
// (profiles/synth-arm.yaml).
func SynthArm() *Profile {
	p, err := Parse(profiles.SynthArmPath, profiles.SynthArmYAML())
	if err != nil {
		panic(err) // TestShippedProfiles parses it
	}
	return p
}

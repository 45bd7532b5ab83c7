package export

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	synthsession "github.com/ceres-robotics/ceres-export/internal/synth/session"
	"github.com/ceres-robotics/ceres-export/profiles"
)

// TestCard: the dataset card names the session, the specification, the
// profile and every attempt with its fate, and is the same bytes on a
// second export.
func TestCard(t *testing.T) {
	session := smallSession(t, synthsession.Options{Seed: 52})
	dirs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	var cards []string
	for _, d := range dirs {
		rep, err := exportWithVideo(context.Background(), session, d, Options{Profile: profiles.Synth()})
		if err != nil {
			t.Fatal(err)
		}
		// The shipped profile leaves the session's debug fields out.
		if want := []string{"observation.state", "action"}; !slices.Equal(rep.Features[:min(2, len(rep.Features))], want) ||
			slices.Contains(rep.Features, "observation.gripper.counter") || slices.Contains(rep.Features, "observation.gripper.mode") {
			t.Errorf("features %q: want %q first, and no gripper counter or mode", rep.Features, want)
		}
		b, err := os.ReadFile(filepath.Join(d, layout.CardPath))
		if err != nil {
			t.Fatal(err)
		}
		card := string(b)
		cards = append(cards, card)
		for _, want := range []string{
			"tags:\n- LeRobot\n- CERES\n- phone-demonstrator\n",
			"configs:\n- config_name: default\n  data_files: data/*/*.parquet\n",
			"CERES session synth-52 exported",
			"`" + rep.Spec.Hash + "`",
			"Feature profile: sha256 `" + rep.Exporter.Options.ProfileHash + "`",
			"\"observation.state\": {\n            \"dtype\": \"float32\"",
		} {
			if !strings.Contains(card, want) {
				t.Errorf("card lacks %q", want)
			}
		}
		rows := 0
		for _, line := range strings.Split(card, "\n") {
			if strings.HasSuffix(line, " |") && (strings.Contains(line, "| accepted |") || strings.Contains(line, "| retried |")) {
				rows++
			}
		}
		if rows != len(rep.Attempts) {
			t.Errorf("card lists %d attempts, the export %d", rows, len(rep.Attempts))
		}
	}
	if cards[0] != cards[1] {
		t.Error("two exports of one session wrote different cards")
	}
}

// TestCardMetadataOnly: a metadata-only card names no run title,
// description, instructions or session id.
func TestCardMetadataOnly(t *testing.T) {
	session := smallSession(t, synthsession.Options{Seed: 53})
	dest := filepath.Join(t.TempDir(), "shard")
	if _, err := exportWithVideo(context.Background(), session, dest, Options{Profile: profiles.Synth(), Privacy: privacy.MetadataOnly, Salt: "salt"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dest, layout.CardPath))
	if err != nil {
		t.Fatal(err)
	}
	for _, private := range []string{"synth-53", "Sample transfer", "Move each sample", "Pick one sample", "Inspect until complete", layout.SpecsDir + "/"} {
		if strings.Contains(string(b), private) {
			t.Errorf("metadata-only card holds %q", private)
		}
	}
	if !strings.Contains(string(b), layout.RedactedSpecsDir+"/") {
		t.Error("metadata-only card does not point at the redacted specification")
	}
}

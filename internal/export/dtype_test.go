package export

import (
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/journal"
)

// TestJournalDtypes checks the boundary: every journal dtype maps to a
// feature dtype of the same size that decodes its bytes to the same value.
func TestJournalDtypes(t *testing.T) {
	raw := []byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0x3f}
	for _, jd := range []journal.Dtype{journal.DtypeFloat32, journal.DtypeFloat64, journal.DtypeInt32, journal.DtypeInt64, journal.DtypeUint8, journal.DtypeBool} {
		d := featureDtype(jd)
		if d.Size() != jd.Size() || !d.Numeric() {
			t.Errorf("featureDtype(%s) = %q of size %d, want size %d", jd, d, d.Size(), jd.Size())
		}
		if got, want := d.Float64(raw, 0), jd.Float64(raw, 0); got != want {
			t.Errorf("%s: feature decodes %v, journal %v", jd, got, want)
		}
	}
	if d := featureDtype("float16"); d != "" || lerobot.Dtype(d).Numeric() {
		t.Errorf("featureDtype(float16) = %q", d)
	}
}

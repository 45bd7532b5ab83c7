package export

import (
	"github.com/ceres-robotics/ceres-export/internal/shard"
)

// fillNext fills the columns of derived features (a profile's `next`) from
// their sources, within one episode: frame k holds the source's frame k+1,
// and the episode's last frame holds its own value, so that no frame is
// dropped and no value crosses into another episode (docs/profiles.md).
func fillNext(features []rowFeature, b *shard.EpisodeBatch) {
	n := b.Len
	if n == 0 {
		return
	}
	for i, f := range features {
		if f.next < 0 {
			continue
		}
		b.Columns[i].ShiftRows(f.Dtype, &b.Columns[f.next], n, f.Shape[0])
	}
}

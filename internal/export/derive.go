package export

import (
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
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
		dst, src, w := &b.Columns[i], &b.Columns[f.next], f.Shape[0]
		switch f.Dtype {
		case lerobot.Float32:
			shiftRows(dst.Float32, src.Float32, n, w)
		case lerobot.Float64:
			shiftRows(dst.Float64, src.Float64, n, w)
		case lerobot.Int32:
			shiftRows(dst.Int32, src.Int32, n, w)
		case lerobot.Int64:
			shiftRows(dst.Int64, src.Int64, n, w)
		case lerobot.Uint8:
			shiftRows(dst.Uint8, src.Uint8, n, w)
		case lerobot.Bool:
			shiftRows(dst.Bool, src.Bool, n, w)
		}
	}
}

// shiftRows sets row k of dst (w elements a row) to row k+1 of src, and the
// last row to src's last.
func shiftRows[T any](dst, src []T, n, w int) {
	copy(dst[:(n-1)*w], src[w:n*w])
	copy(dst[(n-1)*w:n*w], src[(n-1)*w:n*w])
}

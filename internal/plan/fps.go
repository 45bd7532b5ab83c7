package plan

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/journal"
)

// DefaultFPS returns the dataset rate docs/export-semantics.md prescribes when
// none is given: the nominal fps of the first video stream, or, when the
// session has no video stream, the nominal rate of the first sensor stream,
// rounded to the nearest integer (LeRobot requires an integer rate; 29.97
// becomes 30). Source names the stream ("video stream front"). It is an
// error when the stream it picks has no rate in [1, lerobot.MaxFPS] after rounding,
// or when there is neither a video nor a sensor stream.
func DefaultFPS(streams []journal.Stream) (fps int, source string, err error) {
	kind := journal.KindVideo
	if !slices.ContainsFunc(streams, func(s journal.Stream) bool { return s.Kind == journal.KindVideo }) {
		kind = journal.KindSensor
	}
	for _, s := range streams {
		if s.Kind != kind {
			continue
		}
		rate := s.FPS
		if kind == journal.KindSensor {
			rate = s.RateHz
		}
		r := math.Round(rate)
		if !(r >= 1 && r <= lerobot.MaxFPS) { // also rejects NaN
			return 0, "", fmt.Errorf("plan: %s stream %s has nominal rate %g, no usable dataset fps", kind, s.ID, rate)
		}
		return int(r), kind + " stream " + s.ID, nil
	}
	return 0, "", errors.New("plan: no video or sensor stream to take the dataset fps from")
}

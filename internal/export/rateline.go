package export

import (
	"fmt"
	"time"
)

// RateLine says how far done of total units are after elapsed: count,
// percentage, rate and, once there is a rate, the time left: the body of
// a progress line in a log, where a bar would be noise.
func RateLine(done, total int, units string, elapsed time.Duration) string {
	line := fmt.Sprintf("%d/%d %s", done, total, units)
	if total > 0 {
		line += fmt.Sprintf(" (%.0f%%)", 100*float64(done)/float64(total))
	}
	if s := elapsed.Seconds(); s > 0 && done > 0 {
		rate := float64(done) / s
		line += fmt.Sprintf(", %.3g %s/s", rate, units)
		if total >= done {
			left := time.Duration(float64(total-done) / rate * float64(time.Second))
			line += fmt.Sprintf(", %s left", left.Round(time.Second))
		}
	}
	return line
}

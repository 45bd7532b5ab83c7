package video

// maxGapRuns bounds the gap runs an episode records: a camera that froze
// every other frame must not grow the shard's manifest without bound.
const maxGapRuns = 256

// addGap records frame k of the episode as a gap frame.
func addGap(r *EpisodeResult, k int) {
	r.Gaps++
	if n := len(r.GapRuns); n > 0 && r.GapRuns[n-1].From+r.GapRuns[n-1].Frames == k {
		r.GapRuns[n-1].Frames++
		return
	}
	if len(r.GapRuns) < maxGapRuns {
		r.GapRuns = append(r.GapRuns, FrameSpan{From: k, Frames: 1})
	}
}

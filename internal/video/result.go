package video

// SourceRef names one decoded source frame.
type SourceRef struct {
	// Source is the index into the sources passed to ExportCamera.
	Source int
	// PTS is the frame's raw container pts in that file's time base.
	PTS int64
}

// EpisodeResult describes how one episode was written.
type EpisodeResult struct {
	// Chunk, File index of the output file holding the episode.
	Chunk, File int
	// FromTimestamp = frames before the episode in the file / fps;
	// ToTimestamp = FromTimestamp + Frames/fps (each from integers).
	FromTimestamp, ToTimestamp float64
	// FirstFrame is the episode's first frame index within the file.
	FirstFrame int
	// Frames written (= len(Times)).
	Frames int
	// Gaps counts frames whose chosen source frame lies more than one
	// nominal source period from T_k.
	Gaps int
	// GapRuns locate those frames (for report pages): runs of consecutive
	// gap frames, at most maxGapRuns per episode (the count stays exact).
	GapRuns []FrameSpan `json:",omitempty"`
	// SourceFrames counts the distinct source frames used.
	SourceFrames int
	// Stats are LeRobot's image statistics over the sampled frames.
	Stats ImageStats
	// Choices holds the source frame of every frame when RecordChoices.
	Choices []SourceRef
}

// FrameSpan is a run of consecutive frames [From, From+Frames) of an
// episode.
type FrameSpan struct {
	From, Frames int
}

// maxGapRuns bounds the gap runs an episode records: a camera that froze
// every other frame must not grow the shard's manifest without bound.
const maxGapRuns = 256

// addGap records frame k of the episode as a gap frame.
func (r *EpisodeResult) addGap(k int) {
	r.Gaps++
	if n := len(r.GapRuns); n > 0 && r.GapRuns[n-1].From+r.GapRuns[n-1].Frames == k {
		r.GapRuns[n-1].Frames++
		return
	}
	if len(r.GapRuns) < maxGapRuns {
		r.GapRuns = append(r.GapRuns, FrameSpan{From: k, Frames: 1})
	}
}

// OutputFileResult describes one written mp4.
type OutputFileResult struct {
	Chunk, File int
	Path        string
	Frames      int
	Bytes       int64
}

// SourceReport describes what was decoded from one source file.
type SourceReport struct {
	Path string
	// Frames decoded and used for selection (not Dropped); Packets read.
	Frames, Packets int
	// TimeBase of the video stream; FirstPTS, LastPTS of the decoded frames.
	TimeBase          Rational
	FirstPTS, LastPTS int64
	// Size of the file and BytesRead up to the end of the last packet read.
	Size, BytesRead int64
	// Truncated is true when the demuxer or decoder stopped on an error,
	// or more than 64 bytes follow the last whole packet (a file cut
	// short); Err says where. A WebM cut exactly between blocks cannot be
	// told from a complete live recording.
	Truncated bool
	Err       string
	// Dropped counts frames ignored because their journal time did not
	// exceed the previous frame's (overlapping or reordered files).
	Dropped int
	// NotDecoded is true when the file was not reached (all targets lay
	// before it); Complete when it was decoded to its end.
	NotDecoded, Complete bool
}

// CameraResult is the outcome of ExportCamera for one camera.
type CameraResult struct {
	Episodes []EpisodeResult
	Files    []OutputFileResult
	Sources  []SourceReport
	// Width, Height of the output videos.
	Width, Height int
	// Info is the feature's info block for meta/info.json.
	Info map[string]any
}

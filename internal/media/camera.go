package media

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"

	"github.com/ceres-robotics/ceres-export/internal/input"
)

// What an exporter hands FFmpeg (internal/video) and gets back for one
// camera: its files, the episodes' frame times, the encoder settings, and
// the encoded episodes with their statistics. The export package plans
// and judges with these without cgo; video.Files does the decoding and
// encoding.
// Source is one camera file and where its pts 0 lies on the journal clock.
type Source struct {
	// Path of the camera file (WebM, MP4, ...).
	Path string
	// StartT is the journal time (ns) of the file's raw container pts 0:
	// a frame's journal time is StartT + pts·time_base·1e9, exactly.
	StartT int64
	// Final, when not nil, says whether the file is complete: until it
	// does, the file may not exist yet or still grow, and is read as it
	// grows where its container allows it (a followed session's camera).
	// nil: the file is complete.
	Final func() bool
}

// EpisodeTimes gives the journal times T_k (ns) of an episode's frames,
// non-decreasing: either listed in Times, or, when Times is nil, as the
// frame clock T_k = lerobot.FrameTime(Start, k, fps) of the export's fps for
// k in [0, Length). The exporter gives the clock, which is computed frame by
// frame, so that no episode's frame times are held in memory; a list is for
// tests that need irregular times.
type EpisodeTimes struct {
	Times  []int64
	Start  int64
	Length int
}

// ExportOptions configures ExportCamera. The zero value of each field is its
// documented default; FPS and FilePath are required.
type ExportOptions struct {
	// FPS is the dataset's frame rate (output constant frame rate).
	FPS int
	// SourceFPS is the camera's nominal rate: a frame whose nearest source
	// frame is more than 1/SourceFPS away counts as a gap. 0 means FPS.
	SourceFPS int
	// Width, Height of the output; 0 means the first source's size, each
	// rounded down to even.
	Width, Height int
	// Encoder settings; zero value = LeRobot's default (SVT-AV1).
	Encoder EncoderOptions
	// DecoderThreads is the decoders' thread count; 0 means
	// DefaultDecoderThreads, whatever the machine.
	DecoderThreads int
	// MaxFileBytes: a new output file starts before an episode when the
	// current file's payload plus the episode's (known exactly: each
	// episode is encoded on its own first) would reach it.
	// 0 means 200 MiB (LeRobot's video_files_size_in_mb).
	MaxFileBytes int64
	// MaxFileFrames, when positive, also starts a new output file before an
	// episode that would take the current file past that many frames. The
	// mp4 muxer keeps an index entry per frame in memory until the file is
	// finished (moov at the front), so this bounds memory for long
	// sessions whose small pictures would never reach MaxFileBytes.
	MaxFileFrames int
	// FilePath names the output file of a (chunk, file) index; its
	// directory is created when missing. Required.
	FilePath func(chunk, file int) string
	// PartsDir is where the episodes' parts are written before they are
	// joined into the output files (created when missing; a directory of
	// its own inside it is removed at the end); "" means the system's
	// temporary directory. Exports put it beside the output, on its file
	// system.
	PartsDir string
	// FirstChunk, FirstFile is the index of the first output file; ChunkSize
	// the files per chunk (0 means 1000); indices step as LeRobot's
	// update_chunk_file_indices.
	FirstChunk, FirstFile int
	ChunkSize             int
	// InfoStyle selects the keys of CameraResult.Info.
	InfoStyle InfoStyle
	// Progress, if not nil, is called after each output frame with the
	// frames done and the total.
	Progress func(done, total int)
	// RecordChoices fills EpisodeResult.Choices (for tests and verify).
	RecordChoices bool
	// MoreSources, when set, makes the list of sources grow (a followed
	// session's camera, whose next file a recorder restart adds): at the end
	// of the files it has, the pass asks it for the list so far (the
	// sources given are a prefix of it) and waits until the list grows or
	// is final.
	MoreSources func() (sources []Source, final bool)
	// DecodeAll decodes the sources to their ends after the last episode,
	// so that SourceReport covers every frame and every cut file; by
	// default decoding stops once the last target frame is settled.
	DecodeAll bool
}

// PartName is the file name of episode e's part.
func PartName(e int) string { return fmt.Sprintf("episode-%06d.mp4", e) }

// ErrBehind is returned by CameraEncoder.EncodePart for an episode that
// starts before frames the encoder's one pass over the sources has already
// left behind; a fresh CameraEncoder encodes it.
var ErrBehind = errors.New("video: episode starts before the sources' current position")

// Part is one episode encoded on its own: an mp4 whose frame k has pts k
// in time base 1/fps and whose first frame is a key frame, so that
// PlaceParts can join it with others by stream copy. Every episode is
// encoded as a part, in a batch export as in a followed one: an episode's
// bytes then depend on its own frames alone, never on the episodes around
// it, and an episode encoded while the session was still recording is the
// one a batch export makes.
type Part struct {
	// Path of the part file.
	Path string
	// Bytes is the packet payload the part holds (the file is a little
	// larger: headers and index); PlaceParts rotates output files by it.
	Bytes int64
	// Episode describes the episode; its placement (Chunk, File,
	// FirstFrame, timestamps) is filled by PlaceParts.
	Episode EpisodeResult
}

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

// ImageStats are LeRobot's per-episode statistics of a video feature: per RGB
// channel, values in 0..1 (stats.json and the stats/* episode columns store
// each as shape (3,1,1)). Count is the number of sampled frames.
type ImageStats struct {
	Min, Max, Mean, Std     [3]float64
	Q01, Q10, Q50, Q90, Q99 [3]float64
	Count                   int64
}

// Map returns the statistics in stats.json's shape: each stat a (3,1,1)
// nested list, count a one-element list.
func (s ImageStats) Map() map[string]any {
	ch := func(v [3]float64) [][][]float64 {
		return [][][]float64{{{v[0]}}, {{v[1]}}, {{v[2]}}}
	}
	return map[string]any{
		"min": ch(s.Min), "max": ch(s.Max), "mean": ch(s.Mean), "std": ch(s.Std),
		"q01": ch(s.Q01), "q10": ch(s.Q10), "q50": ch(s.Q50), "q90": ch(s.Q90), "q99": ch(s.Q99),
		"count": []int64{s.Count},
	}
}

// ReadPrint identifies the bytes a followed export read of a camera file
// that might still change: its first Bytes bytes, by their SHA-256. The
// recorder promises to append only; a file that no longer begins with
// these bytes was rewritten or cut after it was read, and what was decoded
// from it is not what a batch export decodes.
type ReadPrint struct {
	Path   string
	Bytes  int64
	SHA256 [sha256.Size]byte
}

// Check returns an error naming the file when it no longer begins with the
// bytes that were read.
func (p ReadPrint) Check() error {
	f, err := input.Open(p.Path)
	if err != nil {
		return fmt.Errorf("%s changed after the follow read it: %w", p.Path, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.NewSectionReader(f, 0, p.Bytes))
	if err != nil {
		return fmt.Errorf("%s: %w", p.Path, err)
	}
	if n < p.Bytes {
		return fmt.Errorf("%s changed after the follow read it: %d bytes were read, it now holds %d (the file shrank)", p.Path, p.Bytes, n)
	}
	var sum [sha256.Size]byte
	if h.Sum(sum[:0]); sum != p.SHA256 {
		return fmt.Errorf("%s changed after the follow read it: its first %d bytes were rewritten (SHA-256 %x, read as %x)", p.Path, p.Bytes, sum[:8], p.SHA256[:8])
	}
	return nil
}

// CameraEncoder makes one pass over a camera's files, in order, and
// encodes episodes into parts as that pass reaches them, in time order
// (video.Files.NewCameraEncoder). A followed export drives it while the
// session records.
type CameraEncoder interface {
	// EncodePart encodes episode e (its index, for messages) into a part
	// file at path; ErrBehind when the pass has left its start behind.
	EncodePart(ctx context.Context, e int, ep EpisodeTimes, path string) (Part, error)
	// BeginPart opens the part of an episode still being recorded,
	// starting at start, whose length is not known yet.
	BeginPart(e int, start int64, path string) (PartWriter, error)
	// SkipTo moves the pass to journal time t without encoding.
	SkipTo(ctx context.Context, t int64) error
	// Finish ends the pass (decoding the sources to their ends when
	// decodeAll) and returns its sources' reports and the output size.
	Finish(decodeAll bool) (CameraResult, error)
	// ReadPrints identify the bytes the pass read of every source that
	// might still change.
	ReadPrints() []ReadPrint
	// Close releases the decoders and the encoder.
	Close()
}

// PartWriter writes the part of an episode still being recorded.
type PartWriter interface {
	// Sent counts the frames sent to the encoder so far.
	Sent() int
	// Advance encodes the frames whose times are before upto.
	Advance(ctx context.Context, upto int64) error
	// Finish encodes the rest of an episode of length frames and closes
	// the part.
	Finish(ctx context.Context, length int) (Part, error)
	// Abort removes the part.
	Abort()
}

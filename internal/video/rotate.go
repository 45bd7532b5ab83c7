package video

import (
	"fmt"
	"os"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
)

// maybeRotate closes the current file when the next episode of n frames
// would make it reach MaxFileBytes. The episode's size is estimated from the
// bytes per frame written so far; frames still inside the encoder count at
// that average too.
func (x *exporter) maybeRotate(n int) error {
	if x.out == nil || x.fileFrames == 0 {
		return nil
	}
	if x.opts.MaxFileFrames > 0 && x.fileFrames+n > x.opts.MaxFileFrames {
		return x.rotate()
	}
	if x.totalPackets+x.out.packets == 0 {
		return nil
	}
	bytes := x.totalBytes + x.out.bytes
	packets := x.totalPackets + x.out.packets
	perFrame := float64(bytes) / float64(packets)
	pending := x.out.sent - x.out.packets
	estimate := float64(x.out.bytes) + perFrame*float64(pending) + perFrame*float64(n)
	if estimate < float64(x.opts.MaxFileBytes) {
		return nil
	}
	return x.rotate()
}

// rotate finishes the current file and steps to the next (chunk, file)
// index as LeRobot's update_chunk_file_indices does.
func (x *exporter) rotate() error {
	if err := x.closeFile(); err != nil {
		return err
	}
	x.chunk, x.file = lerobot.NextChunkFile(x.chunk, x.file, x.opts.ChunkSize)
	return nil
}

// closeFile finishes the current output file, if any.
func (x *exporter) closeFile() error {
	if x.out == nil {
		return nil
	}
	out := x.out
	x.out = nil
	if err := out.finish(); err != nil {
		return fmt.Errorf("video: %w", err)
	}
	x.totalBytes += out.bytes
	x.totalPackets += out.packets
	if out.packets != x.fileFrames {
		return fmt.Errorf("video: %s: encoder wrote %d packets for %d frames", out.path, out.packets, x.fileFrames)
	}
	size := out.bytes
	if st, err := os.Stat(out.path); err == nil {
		size = st.Size()
	}
	x.files = append(x.files, OutputFileResult{Chunk: x.chunk, File: x.file, Path: out.path, Frames: x.fileFrames, Bytes: size})
	return nil
}

// Package video turns a camera's recorded files into LeRobot video files:
// it decodes each file once, picks for every dataset frame the source frame
// nearest in time, and encodes the picks as constant-rate mp4 (SVT-AV1 or
// x264) in process through go-astiav (FFmpeg 7.1); it never runs the ffmpeg
// command line. It also writes synthetic camera files with a frame-number
// code band (WriteSynthetic, ReadCode), and reads files back (Probe,
// DecodeEach). It is a leaf: plain inputs, no journal, plan or shard types.
//
// # Time
//
// A source frame's journal time is StartT + pts·time_base·1e9 ns, with the
// raw container pts (never start_time-adjusted: Opus pre-skip makes WebM
// start_time negative, and fragmented mp4s start late) and exact rational
// arithmetic (math/big). Target times T_k are an episode's frame clock: the
// caller gives its Start and Length, and T_k = lerobot.FrameTime(Start, k,
// FPS) is computed frame by frame, so no episode's times are ever held as a
// list (EpisodeTimes.Times, an explicit list, lets tests give other times).
//
// # Selection
//
// Per camera, with the sources' frames in presentation order (the decoder
// reorders B-frames; it is drained with SendPacket(nil) at each file's end):
//
//	next := first source frame; prev := none
//	for each episode e (times non-decreasing across episodes):
//	    open a fresh encoder writing e's part
//	    for k in [0, e.Length): T := FrameTime(e.Start, k, FPS)
//	        while next ≠ none and t(next) ≤ T:                 // advance
//	            prev := next; next := following source frame  // files in order;
//	                                                           // t must increase, else dropped
//	        chosen := prev if next = none
//	                  next if prev = none                      // camera not started
//	                  next if t(next) − T < T − t(prev)        // nearest
//	                  prev otherwise                           // tie → earlier
//	        gap += |t(chosen) − T| > 1e9/SourceFPS
//	        frame := scale chosen to W×H yuv420p (once per distinct source frame)
//	        if k ∈ sample_indices(e.Length): add frame to e's image stats
//	        encode frame with pts = k, time base 1/FPS, pict_type NONE,
//	        not a key frame, packet duration 1
//	    flush the encoder (SendFrame(nil)), drain, trailer   // while e+1 encodes
//	for each part, in order:
//	    if file not empty and payload(file) + payload(part) ≥ MaxFileBytes
//	       (or frames past MaxFileFrames):
//	        finish file; (chunk, file) := step(chunk, file)     // LeRobot's indices
//	    append the part to the file by stream copy (Joiner: re-timed onto
//	    the file's frame grid, packets untouched)
//
// Only prev, next and the converted frame are held (plus the encoders' own
// look-ahead), whatever the session length. Each episode is encoded on its
// own so that its bytes depend on its frames alone: a followed export
// (CameraEncoder driven as the session records, PartWriter.Advance while
// an attempt is recorded) writes the parts a batch export writes. The
// selection of an episode's frames depends only on the source frames and
// its times, so one pass serves every episode whatever was skipped or
// thrown away before it (SkipTo, PartWriter.Abort).
//
// Each episode then sits in its file at from_timestamp = frames before it /
// FPS, to_timestamp = from + len/FPS; the stream duration is frames/FPS
// exactly; pts = dts (no B-frames), so LeRobot finds frame k of an episode
// at from_timestamp + k/FPS.
//
// # Encoder
//
// Options follow LeRobot's encode_video_frames / get_codec_options: g, crf,
// preset and svtav1-params fast-decode=N:hierarchical-levels=4[:lp=Threads]
// for libsvtav1 (the levels FFmpeg 5.1's wrapper set, so that the AV1 bytes
// stay as they were; FFmpeg 7.1's wrapper ignores thread_count); g, crf,
// preset, bf=0, cpu-independent=1 and thread_count (DefaultX264Threads
// unless given: never counted from the CPUs, x264's bytes depend on it) for
// libx264; decoders run DefaultDecoderThreads. Every option must be
// consumed by the encoder. Colour: a full-range source is converted to
// limited range (tv), and the output is tagged with the source's matrix,
// primaries and transfer where it states them (sourceColour, outputColour).
//
// # Image statistics
//
// LeRobot's compute_episode_stats for video: the frames at
// round(linspace(0, n−1, num)) with num = max(min(n,100), min(int(n^0.75),
// 10000)), subsampled every int(max(W,H)/150) pixels when max(W,H) ≥ 300,
// per RGB channel min, max, mean, population std and the q01…q99 quantiles
// of a 5000-bin histogram, divided by 255.
//
// # Concurrency and logging
//
// ExportCamera shares nothing between calls: run one camera per goroutine.
// Calls into an encoder are bounded (ErrEncoderHung) and end with the
// caller's context.
// FFmpeg's log level is process-wide; callers set it once with
// SetLibraryLogging and never install astiav's log callback (see
// docs/video.md).
package video

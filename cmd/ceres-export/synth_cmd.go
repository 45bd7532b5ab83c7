package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ceres-robotics/ceres-export/internal/exitstatus"
	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/synth"
	"github.com/ceres-robotics/ceres-export/internal/synth/session"
)

// SynthOptions are the flags of `ceres-export synth`: synth.Options, and
// the values parse makes them from.
type SynthOptions struct {
	out              string
	specFile         string
	codec            string
	motion           string
	faults           []string
	live             bool
	speed            float64
	json             bool
	cameraStartError time.Duration
	speedGiven       bool // --speed was given
	synth.Options
}

func newSynthCmd(s streams) *cobra.Command {
	opts := SynthOptions{}
	cmd := &cobra.Command{
		Use:   "synth -o DIR [flags]",
		Short: "Write a realistic synthetic CERES session",
		Long: `Write a realistic synthetic session: the task specification contract's
example by default, an IMU at 100 Hz and a gripper at 10 Hz with jitter, camera
files encoded the way browsers record them, retries, Pass/Fail annotations and
optional faults. Camera frames carry their frame number in a code band and
sensor values the index of their sample. Deterministic for a given seed.` +
			exitstatus.Help("written", exitstatus.UsageError, exitstatus.Unreadable.As("--spec cannot be read"),
				exitstatus.Interrupted, exitstatus.WriteFailed.As("writing failed")),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.speedGiven = cmd.Flags().Changed("speed")
			return runSynth(cmd.Context(), opts, s)
		},
	}
	opts.AddFlags(cmd)
	_ = cmd.MarkFlagRequired("output")
	return cmd
}

// AddFlags registers the options' flags on cmd.
func (opts *SynthOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVarP(&opts.out, "output", "o", "", "session directory to create (required)")
	f.Uint64Var(&opts.Seed, "seed", 1, "random seed")
	f.StringVar(&opts.specFile, "spec", "", "task specification JSON (default: the contract's example)")
	f.IntVar(&opts.Cycles, "cycles", 0, "override the specification's cycleCount")
	f.Float64Var(&opts.TimeScale, "time-scale", 1, "multiply every duration of the specification")
	f.IntVar(&opts.Cameras, "cameras", 1, "number of cameras")
	f.StringVar(&opts.codec, "camera-codec", "vp8", "camera files: vp8, vp9 or av1 (WebM), h264 (MP4 with B-frames)")
	f.StringVar(&opts.CameraScene, "camera-scene", "bands", "what the cameras show: bands (a code band with each frame's number), natural (a camera-like view, no code band) or still (natural, not moving)")
	f.BoolVar(&opts.CameraFullRange, "camera-full-range", false, "record full-range levels tagged pc and BT.709, as Chromium records VP9 and AV1")
	f.DurationVar(&opts.cameraStartError, "camera-start-error", 0, "state each camera file's start this much later in the journal than its frames were taken (a wrong session, for testing verify)")
	f.BoolVar(&opts.IndexedCameras, "indexed-cameras", false, "write camera files with their index at the end (WebM Cues, MP4 moov after the media)")
	f.IntVar(&opts.Width, "width", 320, "camera width")
	f.IntVar(&opts.Height, "height", 240, "camera height")
	f.IntVar(&opts.CameraFPS, "camera-fps", 30, "nominal camera rate")
	f.IntVar(&opts.CameraFiles, "camera-files", 1, "files per camera (as after recorder restarts)")
	f.BoolVar(&opts.NoRetries, "no-retries", false, "record no retries")
	f.StringVar(&opts.motion, "motion", "index", "sensor values: index (each codes its sample's index, for exactness tests) or arm (a six-joint arm following commanded targets, its gripper, an IMU on its wrist; what kinematic checkers pass)")
	f.BoolVar(&opts.live, "live", false, "write the session as a recorder does while it records: journal records appended as their time passes, camera files growing (the same bytes as without --live)")
	f.Float64Var(&opts.speed, "speed", 1, "with --live, seconds of the session per second of the wall clock (1: real time)")
	f.BoolVar(&opts.AllDtypes, "all-dtypes", false, "add a sensor stream \"probe\" with int64 and int32, uint8, bool, float64 vector fields")
	f.StringSliceVar(&opts.faults, "fault", nil, "inject faults: crash, cut-camera, corrupt, restart (the recorder crashes half way, tearing its last record, and restarts in a new segment)")
	f.Int64Var(&opts.SegmentSize, "segment-size", 0, "journal segment size in bytes (default 64 MiB)")
	f.BoolVar(&opts.Preallocate, "preallocate", false, "write the journal as a recorder that preallocates: each segment is --segment-size bytes of zeros from its start, records written in place (its size never changes while it records)")
	addJSONFlag(cmd, &opts.json)
}

func runSynth(ctx context.Context, opts SynthOptions, s streams) error {
	if err := opts.parse(); err != nil {
		return withCode(exitstatus.UsageError, err)
	}
	var res *synth.Result
	var err error
	if opts.live {
		res, err = synth.WriteLive(ctx, opts.out, opts.Options, opts.speed)
	} else {
		res, err = synth.Write(ctx, opts.out, opts.Options)
	}
	if err != nil {
		return withCode(exitstatus.WriteFailed, err)
	}
	if opts.json {
		return writeJSON(s, "synth", res)
	}
	return withCode(exitstatus.WriteFailed, res.WriteText(s.Out))
}

// parse fills the synth options from the flags that need parsing, and
// refuses values no session could be written with.
func (opts *SynthOptions) parse() error {
	var err error
	if opts.Motion, err = session.ParseMotion(opts.motion); err != nil {
		return err
	}
	if opts.CameraCodec, err = session.ParseCodec(opts.codec); err != nil {
		return err
	}
	if err = session.CheckScene(opts.CameraScene); err != nil {
		return err
	}
	opts.CameraStartError = opts.cameraStartError.Nanoseconds()
	if opts.Faults, err = session.ParseFaults(opts.faults); err != nil {
		return err
	}
	if opts.specFile != "" {
		b, err := input.ReadFile(opts.specFile)
		if err != nil {
			return err
		}
		opts.Spec = b
	}
	if opts.speedGiven && !opts.live {
		return fmt.Errorf("--speed paces --live; without it the session is written at once")
	}
	if opts.live && !(opts.speed > 0 && opts.speed <= 1e6) {
		return fmt.Errorf("--speed %v: want a positive number of session seconds per second (1 is real time)", opts.speed)
	}
	return nil
}

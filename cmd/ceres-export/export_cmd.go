package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ceres-robotics/ceres-export/internal/exitstatus"
	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/page"
	"github.com/ceres-robotics/ceres-export/internal/progress"
	"github.com/ceres-robotics/ceres-export/internal/settings"
	"github.com/ceres-robotics/ceres-export/internal/version"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

var exportExitStatus = exitstatus.Help("the shard was written",
	exitstatus.JournalInvalid, exitstatus.NoEpisodes, exitstatus.SpecMismatch, exitstatus.ProfileMismatch, exitstatus.Strict, exitstatus.SizeUnsupported,
	exitstatus.UsageError, exitstatus.Unreadable.As("the session cannot be read"),
	exitstatus.DestinationExists, exitstatus.DestinationRefused, exitstatus.NoSalt,
	exitstatus.JournalCorrupt.As("the journal is corrupt (use --salvage to read past it)"),
	exitstatus.Interrupted, exitstatus.Busy, exitstatus.WriteFailed.As("the export failed (I/O, encoder); an existing shard is untouched"))

// ExportOptions are the flags of `ceres-export export`. The flags that shape
// the shard are settings.Settings, shared with the campaign manifest.
type ExportOptions struct {
	Session string
	Output  string
	JSON    bool
	Quiet   bool
	Replace bool
	Salt    string // --salt: never a setting, never stored
	// Follow exports while the session is recorded (export.Follow);
	// FollowIdle is its export.FollowOptions.Idle.
	Follow     bool
	FollowIdle time.Duration
	Settings   settings.Settings
	export.Options
}

// AddFlags registers the options' flags on cmd.
func (o *ExportOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "shard directory to write (required)")
	addSettingFlags(cmd, &o.Settings)
	f.BoolVar(&o.Replace, "replace", false, "replace an existing shard atomically")
	f.StringVar(&o.Salt, "salt", "", "secret that keys the salted hashes of --privacy metadata-only (never stored)")
	addJSONFlag(cmd, &o.JSON)
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress bar")
	f.BoolVar(&o.Follow, "follow", false, "export while the session is recorded: read the journal and camera files as they grow, encode each episode as its attempt ends, commit at END (the same shard as a plain export of the finished session)")
	f.DurationVar(&o.FollowIdle, "follow-idle", export.DefaultFollowIdle, "with --follow, finish once no new journal record has appeared for this long without END (the recorder is gone); a session whose journal never appears or disappears fails after this long")
}

// addSettingFlags registers one flag per settings.Settings field, named
// settings.FlagName of its JSON name (a test holds the two lists equal).
func addSettingFlags(cmd *cobra.Command, s *settings.Settings) {
	f := cmd.Flags()
	f.IntVar(&s.FPS, "fps", 0, "dataset frame rate (default: first camera's nominal fps, else first sensor stream's rate)")
	f.StringVar(&s.Profile, "profile", "", "feature profile (YAML or JSON): observation.state, action, dropped streams, camera keys (docs/profiles.md)")
	f.StringArrayVar(&s.Map, "map", nil, "one profile feature from fields, e.g. observation.state=imu.accel,imu.gyro[0:2] (repeatable; adds to --profile)")
	f.BoolVar(&s.KeepFloat64, "keep-float64", false, "write float64 fields as float64 (default float32)")
	f.StringVar(&s.RobotType, "robot-type", "", "robot_type of "+layout.InfoPath+" (default: SESSION.robotType)")
	f.BoolVar(&s.Salvage, "salvage", false, "read past journal corruption, reporting every skipped byte range")
	f.StringSliceVar(&s.Strict, "strict", nil, "turn irregularities into errors: backfill, stale, gaps (comma-separated)")
	f.StringVar(&s.TaskSpec, "task-spec", "", "apply this corrected task specification (re-export)")
	f.BoolVar(&s.NoVideoReuse, "no-video-reuse", false, "encode every camera even when the replaced shard holds the same video")
	f.StringVar(&s.Vcodec, "vcodec", "av1", "video codec: av1 (libsvtav1) or h264 (libx264)")
	f.IntVar(&s.CRF, "crf", 0, "encoder CRF (default 30)")
	f.StringVar(&s.Preset, "preset", "", "encoder preset (default 12 for av1, veryfast for h264)")
	f.IntVar(&s.G, "g", 0, "GOP size (default 2)")
	f.StringVar(&s.VideoSize, "video-size", "", "output WIDTHxHEIGHT (default: the source's, even-rounded)")
	f.IntVar(&s.CameraJobs, "camera-jobs", 0, "cameras encoded at once (default: one per CPU core)")
	f.IntVar(&s.EncoderThreads, "encoder-threads", 0, "threads per encoder (default: 3 for h264, SVT-AV1's choice for av1; docs/video.md)")
	f.StringVar(&s.Org, "org", "", "organisation id, the root group of the task descriptors ("+layout.DescriptorsPath+")")
	f.StringArrayVar(&s.TaskGroup, "task-group", nil, "a task descriptor group level after the task, LEVEL=KEY (repeatable, root first)")
	f.BoolVar(&s.NoReport, "no-report", false, "do not write the session page "+layout.SessionPagePath)
	f.StringVar(&s.Privacy, "privacy", "full", "full, or metadata-only: a dataset that may leave the lab (no video, no instructions or run titles, salted ids; needs --salt)")
	f.StringVar(&s.License, "license", "", "the dataset card's licence, a Hugging Face Hub licence id (apache-2.0, mit, cc-by-4.0, cc-by-nc-4.0, cc0-1.0, other, ...; default: none)")
}

func newExportCmd(s streams) *cobra.Command {
	return newExportCmdWith(s, runExport)
}

// newExportCmdWith builds the command; tests inject runF to check flag
// parsing.
func newExportCmdWith(s streams, runF func(context.Context, ExportOptions, streams) error) *cobra.Command {
	opts := ExportOptions{}
	cmd := &cobra.Command{
		Use:   "export SESSION_DIR -o SHARD_DIR [flags]",
		Short: "Write a LeRobot v3.0 shard from a CERES session",
		Long: `Write a LeRobot v3.0 shard from a CERES session: one episode per accepted
attempt (retried and incomplete attempts never reach it), sensor rows on the
frame clock, camera video cut frame-accurately, metadata, the canonical task
specification, an export report and a session page (` + layout.SessionPagePath + `, see
the report command) under ` + layout.CeresDir + `/.` + exportExitStatus,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Session = args[0]
			if cmd.Flags().Changed("follow-idle") && !opts.Follow {
				return withCode(exitstatus.UsageError, errors.New("--follow-idle applies to --follow"))
			}
			if opts.Follow && opts.FollowIdle <= 0 {
				return withCode(exitstatus.UsageError, fmt.Errorf("--follow-idle %s: want a positive duration", opts.FollowIdle))
			}
			if err := opts.resolve(); err != nil {
				return withCode(exitstatus.UsageError, err)
			}
			return runF(cmd.Context(), opts, s)
		},
	}
	opts.AddFlags(cmd)
	_ = cmd.MarkFlagRequired("output")
	return cmd
}

// resolve turns the string flags into Options.
func (o *ExportOptions) resolve() error {
	opts, err := export.Resolve(o.Settings, "")
	if err != nil {
		return settings.AsFlag(err)
	}
	opts.Replace = o.Replace
	opts.Salt = o.Salt
	if err := opts.Privacy.Check(opts.Salt); err != nil {
		return err
	}
	opts.Version = version.Tool()
	if !o.Settings.NoReport {
		opts.Page = page.ShardPage
	}
	o.Options = opts
	return nil
}

// exportSummary is the --json output.
type exportSummary struct {
	Shard  string         `json:"shard"`
	Report *export.Report `json:"report"`
}

func runExport(ctx context.Context, opts ExportOptions, s streams) error {
	if !opts.Quiet && !opts.JSON {
		bars := progress.NewBars(s.Err, s.progressEvery())
		defer bars.Close()
		opts.Progress = bars
	}
	opts.VideoFiles = video.Files{}
	var rep *export.Report
	var err error
	if opts.Follow {
		fo := export.FollowOptions{Idle: opts.FollowIdle, Logger: s.Logger()}
		if !opts.Quiet && !opts.JSON {
			fp := progress.NewFollow(s.Err, s.progressEvery())
			defer fp.Close()
			fo.Status = fp.Set
		}
		rep, err = export.Follow(ctx, opts.Session, opts.Output, opts.Options, fo)
	} else {
		rep, err = export.Export(ctx, opts.Session, opts.Output, opts.Options)
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(s, "summary", exportSummary{Shard: opts.Output, Report: rep})
	}
	return withCode(exitstatus.WriteFailed, rep.WriteText(s.Out, opts.Output))
}

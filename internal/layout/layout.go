// Package layout names every path of the directories ceres-export writes
// and reads, in this one file, as archive/zip's struct.go holds every
// constant of its format: LeRobot v3.0's files of a dataset (a shard or a
// merged dataset), CERES's own files under ceres/, the episode columns
// of meta/episodes with the ceres/* columns and the record they hold, and
// the files of a campaign directory. No other package spells one of these
// paths or column names; verify's independent reader keeps its own
// patterns for the files it accepts (on purpose: it checks the writers
// against the format, not against themselves), and takes the CERES files
// and columns it requires from here.
//
// Paths are relative to the directory's root and slash-separated; join
// them with filepath.FromSlash.
//
// The format this spells is described in docs/lerobot-format.md (LeRobot's
// part) and docs/export-semantics.md (CERES's part).
package layout

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/ceres-robotics/ceres-export/internal/lerobot"
)

// LeRobot v3.0's files (lerobot/datasets/utils.py of LeRobot 0.4:
// DEFAULT_DATA_PATH, DEFAULT_VIDEO_PATH, INFO_PATH, STATS_PATH, TASKS_PATH,
// DEFAULT_EPISODES_PATH). LeRobot's merge hard-codes the default
// templates, so a dataset uses nothing else.
const (
	// DataPathTemplate and VideoPathTemplate are info.json's data_path and
	// video_path, in Python format syntax; DataPath and VideoPath expand
	// them.
	DataPathTemplate  = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
	VideoPathTemplate = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"

	InfoPath  = "meta/info.json"
	StatsPath = "meta/stats.json"
	TasksPath = "meta/tasks.parquet"
	// EpisodesDir holds the episode-metadata files (EpisodesPath).
	EpisodesDir = "meta/episodes"
	// DataDir and VideosDir hold the data files and the video files.
	DataDir   = "data"
	VideosDir = "videos"
	// CardPath is the dataset card, README.md as LeRobot's
	// create_lerobot_dataset_card writes it for the Hub.
	CardPath = "README.md"
)

// DataPath is data file (chunk, file): DataPathTemplate expanded.
func DataPath(chunk, file int) string {
	return fmt.Sprintf("%s/chunk-%03d/file-%03d.parquet", DataDir, chunk, file)
}

// VideoDir is the directory of one video feature's files.
func VideoDir(key string) string { return VideosDir + "/" + key }

// VideoPath is video file (chunk, file) of the video feature key:
// VideoPathTemplate expanded.
func VideoPath(key string, chunk, file int) string {
	return fmt.Sprintf("%s/chunk-%03d/file-%03d.mp4", VideoDir(key), chunk, file)
}

// EpisodesPath is episode-metadata file (chunk, file).
func EpisodesPath(chunk, file int) string {
	return fmt.Sprintf("%s/chunk-%03d/file-%03d.parquet", EpisodesDir, chunk, file)
}

// chunkFileRe matches the chunk and file part of a data, video or
// episode-metadata file's path, "chunk-CCC/file-FFF" (the groups are the
// indices), its directory and extension cut off.
var chunkFileRe = regexp.MustCompile(`^chunk-(\d{3,})/file-(\d{3,})$`)

// ChunkFile parses rel, a slash-separated path dir/chunk-CCC/file-FFF<ext>
// (DataPath, VideoPath, EpisodesPath), into its chunk and file indices;
// ok is false for any other path.
func ChunkFile(rel, dir, ext string) (chunk, file int, ok bool) {
	rest, ok := strings.CutPrefix(rel, dir+"/")
	if !ok {
		return 0, 0, false
	}
	if rest, ok = strings.CutSuffix(rest, ext); !ok {
		return 0, 0, false
	}
	m := chunkFileRe.FindStringSubmatch(rest)
	if m == nil {
		return 0, 0, false
	}
	chunk, err1 := strconv.Atoi(m[1])
	file, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return chunk, file, true
}

// VideoExt and ParquetExt end a video file's and a Parquet file's name.
const (
	VideoExt   = ".mp4"
	ParquetExt = ".parquet"
)

// CERES's own files, under CeresDir. LeRobot never reads them; every tool
// that copies a dataset keeps them.
const (
	CeresDir = "ceres"

	// OutputMarkerPath marks a directory this tool made (a shard, a merged
	// dataset, a campaign directory); internal/output writes it on commit
	// and replaces only directories that hold it.
	OutputMarkerPath = CeresDir + "/output.json"
	// SpecsDir holds the canonical task specifications, SpecPath(hash); a
	// metadata-only dataset holds their redacted copies in RedactedSpecsDir
	// instead, under the original's hash.
	SpecsDir         = CeresDir + "/task-specifications"
	RedactedSpecsDir = CeresDir + "/task-specifications-redacted"
	// ExportReportPath is an export's report (export.Report): every attempt
	// and its fate; its SHA-256 names the shard.
	ExportReportPath = CeresDir + "/export-report.json"
	// MergeReportPath is a merge's report (merge.Report): the sources and
	// what was joined.
	MergeReportPath = CeresDir + "/merge-report.json"
	// SessionPagePath is the session page (HTML) an export writes.
	SessionPagePath = CeresDir + "/report.html"
	// VideosPath records each camera's encoded files and content key, which
	// a re-export trusts to reuse them.
	VideosPath = CeresDir + "/videos.json"
	// DescriptorsPath holds the task descriptors (descriptor.File).
	DescriptorsPath = CeresDir + "/tasks.json"
	// PrivacyMarkerPath marks a metadata-only dataset (privacy.Marker).
	PrivacyMarkerPath = CeresDir + "/privacy.json"
	// ProfilePath is the feature profile an export applied, canonical.
	ProfilePath = CeresDir + "/profile.json"
	// CampaignPath names the campaign task attempt that made a shard
	// (shard.CampaignOrigin).
	CampaignPath = CeresDir + "/campaign.json"
	// ExtensionsPath holds a campaign task's merged extensions.
	ExtensionsPath = CeresDir + "/extensions.json"
	// SealPath holds the SHA-256 of every file of a shard or merged
	// dataset as its export or merge committed it (shard.Seal): a full
	// verify checks every file against it, and an append trusts a
	// dataset whose files still hash to it and verifies any other in full
	// (docs/merge.md, "--into").
	SealPath = CeresDir + "/seal.json"
	// SourcesDir holds, in a merged dataset, each source shard's own files
	// by source index: SourcePath(i, ExportReportPath), ...
	SourcesDir = CeresDir + "/sources"
)

// SpecPath is the stored canonical specification of SHA-256 hash (hex).
func SpecPath(hash string) string { return SpecsDir + "/" + hash + ".json" }

// RedactedSpecPath is the redacted copy of specification hash in a
// metadata-only dataset.
func RedactedSpecPath(hash string) string { return RedactedSpecsDir + "/" + hash + ".json" }

// SpecFileExt ends the name of a stored specification.
const SpecFileExt = ".json"

// SourcePath is where a merged dataset keeps file (a CERES path of the
// source shard, such as ExportReportPath) of source number index:
// "ceres/sources/0003.export-report.json". Flat, not a directory per
// source: a merge of thousands of shards would otherwise make (and an
// append to it remake) thousands of directories, half a millisecond each.
func SourcePath(index int, file string) string {
	return fmt.Sprintf("%s/%04d.%s", SourcesDir, index, path.Base(file))
}

// LegacySourcePath is where merged datasets written before 2026-12-04 kept
// SourcePath's file: "ceres/sources/0003/export-report.json". Readers
// accept it (ParseSourcePath, SourceSibling); nothing writes it.
func LegacySourcePath(index int, file string) string {
	return fmt.Sprintf("%s/%04d/%s", SourcesDir, index, path.Base(file))
}

// ParseSourcePath returns the source number and file name of rel, a path
// of SourcePath's or LegacySourcePath's form; ok is false for any other.
func ParseSourcePath(rel string) (index int, name string, ok bool) {
	rest, found := strings.CutPrefix(rel, SourcesDir+"/")
	if !found {
		return 0, "", false
	}
	num, name, found := strings.Cut(rest, ".")
	if dir, file, legacy := strings.Cut(rest, "/"); legacy {
		num, name, found = dir, file, true
	}
	if !found || len(num) < 4 || name == "" || strings.Contains(name, "/") || strings.Trim(num, "0123456789") != "" {
		return 0, "", false
	}
	n, err := strconv.Atoi(num)
	if err != nil {
		return 0, "", false
	}
	return n, name, true
}

// SourceSibling is the path of file (a CERES path, such as ProfilePath)
// of the source whose file rel is, in rel's form; "" when rel is no
// source's file.
func SourceSibling(rel, file string) string {
	index, _, ok := ParseSourcePath(rel)
	switch {
	case !ok:
		return ""
	case strings.Count(rel, "/") > strings.Count(SourcesDir, "/")+1:
		return LegacySourcePath(index, file)
	default:
		return SourcePath(index, file)
	}
}

// MergeRule says what a merge does with a CERES file of its sources.
type MergeRule int

const (
	// MergeDrop: the file describes the source's own video or page and
	// does not hold for the merged dataset.
	MergeDrop MergeRule = iota
	// MergePerSource: the file identifies the source; the merged dataset
	// keeps it under SourcePath.
	MergePerSource
	// MergeWritten: the merge writes the dataset's own (pooled, joined or
	// a fresh report or marker).
	MergeWritten
)

// CeresFile is one file of a dataset under CeresDir, or a directory of
// such files.
type CeresFile struct {
	Path string
	// Dir says Path is a directory: the files are under it.
	Dir bool
	// Merge is what a merge does with a source's copy.
	Merge MergeRule
	// InShard and InMerged say in which kind of dataset the file may be
	// (not that it must: several are optional).
	InShard, InMerged bool
	// Carried marks a file export writes on behalf of its caller, unchanged
	// (export.Options.CeresFiles: a campaign task's identity and
	// extensions); the exporter's own files are never a caller's.
	Carried bool
}

// CeresFiles lists every CERES file of a dataset, directories of several
// files (SpecsDir, RedactedSpecsDir, SourcesDir) as their directory. The
// merge's handling, verify's list of known files and the reader follow
// it; a file not listed here is a stray.
var CeresFiles = []CeresFile{
	{Path: OutputMarkerPath, Merge: MergeWritten, InShard: true, InMerged: true},
	{Path: SpecsDir, Dir: true, Merge: MergeWritten, InShard: true, InMerged: true},
	{Path: RedactedSpecsDir, Dir: true, Merge: MergeWritten, InShard: true, InMerged: true},
	{Path: ExportReportPath, Merge: MergePerSource, InShard: true},
	{Path: MergeReportPath, Merge: MergeWritten, InMerged: true},
	{Path: SessionPagePath, Merge: MergeDrop, InShard: true},
	{Path: VideosPath, Merge: MergeDrop, InShard: true},
	{Path: DescriptorsPath, Merge: MergeWritten, InShard: true, InMerged: true},
	{Path: PrivacyMarkerPath, Merge: MergeWritten, InShard: true, InMerged: true},
	{Path: ProfilePath, Merge: MergePerSource, InShard: true},
	{Path: CampaignPath, Merge: MergePerSource, InShard: true, Carried: true},
	{Path: ExtensionsPath, Merge: MergePerSource, InShard: true, Carried: true},
	{Path: SourcesDir, Dir: true, Merge: MergeWritten, InMerged: true},
	{Path: SealPath, Merge: MergeWritten, InShard: true, InMerged: true},
}

// LookupCeresFile returns the entry of CeresFiles that rel (a file's path
// under CeresDir) is, or lies in.
func LookupCeresFile(rel string) (CeresFile, bool) {
	for _, f := range CeresFiles {
		if !f.Dir && rel == f.Path || f.Dir && strings.HasPrefix(rel, f.Path+"/") && len(rel) > len(f.Path)+1 {
			return f, true
		}
	}
	return CeresFile{}, false
}

// PerSourceFiles are the CERES files a merge keeps per source
// (MergePerSource), in CeresFiles order.
func PerSourceFiles() []string {
	var out []string
	for _, f := range CeresFiles {
		if f.Merge == MergePerSource {
			out = append(out, f.Path)
		}
	}
	return out
}

// The columns of meta/episodes LeRobot writes, in its order
// (save_episode / _save_episode_metadata): these, then per video feature
// VideoColumn(key, ...), per feature with statistics StatsColumn(name,
// stat), then the episode-metadata location; CERES's columns follow.
const (
	ColEpisodeIndex     = "episode_index"
	ColTasks            = "tasks"
	ColLength           = "length"
	ColDataChunkIndex   = "data/chunk_index"
	ColDataFileIndex    = "data/file_index"
	ColDatasetFromIndex = "dataset_from_index"
	ColDatasetToIndex   = "dataset_to_index"
	ColMetaChunkIndex   = "meta/episodes/chunk_index"
	ColMetaFileIndex    = "meta/episodes/file_index"
)

// The per-video columns of meta/episodes: VideoColumn(key, VideoChunkIndex).
const (
	VideoChunkIndex    = "chunk_index"
	VideoFileIndex     = "file_index"
	VideoFromTimestamp = "from_timestamp"
	VideoToTimestamp   = "to_timestamp"
)

// VideoColumn is column field (VideoChunkIndex, ...) of video feature key.
func VideoColumn(key, field string) string { return VideosDir + "/" + key + "/" + field }

// StatsColumn is per-episode statistic stat (min, max, mean, std, count,
// q01 ...) of feature name.
func StatsColumn(name, stat string) string { return StatsColumnPrefix + name + "/" + stat }

// StatsColumnPrefix begins every StatsColumn.
const StatsColumnPrefix = "stats/"

// The columns of meta/tasks.parquet: task_index, and the task string as
// the pandas index, a "task" column (newer LeRobot, this tool) or
// "__index_level_0__" (LeRobot 0.4.4 writes it unnamed).
const (
	TasksColIndex       = "task_index"
	TasksColTask        = "task"
	TasksColTaskUnnamed = "__index_level_0__"
)

// CeresEpisode is the CERES record of one episode: its ceres/* columns of
// meta/episodes (docs/export-semantics.md, "Provenance"). EpisodeColumns
// lists them; writer and reader both go through that list, so a field
// added here with its entry there is written, read, merged and verified.
type CeresEpisode struct {
	SessionID, TaskID, TaskLabel, TaskType string
	Cycle, Repetition, Attempt             int64
	// Outcome is "pass" or "fail", nil when not annotated (written as null).
	Outcome          *string
	StartNS, EndNS   int64
	SpecVersion      int64
	SpecHash         string
	RecordedSpecHash string
	// TaskDescriptorID names the task's descriptor in DescriptorsPath.
	TaskDescriptorID string
	// Source says where an episode of a merged dataset came from (nil in
	// an exported shard).
	Source *EpisodeSource
	// Foreign marks an episode of a merged dataset that came from a
	// LeRobot dataset CERES did not record (a foreign merge source): it
	// has no session, task, attempt or specification, so every ceres/*
	// column but the ceres/source/* ones is null, and so is
	// ceres/source/export_report_sha256 (ForeignNull).
	Foreign bool
}

// ForeignNull says whether column c is null in a foreign episode.
func (c EpisodeColumn) ForeignNull() bool { return !c.Merged || c.Name == ColSourceReportSHA256 }

// EpisodeSource is the provenance of one episode of a merged dataset: the
// ceres/source/* columns of meta/episodes.
type EpisodeSource struct {
	// Index is the source's position in the merge report's "sources".
	Index int64
	// Name is the source shard's directory name.
	Name string
	// ReportSHA256 is the SHA-256 of the source shard's export report.
	ReportSHA256 string
	// EpisodeIndex is the episode's episode_index in the source shard.
	EpisodeIndex int64
	// CampaignTaskID and CampaignAttempt name the campaign task and
	// attempt that made the source shard; nil when it was not made by one.
	CampaignTaskID  *string
	CampaignAttempt *int64
}

// EpisodeColumn is one ceres/* column of meta/episodes.
type EpisodeColumn struct {
	Name string
	// Dtype is lerobot.String or lerobot.Int64 (an Arrow string or int64
	// column, nullable as pyarrow writes every column).
	Dtype lerobot.Dtype
	// Null says whether the value may be null (a nil pointer).
	Null bool
	// Merged marks a column only a merged dataset has (ceres/source/*),
	// held in CeresEpisode.Source.
	Merged bool
	// Field returns a pointer to the value in e: *string, *int64, or for a
	// Null column **string, **int64. e.Source is non-nil for Merged.
	Field func(e *CeresEpisode) any
}

// CeresPrefix begins every CERES column name.
const CeresPrefix = CeresDir + "/"

// The ceres/* column names.
const (
	ColSessionID        = CeresPrefix + "session_id"
	ColTaskID           = CeresPrefix + "task_id"
	ColTaskLabel        = CeresPrefix + "task_label"
	ColTaskType         = CeresPrefix + "task_type"
	ColTaskDescriptorID = CeresPrefix + "task_descriptor_id"
	ColCycle            = CeresPrefix + "cycle"
	ColRepetition       = CeresPrefix + "repetition"
	ColAttempt          = CeresPrefix + "attempt"
	ColOutcome          = CeresPrefix + "outcome"
	ColStartNS          = CeresPrefix + "start_ns"
	ColEndNS            = CeresPrefix + "end_ns"
	ColSpecVersion      = CeresPrefix + "task_specification/version"
	ColSpecHash         = CeresPrefix + "task_specification/hash"
	ColRecordedSpecHash = CeresPrefix + "task_specification/recorded_hash"

	SourcePrefix             = CeresPrefix + "source/"
	ColSourceIndex           = SourcePrefix + "index"
	ColSourceName            = SourcePrefix + "name"
	ColSourceReportSHA256    = SourcePrefix + "export_report_sha256"
	ColSourceEpisodeIndex    = SourcePrefix + "episode_index"
	ColSourceCampaignTaskID  = SourcePrefix + "campaign_task_id"
	ColSourceCampaignAttempt = SourcePrefix + "campaign_attempt"
)

// EpisodeColumns are the ceres/* columns in the order they follow
// LeRobot's; the Merged ones come last and only in a merged dataset.
var EpisodeColumns = []EpisodeColumn{
	{Name: ColSessionID, Dtype: lerobot.String, Field: func(e *CeresEpisode) any { return &e.SessionID }},
	{Name: ColTaskID, Dtype: lerobot.String, Field: func(e *CeresEpisode) any { return &e.TaskID }},
	{Name: ColTaskLabel, Dtype: lerobot.String, Field: func(e *CeresEpisode) any { return &e.TaskLabel }},
	{Name: ColTaskType, Dtype: lerobot.String, Field: func(e *CeresEpisode) any { return &e.TaskType }},
	{Name: ColTaskDescriptorID, Dtype: lerobot.String, Field: func(e *CeresEpisode) any { return &e.TaskDescriptorID }},
	{Name: ColCycle, Dtype: lerobot.Int64, Field: func(e *CeresEpisode) any { return &e.Cycle }},
	{Name: ColRepetition, Dtype: lerobot.Int64, Field: func(e *CeresEpisode) any { return &e.Repetition }},
	{Name: ColAttempt, Dtype: lerobot.Int64, Field: func(e *CeresEpisode) any { return &e.Attempt }},
	{Name: ColOutcome, Dtype: lerobot.String, Null: true, Field: func(e *CeresEpisode) any { return &e.Outcome }},
	{Name: ColStartNS, Dtype: lerobot.Int64, Field: func(e *CeresEpisode) any { return &e.StartNS }},
	{Name: ColEndNS, Dtype: lerobot.Int64, Field: func(e *CeresEpisode) any { return &e.EndNS }},
	{Name: ColSpecVersion, Dtype: lerobot.Int64, Field: func(e *CeresEpisode) any { return &e.SpecVersion }},
	{Name: ColSpecHash, Dtype: lerobot.String, Field: func(e *CeresEpisode) any { return &e.SpecHash }},
	{Name: ColRecordedSpecHash, Dtype: lerobot.String, Field: func(e *CeresEpisode) any { return &e.RecordedSpecHash }},

	{Name: ColSourceIndex, Dtype: lerobot.Int64, Merged: true, Field: func(e *CeresEpisode) any { return &e.Source.Index }},
	{Name: ColSourceName, Dtype: lerobot.String, Merged: true, Field: func(e *CeresEpisode) any { return &e.Source.Name }},
	{Name: ColSourceReportSHA256, Dtype: lerobot.String, Merged: true, Field: func(e *CeresEpisode) any { return &e.Source.ReportSHA256 }},
	{Name: ColSourceEpisodeIndex, Dtype: lerobot.Int64, Merged: true, Field: func(e *CeresEpisode) any { return &e.Source.EpisodeIndex }},
	{Name: ColSourceCampaignTaskID, Dtype: lerobot.String, Null: true, Merged: true, Field: func(e *CeresEpisode) any { return &e.Source.CampaignTaskID }},
	{Name: ColSourceCampaignAttempt, Dtype: lerobot.Int64, Null: true, Merged: true, Field: func(e *CeresEpisode) any { return &e.Source.CampaignAttempt }},
}

// Get returns the column's value in e: a string or int64, or nil for a
// null (a nil pointer of a Null column, or a Merged column of an episode
// without Source).
func (c EpisodeColumn) Get(e *CeresEpisode) any {
	if c.Merged && e.Source == nil || e.Foreign && c.ForeignNull() {
		return nil
	}
	switch p := c.Field(e).(type) {
	case *string:
		return *p
	case *int64:
		return *p
	case **string:
		if *p == nil {
			return nil
		}
		return **p
	case **int64:
		if *p == nil {
			return nil
		}
		return **p
	}
	panic("layout: column " + c.Name + " has no field")
}

// Set stores v (a string or int64 as Dtype says, or nil for a null of a
// Null column) in e, making e.Source for a Merged column. It reports false
// when v does not fit the column.
func (c EpisodeColumn) Set(e *CeresEpisode, v any) bool {
	if c.Merged && e.Source == nil {
		e.Source = &EpisodeSource{}
	}
	switch p := c.Field(e).(type) {
	case *string:
		s, ok := v.(string)
		*p = s
		return ok
	case *int64:
		n, ok := v.(int64)
		*p = n
		return ok
	case **string:
		s, ok := v.(string)
		*p = nil
		if ok {
			*p = &s
		}
		return ok || v == nil
	case **int64:
		n, ok := v.(int64)
		*p = nil
		if ok {
			*p = &n
		}
		return ok || v == nil
	}
	return false
}

// CeresColumns returns the ceres/* columns of a shard (merged false) or of
// a merged dataset (merged true, with ceres/source/*).
func CeresColumns(merged bool) []EpisodeColumn {
	var out []EpisodeColumn
	for _, c := range EpisodeColumns {
		if !c.Merged || merged {
			out = append(out, c)
		}
	}
	return out
}

// A campaign directory (batch -o OUT): a shard per task at OUT/<task id>,
// the attempt records, the campaign page and the scheduler's files.
const (
	// AttemptsDir holds the attempt records: AttemptsDir/<task id>/
	// AttemptRecordName(n).
	AttemptsDir = ".attempts"
	// FencingTokenPath is the campaign's fencing-token counter (the last
	// token taken, decimal), FencingTokenLockPath the lock it is taken
	// under: each attempt's token, in its record, decides which attempt
	// may commit a shard.
	FencingTokenPath     = AttemptsDir + "/fencing-token"
	FencingTokenLockPath = AttemptsDir + "/fencing-token.lock"
	// CampaignPagePath is the campaign page.
	CampaignPagePath = "index.html"
	// SlurmDir holds the sbatch scripts and, under SlurmLogsDir, the jobs'
	// output.
	SlurmDir         = ".slurm"
	SlurmLogsDir     = SlurmDir + "/logs"
	SlurmArrayScript = SlurmDir + "/array.sbatch"
	SlurmMergeScript = SlurmDir + "/merge.sbatch"
	// SlurmGroupsScript is the job array merging groups of shards, the
	// first level of a merge in a tree; MergeGroupsDir holds their merged
	// datasets until the final merge has joined them.
	SlurmGroupsScript = SlurmDir + "/merge-groups.sbatch"
	// SlurmRerunScript is the job after the array, whatever its state,
	// that runs what the array left undone.
	SlurmRerunScript = SlurmDir + "/rerun.sbatch"
	// SlurmSubmissionPath records the jobs of the campaign's latest
	// submission: another is refused while they are queued or running.
	SlurmSubmissionPath = SlurmDir + "/submission.json"
	MergeGroupsDir      = ".merge-groups"
	attemptRecordStem   = "attempt-"
)

// MergeGroupPath is group g of setting's shards, merged, in a campaign
// directory.
func MergeGroupPath(setting string, g int) string {
	return fmt.Sprintf("%s/%s/group-%04d", MergeGroupsDir, setting, g)
}

// AttemptRecordName is the file name of attempt n's record.
func AttemptRecordName(n int) string { return fmt.Sprintf("%s%04d.json", attemptRecordStem, n) }

// AttemptRecordPattern matches AttemptRecordName; its group is the number.
const AttemptRecordPattern = `^` + attemptRecordStem + `([0-9]{4,})\.json$`

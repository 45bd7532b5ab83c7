package campaign

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/output"
	"github.com/ceres-robotics/ceres-export/internal/settings"
	"github.com/ceres-robotics/ceres-export/internal/shard"
)

// RecordVersion is the version of the attempt record's JSON shape. Fields
// are only ever added within one version.
const RecordVersion = 1

// Attempt states.
const (
	StateRunning     = "running"     // the attempt has started and not ended
	StateSucceeded   = "succeeded"   // the shard was written
	StateFailed      = "failed"      // the export failed; the old shard, if any, is untouched
	StateInterrupted = "interrupted" // cancelled, killed or lost before it ended
	// StateSuperseded: a newer attempt of the task started before this
	// one could commit (it froze, its node stalled, and the task was run
	// again); its commit was refused and the shard is the newer one's.
	StateSuperseded = "superseded"
)

// ErrSuperseded is the refusal of an attempt's commit: a newer attempt of
// the same task has started (a greater fencing token).
var ErrSuperseded = errors.New("a newer attempt of the task has started")

// Record is one attempt of one task: OUT/.attempts/<task id>/attempt-NNNN.json.
// Its JSON shape is documented in docs/campaigns.md and stable within
// RecordVersion; a record is written when the attempt starts (state
// running) and replaced atomically when it ends.
type Record struct {
	RecordVersion int    `json:"record_version"`
	TaskID        string `json:"task_id"`
	CampaignID    string `json:"campaign_id"`
	CaseID        string `json:"case_id"`
	SettingID     string `json:"setting_id"`
	RunID         string `json:"run_id"`
	AttemptNo     int    `json:"attempt_no"`
	// FencingToken is the campaign's fencing token the attempt took when
	// it started: a number that only grows within OUT, taken in the order
	// the attempts start. Only the attempt holding the greatest token of
	// its task may commit the shard (CheckFence); 0 in records of tools
	// before fencing.
	FencingToken int64  `json:"fencing_token,omitempty"`
	State        string `json:"state"`
	// ExitStatus is the export's exit status (the CLI's codes), null while
	// running or when interrupted.
	ExitStatus *int   `json:"exit_status"`
	Error      string `json:"error,omitempty"`
	// Category is what an attempt that did not succeed failed of
	// (Category*); the task's retry policy decides by it.
	Category string `json:"category,omitempty"`
	// Note says how the record was finished when not by its own attempt.
	Note      string  `json:"note,omitempty"`
	StartedAt string  `json:"started_at"` // RFC 3339, UTC
	EndedAt   string  `json:"ended_at,omitempty"`
	DurationS float64 `json:"duration_s"`
	// Fingerprint covers everything the shard is made from (Inputs, the
	// resolved options, identity, extensions, tool version).
	Fingerprint string                     `json:"fingerprint"`
	Inputs      Inputs                     `json:"inputs"`
	Tool        Tool                       `json:"tool"`
	Session     string                     `json:"session"`
	Shard       string                     `json:"shard"` // relative to OUT
	Options     settings.Settings          `json:"options"`
	Extensions  map[string]json.RawMessage `json:"extensions"`
	Expected    *Expected                  `json:"expected,omitempty"`
	// Expectation is the check of Expected after the attempt ended.
	Expectation *Expectation `json:"expectation,omitempty"`
	Episodes    int          `json:"episodes"`
	Frames      int          `json:"frames"`
	// ShardReportSHA256 is the SHA-256 of the shard's
	// ceres/export-report.json, tying the record to the shard it made.
	ShardReportSHA256 string `json:"shard_report_sha256,omitempty"`
	Host              string `json:"host"`
	PID               int    `json:"pid"`
	// Array is the array share the attempt ran in, when it ran in one.
	Array *ArrayShare `json:"array,omitempty"`
	// Scheduler holds the scheduler's ids (SLURM_JOB_ID, ...), as found in
	// the environment.
	Scheduler map[string]string `json:"scheduler,omitempty"`
}

// Tool names the program that made the attempt.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ArrayShare is one array task's place.
type ArrayShare struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Expectation is the outcome of checking Expected.
type Expectation struct {
	Met    bool     `json:"met"`
	Misses []string `json:"misses,omitempty"`
}

var recordNameRe = regexp.MustCompile(layout.AttemptRecordPattern)

func recordName(n int) string { return layout.AttemptRecordName(n) }

// taskRecordsDir is OUT/<layout.AttemptsDir>/<task id>.
func taskRecordsDir(out, taskID string) string { return filepath.Join(out, layout.AttemptsDir, taskID) }

// DamagedRecord is an attempt record that cannot be read (cut short,
// edited by hand, not a regular file): reported, while the task's other
// records still count.
type DamagedRecord struct {
	TaskID string `json:"task_id"`
	Path   string `json:"path"`
	Error  string `json:"error"`
}

// DamagedError lists damaged records.
type DamagedError struct{ Records []DamagedRecord }

func (e *DamagedError) Error() string {
	var parts []string
	for _, d := range e.Records {
		parts = append(parts, d.Error)
	}
	return strings.Join(parts, "; ")
}

// ReadRecords returns a task's records in attempt order. Damaged records
// are left out and reported by a *DamagedError beside the others; any
// other error means no records could be read.
func ReadRecords(out, taskID string) ([]Record, error) {
	recs, damaged, err := readTaskRecords(out, taskID)
	if err == nil && len(damaged) > 0 {
		err = &DamagedError{Records: damaged}
	}
	return recs, err
}

// readTaskRecords returns a task's readable records in attempt order and
// its damaged ones.
func readTaskRecords(out, taskID string) ([]Record, []DamagedRecord, error) {
	dir := taskRecordsDir(out, taskID)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("attempt records: %w", err)
	}
	var recs []Record
	var damaged []DamagedRecord
	for _, e := range entries {
		if !recordNameRe.MatchString(e.Name()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		b, err := input.ReadFile(p)
		var r Record
		if err == nil {
			if err = json.Unmarshal(b, &r); err == nil && (r.AttemptNo < 1 || recordName(r.AttemptNo) != e.Name()) {
				err = fmt.Errorf("attempt_no %d does not match its name", r.AttemptNo)
			}
		}
		if err != nil {
			damaged = append(damaged, DamagedRecord{TaskID: taskID, Path: p, Error: fmt.Sprintf("attempt record %s: %v", p, err)})
			continue
		}
		recs = append(recs, r)
	}
	slices.SortFunc(recs, func(a, b Record) int { return a.AttemptNo - b.AttemptNo })
	return recs, damaged, nil
}

// ReadAllRecords returns every task's readable records under out, by task
// id, and the damaged ones.
func ReadAllRecords(out string) (map[string][]Record, []DamagedRecord, error) {
	entries, err := os.ReadDir(filepath.Join(out, layout.AttemptsDir))
	if err != nil {
		return nil, nil, fmt.Errorf("attempt records of %s: %w", out, err)
	}
	all := map[string][]Record{}
	var damaged []DamagedRecord
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		recs, d, err := readTaskRecords(out, e.Name())
		if err != nil {
			return nil, nil, err
		}
		damaged = append(damaged, d...)
		if len(recs) > 0 {
			all[e.Name()] = recs
		}
	}
	return all, damaged, nil
}

// CreateRecord writes r as the task's next attempt and sets r.AttemptNo
// and r.FencingToken. The file appears whole or not at all and never
// replaces another (output.CreateFile), so two attempts never share a
// number. The token is taken and the record written under the campaign's
// token lock, so that a task's tokens grow with its attempt numbers.
func CreateRecord(out string, r *Record) error {
	return withTokenLock(out, func() error {
		token, err := nextFencingToken(out)
		if err != nil {
			return err
		}
		r.FencingToken = token
		return createRecordLocked(out, r)
	})
}

func createRecordLocked(out string, r *Record) error {
	dir := taskRecordsDir(out, r.TaskID)
	// A damaged record keeps its number: the link below skips taken ones.
	recs, _, err := readTaskRecords(out, r.TaskID)
	if err != nil {
		return err
	}
	next := 1
	if len(recs) > 0 {
		next = recs[len(recs)-1].AttemptNo + 1
	}
	for ; ; next++ {
		r.AttemptNo = next
		b, err := marshalRecord(r)
		if err != nil {
			return err
		}
		err = output.CreateFile(filepath.Join(dir, recordName(next)), 0o644, b)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("attempt record: %w", err)
		}
		return nil
	}
}

// withTokenLock runs fn holding OUT's fencing-token lock (an exclusive
// flock of layout.FencingTokenLockPath, waited for: it is held only for a
// read and two small writes).
func withTokenLock(out string, fn func() error) error {
	path := filepath.Join(out, filepath.FromSlash(layout.FencingTokenLockPath))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("fencing token: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("fencing token: %w", err)
	}
	defer f.Close()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EINTR) {
			return fmt.Errorf("fencing token: lock %s: %w", path, err)
		}
	}
	// Closing the file releases the lock.
	return fn()
}

// nextFencingToken increments OUT's token counter (layout.FencingTokenPath,
// a decimal number and a newline, replaced atomically) and returns the new
// value. The caller holds the token lock.
func nextFencingToken(out string) (int64, error) {
	path := filepath.Join(out, filepath.FromSlash(layout.FencingTokenPath))
	var last int64
	b, err := input.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return 0, fmt.Errorf("fencing token: %w", err)
	default:
		if last, err = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err != nil || last < 0 {
			return 0, fmt.Errorf("fencing token %s: %q is not a token (a non-negative decimal number)", path, strings.TrimSpace(string(b)))
		}
	}
	next := last + 1
	if err := output.WriteFileBytes(path, 0o644, []byte(strconv.FormatInt(next, 10)+"\n")); err != nil {
		return 0, fmt.Errorf("fencing token: %w", err)
	}
	return next, nil
}

// CheckFence returns ErrSuperseded (wrapped, naming the newer attempt) when
// a record of the task holds a greater fencing token than token: a newer
// attempt has started, and this one may no longer commit. It is called
// under the shard's lock just before the commit (output.StageOptions.Fence).
func CheckFence(out, taskID string, token int64) error {
	recs, _, err := readTaskRecords(out, taskID)
	if err != nil {
		return fmt.Errorf("fencing: %w", err)
	}
	for _, r := range recs {
		if r.FencingToken > token {
			return fmt.Errorf("%w: attempt %d (fencing token %d, started %s on %s) is newer than this one (token %d)",
				ErrSuperseded, r.AttemptNo, r.FencingToken, r.StartedAt, r.Host, token)
		}
	}
	return nil
}

// UpdateRecord replaces the record of r's attempt atomically.
func UpdateRecord(out string, r *Record) error {
	b, err := marshalRecord(r)
	if err != nil {
		return err
	}
	if err := output.WriteFileBytes(filepath.Join(taskRecordsDir(out, r.TaskID), recordName(r.AttemptNo)), 0o644, b); err != nil {
		return fmt.Errorf("attempt record: %w", err)
	}
	return nil
}

// marshalRecord is a record's file content: indented JSON and a newline.
func marshalRecord(r *Record) ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("attempt record: %w", err)
	}
	return append(b, '\n'), nil
}

// CloseAbandoned rewrites the task's records still marked running: an
// attempt of the same task can only start after the last one has ended, so
// a running record with no live process behind it was killed. One whose
// shard was committed succeeded (completeCommitted); the others become
// interrupted. It refuses when a process on this host still runs one.
func CloseAbandoned(out, taskID, host string) error {
	recs, _, err := readTaskRecords(out, taskID)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if r.State != StateRunning {
			continue
		}
		if r.Host == host && r.PID != os.Getpid() && processAlive(r.PID) {
			return fmt.Errorf("%w: task %s: attempt %d is still running (pid %d on %s)", output.ErrDestinationBusy, taskID, r.AttemptNo, r.PID, host)
		}
		if !completeCommitted(out, &r) {
			r.State, r.Category = StateInterrupted, CategoryLost
			r.Error = "the attempt ended without finishing its record (killed, or its node was lost)"
		} else {
			// Killed after its commit, the attempt left its shard's lock
			// file behind, and no new attempt will stage (and so unlock)
			// that shard: take the lock and release it, which removes it.
			// (The lock lives beside the destination's real path.)
			if real, err := filepath.EvalSymlinks(out); err == nil {
				if lock, err := output.LockDestination(filepath.Join(real, r.TaskID)); err == nil {
					_ = lock.Unlock()
				}
			}
		}
		if err := UpdateRecord(out, &r); err != nil {
			return err
		}
	}
	return nil
}

// completeCommitted finishes, as succeeded, the record of an abandoned
// attempt whose shard was committed (its ceres/campaign.json names this
// attempt): the commit is the point of truth, and a kill between it and the
// record's update loses only the record. Redoing the task would export over
// its own finished shard, and that shard would differ (its report would
// say the video was reused). The end time is the shard report's.
func completeCommitted(out string, r *Record) bool {
	c, ok := ReadCommitted(filepath.Join(out, r.TaskID))
	if !ok || c.Attempt != r.AttemptNo {
		return false
	}
	var rep struct{ Episodes, Frames int }
	if json.Unmarshal(c.Report, &rep) != nil {
		return false
	}
	st, err := os.Stat(c.Dataset.Path(layout.ExportReportPath))
	if err != nil {
		return false
	}
	end := st.ModTime().UTC()
	r.State = StateSucceeded
	r.SetExitStatus(0)
	r.Error, r.Category = "", ""
	r.Note = "completed from its committed shard: the attempt was stopped after the commit, before its record was finished"
	r.End(end)
	r.Episodes, r.Frames = rep.Episodes, rep.Frames
	r.ShardReportSHA256 = c.ReportSHA256
	miss := Check(r.Expected, r)
	r.Expectation = &Expectation{Met: len(miss) == 0, Misses: miss}
	return true
}

func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Start sets the attempt's start time, RFC 3339 in UTC.
func (r *Record) Start(t time.Time) { r.StartedAt = t.UTC().Format(time.RFC3339Nano) }

// End sets the attempt's end time, RFC 3339 in UTC, and its duration since
// StartedAt.
func (r *Record) End(t time.Time) {
	r.EndedAt = t.UTC().Format(time.RFC3339Nano)
	if start, err := time.Parse(time.RFC3339Nano, r.StartedAt); err == nil {
		r.DurationS = t.Sub(start).Seconds()
	}
}

// SetExitStatus records the export's exit status.
func (r *Record) SetExitStatus(code int) { r.ExitStatus = &code }

// Committed is what a task's shard, read through shard.Open, says of the
// attempt that made it.
type Committed struct {
	Dataset *shard.Dataset
	// Attempt is the attempt number of its campaign origin, 0 without one.
	Attempt int
	// ReportSHA256 and Report are its export report's SHA-256 and bytes.
	ReportSHA256 string
	Report       []byte
}

// ReadCommitted reads the shard at shardDir; false when there is none, or
// it is not a readable shard.
func ReadCommitted(shardDir string) (Committed, bool) {
	ds, err := shard.Open(shardDir)
	if err != nil || ds.Merged {
		return Committed{}, false
	}
	c := Committed{Dataset: ds}
	if c.ReportSHA256, c.Report, err = ds.ReportSHA256(); err != nil {
		return Committed{}, false
	}
	if origin, err := ds.Campaign(); err == nil && origin != nil {
		c.Attempt = int(origin.AttemptNo)
	}
	return c, true
}

// Check returns the ways rec misses exp (nil exp: the state must be
// succeeded). An empty result means the task ended as expected.
func Check(exp *Expected, rec *Record) []string {
	e := Expected{State: StateSucceeded}
	if exp != nil {
		e = *exp
		if e.State == "" {
			e.State = StateSucceeded
		}
	}
	var miss []string
	if rec.State != e.State {
		m := fmt.Sprintf("state %s, expected %s", rec.State, e.State)
		if rec.Error != "" {
			m += " (" + rec.Error + ")"
		}
		miss = append(miss, m)
	}
	if e.AttemptNo > 0 && rec.AttemptNo != e.AttemptNo {
		miss = append(miss, fmt.Sprintf("attempt %d, expected %d", rec.AttemptNo, e.AttemptNo))
	}
	if rec.Episodes < e.MinEpisodes {
		miss = append(miss, fmt.Sprintf("%d episodes, expected at least %d", rec.Episodes, e.MinEpisodes))
	}
	if rec.Frames < e.MinFrames {
		miss = append(miss, fmt.Sprintf("%d frames, expected at least %d", rec.Frames, e.MinFrames))
	}
	return miss
}

// PrepareOut makes out a campaign output (output.KindCampaign, with its
// marker, through the destination rules every writer follows) or checks
// that it is one and overlaps none of the inputs. Array tasks starting at
// once on one OUT all succeed: the first makes it, the others find it.
func PrepareOut(out string, inputs []string) error {
	for try := 0; ; try++ {
		if kind, ok := output.KindOf(out); ok {
			if kind != output.KindCampaign {
				return fmt.Errorf("%w: %s is a %s made by ceres-export, not a campaign output", output.ErrDestinationRefused, out, kind)
			}
			_, err := output.CheckDestination(out, inputs, true)
			return err
		}
		// An empty directory (made for the scheduler's log files) is taken
		// over; anything else is refused by Stage, naming what is there.
		if entries, err := os.ReadDir(out); err == nil && len(entries) == 0 {
			_ = os.Remove(out)
		}
		st, err := output.Stage(out, output.StageOptions{Kind: output.KindCampaign, Inputs: inputs})
		if err == nil {
			if err := os.MkdirAll(filepath.Join(st.Dir(), layout.AttemptsDir), 0o755); err != nil {
				_ = st.Abort()
				return fmt.Errorf("batch: %w", err)
			}
			return st.Commit()
		}
		// Another array task is making it, or just made it: look again.
		if errors.Is(err, output.ErrDestinationBusy) && try < 100 {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if errors.Is(err, output.ErrDestinationExists) {
			if _, ok := output.KindOf(out); ok {
				continue
			}
			return fmt.Errorf("%w: %s exists and is not a campaign output of ceres-export (no %s); choose a new directory", output.ErrDestinationRefused, out, layout.OutputMarkerPath)
		}
		return err
	}
}

// Inputs are the files a task's shard is made from.
type Inputs struct {
	// Files are every regular file of the session directory (journal
	// segments, camera files, anything else there), relative and
	// slash-separated, sorted. Symbolic links are followed, as the export
	// follows them: a session, its journal/ or a camera file may be a link,
	// and the target's bytes are what the shard is made of.
	Files []FileHash `json:"files"`
	// TaskSpecSHA256 is the SHA-256 of the corrected task specification
	// file, when the task applies one.
	TaskSpecSHA256 string `json:"task_spec_sha256,omitempty"`
	// ProfileSHA256 is the SHA-256 of the canonical feature profile
	// (--profile and --map), when the task has one: the settings name its
	// file, whose content may change under the same name.
	ProfileSHA256 string `json:"profile_sha256,omitempty"`
}

// FileHash is one input file.
type FileHash struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

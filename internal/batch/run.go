// Package batch runs a campaign (package campaign's model): every task of
// a manifest exported as one batch, each execution an attempt with a
// record, skipped when its shard is up to date, side by side (--jobs) and
// in scheduler array shares; then the campaign page and the per-setting
// merges. docs/campaigns.md states the rules.
package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/exitstatus"
	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/output"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/internal/settings"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/internal/verify"
	"github.com/ceres-robotics/ceres-export/internal/video"
)

// DefaultJobs is how many tasks run side by side when Options.Jobs is 0,
// from the machine the campaign runs on: one per CPU this process may use
// (GOMAXPROCS), at least two. One task per core keeps every core busy
// even when an export's encoders cannot use more than one (small
// pictures), and a second task fills the gaps one export's encoders
// leave; each task holds its own encoders in memory, so a machine with
// little memory per core wants fewer (docs/campaigns.md, "Choosing
// --jobs").
func DefaultJobs() int { return max(2, runtime.GOMAXPROCS(0)) }

// Outcomes of one task in one run.
const (
	OutcomeExported    = "exported"    // a new attempt wrote the shard
	OutcomeSkipped     = "skipped"     // up to date: same inputs, sound shard (or failed before with them)
	OutcomeFailed      = "failed"      // a new attempt failed
	OutcomeInterrupted = "interrupted" // the run was cancelled during the attempt
	OutcomeSuperseded  = "superseded"  // a newer attempt of the task started: this one's commit was refused
)

// Options configure Run.
type Options struct {
	// Out is the campaign's output directory: OUT/<task id>/ per shard,
	// OUT/.attempts/ for the records.
	Out string
	// Jobs is how many tasks run at once; 0 means DefaultJobs().
	Jobs int
	// Array is the array share this run is, or nil; only recorded (the
	// caller passes the share's tasks).
	Array *campaign.ArrayShare
	// ToolName and ToolVersion name the exporter in records and
	// fingerprints.
	ToolName, ToolVersion string
	// RetryFailed runs a task again whose last attempt failed with the
	// same fingerprint; by default such a task is final (the same inputs
	// fail the same way) and a rerun only reports it.
	RetryFailed bool
	// Scheduler is recorded in each attempt (scheduler job ids).
	Scheduler map[string]string
	// Page is export's page hook (the session page), applied unless a
	// task's settings say no_report.
	Page func(context.Context, *export.Result) error
	// Inputs are further paths the batch reads (the manifest): OUT may not
	// overlap them, nor any session or task_spec.
	Inputs []string
	// Salt keys the salted hashes of tasks whose settings say privacy
	// metadata-only. It is never recorded (records keep the settings,
	// which cannot hold it).
	Salt string
	// WaitBusy is how long a task waits for another process that holds
	// it (a running record of a live process, the shard's lock) before
	// giving up as busy. 0 gives up at once. A requeued array task waits:
	// the attempt of its lost node may still be writing the shard, and
	// once that ends the task is up to date.
	WaitBusy time.Duration
	// OnStart and OnDone, when set, are told about each task (one call at
	// a time).
	OnStart func(campaign.Task)
	OnDone  func(TaskResult)

	// busyPoll replaces busyPoll in tests.
	busyPoll time.Duration
	// export replaces export.Export in tests.
	export func(context.Context, string, string, export.Options) (*export.Report, error)
}

// TaskResult is what one task came to in one run.
type TaskResult struct {
	Task    campaign.Task
	Outcome string
	// Record is the attempt made, or for a skip the attempt whose result
	// stands.
	Record *campaign.Record
	// Reason says why a task was skipped.
	Reason string
	// Misses are the expectations the task missed (see Check).
	Misses  []string
	Elapsed time.Duration
	// Busy: another batch runs this task (or writes its shard) right now.
	Busy bool
}

// OK reports whether the task ended as expected.
func (r TaskResult) OK() bool { return len(r.Misses) == 0 }

// Summary is a run's results in task order.
type Summary struct {
	Results []TaskResult
}

// Count returns how many results have the outcome.
func (s *Summary) Count(outcome string) int {
	n := 0
	for _, r := range s.Results {
		if r.Outcome == outcome {
			n++
		}
	}
	return n
}

// Missed returns the results that missed their expectation.
func (s *Summary) Missed() []TaskResult {
	var out []TaskResult
	for _, r := range s.Results {
		if !r.OK() {
			out = append(out, r)
		}
	}
	return out
}

// States counts the results by their standing record's state (a task
// without a record counts as failed).
func (s *Summary) States() map[string]int {
	n := map[string]int{}
	for _, r := range s.Results {
		switch {
		case r.Record != nil:
			n[r.Record.State]++
		case r.Outcome == OutcomeInterrupted:
			n[campaign.StateInterrupted]++
		default:
			n[campaign.StateFailed]++
		}
	}
	return n
}

// Run runs tasks (manifest order), Jobs at a time. One task failing does not
// stop the others; a cancelled ctx starts no further task and interrupts the
// running ones. The error is non-nil only when the run could not work at
// all (OUT cannot be made) or ctx was cancelled.
func Run(ctx context.Context, tasks []campaign.Task, opts Options) (*Summary, error) {
	if opts.Jobs <= 0 {
		opts.Jobs = DefaultJobs()
	}
	if opts.ToolName == "" {
		opts.ToolName = "ceres-export"
	}
	if opts.export == nil {
		opts.export = export.Export
	}
	options := make([]export.Options, len(tasks))
	for i := range tasks {
		var err error
		if options[i], err = taskOptions(&tasks[i]); err != nil {
			return nil, err
		}
		if err := options[i].Privacy.Check(opts.Salt); err != nil {
			return nil, fmt.Errorf("task %s: %w", tasks[i].ID, err)
		}
	}
	if err := campaign.PrepareOut(opts.Out, campaign.ReadPaths(tasks, opts.Inputs)); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	sum := &Summary{Results: make([]TaskResult, len(tasks))}
	var mu sync.Mutex // serialises OnStart/OnDone
	sem := make(chan struct{}, opts.Jobs)
	var wg sync.WaitGroup
	started := make([]bool, len(tasks))
	for i := range tasks {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		started[i] = true
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if opts.OnStart != nil {
				mu.Lock()
				opts.OnStart(tasks[i])
				mu.Unlock()
			}
			res := runTask(ctx, &tasks[i], options[i], opts, host)
			sum.Results[i] = res
			if opts.OnDone != nil {
				mu.Lock()
				opts.OnDone(res)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for i := range tasks {
		if !started[i] {
			sum.Results[i] = TaskResult{Task: tasks[i], Outcome: OutcomeInterrupted, Reason: "not started: the run was cancelled",
				Misses: []string{"not run: the batch was cancelled"}}
		}
	}
	return sum, ctx.Err()
}

// busyPoll is how often a task waiting for its holder looks again.
const busyPoll = time.Second

// runTask runs one task: skip it when up to date, else make attempts
// until one succeeds or the task's retry policy lets no further attempt
// follow a failure; while another process holds the task, wait for it (up
// to opts.WaitBusy). Waiting is not an attempt: the holder is looked for
// before an attempt's record is written, and an attempt that still finds
// the shard taken keeps its one record (interrupted, busy) through the
// wait and goes on under its number once the holder is gone.
func runTask(ctx context.Context, t *campaign.Task, eo export.Options, opts Options, host string) TaskResult {
	begin := time.Now()
	res := TaskResult{Task: *t}
	finish := func() TaskResult {
		res.Elapsed = time.Since(begin)
		if res.Record != nil {
			res.Misses = campaign.Check(t.Expected, res.Record)
		} else {
			res.Misses = []string{"no attempt record: " + res.Reason}
		}
		return res
	}
	template := campaign.Record{
		RecordVersion: campaign.RecordVersion, TaskID: t.ID, CampaignID: t.CampaignID, CaseID: t.CaseID,
		SettingID: t.SettingID, RunID: t.RunID, State: campaign.StateRunning,
		Tool: campaign.Tool{Name: opts.ToolName, Version: opts.ToolVersion}, Session: t.Session, Shard: t.ID,
		Options: t.Export, Extensions: t.Extensions, Expected: t.Expected,
		Host: host, PID: os.Getpid(), Array: opts.Array, Scheduler: opts.Scheduler,
	}
	in, inErr := hashInputs(t, eo.TaskSpec, eo.Profile)
	if inErr == nil {
		template.Inputs = in
		fp, err := fingerprint(t, in, opts.ToolVersion)
		if err != nil {
			inErr = err
		}
		template.Fingerprint = fp
	}
	shardDir := filepath.Join(opts.Out, t.ID)
	waitUntil := begin.Add(opts.WaitBusy)
	poll := opts.busyPoll
	if poll <= 0 {
		poll = busyPoll
	}
	// wait sleeps before another look at a task another process holds;
	// false when the wait is over (or the run cancelled).
	wait := func() bool {
		if !time.Now().Before(waitUntil) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(poll):
			return true
		}
	}
	// held is the record of this task's attempt that found the shard
	// busy: the next try goes on under it.
	var held *campaign.Record
	retryFailed := opts.RetryFailed
	for {
		if err := campaign.CloseAbandoned(opts.Out, t.ID, host); err != nil {
			if errors.Is(err, output.ErrDestinationBusy) && wait() {
				continue
			}
			res.Outcome, res.Reason = OutcomeFailed, err.Error()
			res.Busy = errors.Is(err, output.ErrDestinationBusy)
			res.Record = held
			return finish()
		}
		if inErr == nil {
			if prev, why := upToDate(ctx, opts, t, shardDir, template.Fingerprint, retryFailed); prev != nil {
				res.Outcome, res.Record, res.Reason, res.Busy = OutcomeSkipped, prev, why, false
				return finish()
			}
			if err := shardBusy(opts.Out, t.ID); err != nil {
				if wait() {
					continue
				}
				res.Outcome, res.Reason, res.Busy, res.Record = OutcomeInterrupted, err.Error(), true, held
				return finish()
			}
		}
		// --retry-failed buys one new attempt, not one per failure.
		retryFailed = false
		rec := template
		if held != nil {
			rec = *held
		}
		held = nil
		res.Busy = false
		res.Outcome, res.Record = attempt(ctx, t, eo, opts, inErr, shardDir, &rec)
		if res.Record == nil {
			res.Reason = rec.Error
			return finish()
		}
		switch {
		case rec.Category == campaign.CategoryBusy:
			// Another process took the shard between the look and the
			// stage: once it is done the task may be up to date, so look
			// again rather than retry.
			res.Busy = true
			held = res.Record
			if wait() {
				continue
			}
		case rec.State == campaign.StateSuperseded:
			// A newer attempt of the task started while this one was
			// stopped: the task is that attempt's now.
			if prev, why := upToDate(ctx, opts, t, shardDir, template.Fingerprint, false); prev != nil {
				res.Outcome, res.Record, res.Reason = OutcomeSkipped, prev, why
			} else {
				res.Busy, res.Reason = true, "a newer attempt of the task runs it"
			}
		case rec.State == campaign.StateFailed && t.RetryPolicy != nil && ctx.Err() == nil:
			// The policy the manifest gives retries its categories in this
			// run already, up to max_attempts (upToDate counts them).
			if n := attemptsWith(opts.Out, t.ID, rec.Fingerprint); t.RetryPolicy.Allows(rec.Category, n) {
				continue
			}
		}
		return finish()
	}
}

// shardBusy returns ErrDestinationBusy (wrapped, naming the holder) when
// another process holds the task's shard lock right now, so that a wait
// for it writes no record. The lock lives beside the shard's real path.
func shardBusy(out, taskID string) error {
	real, err := filepath.EvalSymlinks(out)
	if err != nil {
		return nil // the attempt's own stage says what is wrong
	}
	lock, err := output.LockDestination(filepath.Join(real, taskID))
	if errors.Is(err, output.ErrDestinationBusy) {
		return err
	}
	if err == nil {
		_ = lock.Unlock()
	}
	return nil
}

// attempt makes one attempt of t: its record, the export, the record's end.
// A rec that already has a number (an attempt that found the shard busy
// and waited) goes on under it. It returns the outcome and the record, nil
// when none could be made (rec.Error says why).
func attempt(ctx context.Context, t *campaign.Task, eo export.Options, opts Options, inErr error, shardDir string, rec *campaign.Record) (string, *campaign.Record) {
	rec.Start(time.Now())
	var err error
	if rec.AttemptNo == 0 {
		err = campaign.CreateRecord(opts.Out, rec)
	} else {
		rec.State, rec.Category, rec.Error, rec.EndedAt, rec.DurationS, rec.ExitStatus, rec.Expectation = campaign.StateRunning, "", "", "", 0, nil, nil
		err = campaign.UpdateRecord(opts.Out, rec)
	}
	if err != nil {
		rec.Error = err.Error()
		return OutcomeFailed, nil
	}
	var rep *export.Report
	err = inErr
	if err == nil {
		eo.Version = opts.ToolVersion
		// A shard already there is from other inputs (else it was skipped):
		// replace it atomically; the old one stays until the new commits.
		eo.Replace = true
		eo.Salt = opts.Salt
		if !t.Export.NoReport {
			eo.Page = opts.Page
		}
		// Only the newest attempt of the task may commit: one that froze
		// and came back after the task was run again is refused.
		token := rec.FencingToken
		eo.Fence = func() error { return campaign.CheckFence(opts.Out, t.ID, token) }
		eo.CeresFiles, err = shardCampaignFiles(t, rec.AttemptNo, eo.Privacy, opts.Salt)
		if err == nil {
			rep, err = opts.export(ctx, t.SessionDir, shardDir, eo)
		}
	}
	rec.End(time.Now())
	if errors.Is(err, output.ErrDestinationBusy) {
		// A shard busy with a newer attempt of this task (this one froze
		// before it took the lock) is that attempt's now.
		if ferr := campaign.CheckFence(opts.Out, t.ID, rec.FencingToken); errors.Is(ferr, campaign.ErrSuperseded) {
			err = ferr
		}
	}
	outcome := OutcomeFailed
	switch {
	case err == nil:
		rec.State = campaign.StateSucceeded
		rec.SetExitStatus(0)
		rec.Episodes, rec.Frames = rep.Episodes, rep.Frames
		if c, ok := campaign.ReadCommitted(shardDir); ok {
			rec.ShardReportSHA256 = c.ReportSHA256
		}
		outcome = OutcomeExported
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		rec.State, rec.Category = campaign.StateInterrupted, campaign.CategoryInterrupted
		rec.Error = err.Error()
		outcome = OutcomeInterrupted
	case errors.Is(err, campaign.ErrSuperseded):
		rec.State, rec.Error = campaign.StateSuperseded, err.Error()
		outcome = OutcomeSuperseded
	case errors.Is(err, output.ErrDestinationBusy):
		// Another batch writes this shard right now: not a failure of
		// these inputs (a failed attempt would stand for them), so the
		// attempt is interrupted and the next run tries again.
		rec.State, rec.Category = campaign.StateInterrupted, campaign.CategoryBusy
		rec.Error = err.Error()
		outcome = OutcomeInterrupted
	default:
		rec.State = campaign.StateFailed
		rec.Error = err.Error()
		// The status the export command would have exited with, and what
		// it says of the failure.
		code := exitstatus.Of(err)
		rec.SetExitStatus(int(code))
		rec.Category = categoryOfExit(code)
	}
	miss := campaign.Check(t.Expected, rec)
	rec.Expectation = &campaign.Expectation{Met: len(miss) == 0, Misses: miss}
	if werr := campaign.UpdateRecord(opts.Out, rec); werr != nil && outcome == OutcomeExported {
		rec.Error = werr.Error()
		return OutcomeFailed, rec
	}
	return outcome, rec
}

// categoryOfExit is the failure category (campaign.Category*) of an
// attempt that failed with exit status code: an input that cannot be made
// into a shard fails the same way every time; anything else may be
// transient.
func categoryOfExit(code exitstatus.Status) string {
	switch code {
	case exitstatus.Findings:
		return campaign.CategoryInputInvalid
	case exitstatus.Usage:
		return campaign.CategoryInputUnreadable
	case exitstatus.Corrupt:
		return campaign.CategoryJournalCorrupt
	}
	return campaign.CategoryIOError
}

// attemptsWith counts the task's attempts made with fingerprint fp: the
// attempts a retry policy's max_attempts bounds (new inputs start anew).
// A wait for a busy shard is not an attempt, nor is one a newer attempt
// superseded (that one counts).
func attemptsWith(out, taskID, fp string) int {
	recs, _ := campaign.ReadRecords(out, taskID)
	return countWith(recs, fp)
}

// countWith counts the records of fingerprint fp.
func countWith(recs []campaign.Record, fp string) int {
	n := 0
	for _, r := range recs {
		if r.Fingerprint == fp && countsAsAttempt(r) {
			n++
		}
	}
	return n
}

// shardCampaignFiles are the files a task adds under its shard's ceres/:
// its identity and its extensions. In a metadata-only shard every string
// of them is a user's (the case id is often the session's name or id, an
// extension may name a person), and nothing can prove it public: each is
// its salted hash, as the session id is (docs/privacy.md).
func shardCampaignFiles(t *campaign.Task, attempt int, mode privacy.Mode, salt string) (map[string]any, error) {
	c := shard.CampaignOrigin{CampaignID: t.CampaignID, TaskID: t.ID, AttemptNo: int64(attempt)}
	var ext any = t.Extensions
	if mode == privacy.MetadataOnly {
		c.CampaignID, c.TaskID = privacy.SaltedHash(salt, c.CampaignID), privacy.SaltedHash(salt, c.TaskID)
		salted := map[string]json.RawMessage{}
		for k, v := range t.Extensions {
			sv, err := privacy.SaltStrings(salt, v)
			if err != nil {
				return nil, fmt.Errorf("extension %s: %w", k, err)
			}
			salted[k] = sv
		}
		ext = salted
	}
	return map[string]any{layout.CampaignPath: c, layout.ExtensionsPath: ext}, nil
}

// countsAsAttempt reports whether r is an attempt of its own: not a wait
// for a busy shard, not one a newer attempt superseded.
func countsAsAttempt(r campaign.Record) bool {
	return r.Category != campaign.CategoryBusy && r.State != campaign.StateSuperseded
}

// upToDate returns the standing record when the task needs no new attempt:
// an attempt with this fingerprint succeeded, leaving the shard that is
// there now and still passes a quick verify; or the last ended attempt
// with it did not succeed and the task's retry policy allows no further
// attempt (its category is not retried, or max_attempts is reached), unless
// retryFailed overrides the policy.
func upToDate(ctx context.Context, opts Options, t *campaign.Task, shardDir, fp string, retryFailed bool) (*campaign.Record, string) {
	recs, err := campaign.ReadRecords(opts.Out, filepath.Base(shardDir))
	if err != nil {
		return nil, ""
	}
	// The attempts since the inputs last changed, latest first.
	var same []campaign.Record
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		// A running attempt has no verdict yet; a wait and a superseded
		// attempt changed nothing.
		if r.State == campaign.StateRunning || !countsAsAttempt(r) {
			continue
		}
		if r.Fingerprint != fp {
			// An interrupted attempt of other inputs changed nothing.
			if r.State == campaign.StateInterrupted {
				continue
			}
			break
		}
		same = append(same, r)
	}
	for _, r := range same {
		if r.State != campaign.StateSucceeded {
			continue
		}
		if c, ok := campaign.ReadCommitted(shardDir); !ok || c.ReportSHA256 != r.ShardReportSHA256 || c.Attempt != r.AttemptNo {
			break
		}
		v, err := verify.Shard(ctx, shardDir, verify.Options{Quick: true})
		if err != nil || !v.Sound {
			break
		}
		return &r, fmt.Sprintf("up to date: attempt %d made this shard from the same inputs", r.AttemptNo)
	}
	if len(same) == 0 || same[0].State == campaign.StateSucceeded || retryFailed {
		return nil, ""
	}
	last := same[0]
	policy := t.Policy()
	category := recordCategory(last)
	if policy.Allows(category, countWith(recs, fp)) {
		return nil, ""
	}
	return &last, fmt.Sprintf("attempt %d %s with the same inputs and is not retried: %s (--retry-failed runs it again)",
		last.AttemptNo, last.State, campaign.DescribeRetry(policy, category))
}

// recordCategory is the failure category of an attempt that did not
// succeed, for records written before records carried one.
func recordCategory(r campaign.Record) string {
	switch {
	case r.Category != "":
		return r.Category
	case r.State == campaign.StateInterrupted:
		return campaign.CategoryInterrupted
	case r.ExitStatus != nil:
		return categoryOfExit(exitstatus.Status(*r.ExitStatus))
	}
	return campaign.CategoryIOError
}

// taskOptions are the export options task t runs with: its settings
// resolved (export.Resolve checks every value), the descriptors' org as
// the task says (campaign.Task.Org).
func taskOptions(t *campaign.Task) (export.Options, error) {
	o, err := export.Resolve(t.Export, t.BaseDir)
	if err != nil {
		return o, fmt.Errorf("task %s: %w", t.ID, err)
	}
	o.Descriptors.Org = t.Org()
	o.VideoFiles = video.Files{}
	return o, nil
}

// Load reads the campaign manifest at path and checks every task's export
// settings as the export will (export.Resolve): a value it refuses is an
// error naming the JSON path where it was written.
func Load(path string) (*campaign.Manifest, error) {
	m, err := campaign.Load(path)
	if err != nil {
		return nil, err
	}
	if err := m.CheckExport(func(s settings.Settings, dir string) error {
		_, err := export.Resolve(s, dir)
		return err
	}); err != nil {
		return nil, err
	}
	return m, nil
}

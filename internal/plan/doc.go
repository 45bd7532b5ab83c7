// Package plan turns the events of a CERES journal into an export plan:
// every attempt with its fate, the episodes in export order, the pauses and
// resets, and the frame clock that places frame k of an episode on the
// journal clock. It implements "Episodes" and "The frame clock" of
// docs/export-semantics.md and the attempt definitions of
// docs/journal-format.md.
//
// The API is small: Build (events → *Plan), DefaultFPS (the frame clock
// itself is package lerobot's), CheckFit for re-exports, and TaskTypes with its
// constructors SpecTypes and MapTypes to look task types up.
//
// # Attempts and fates
//
// Build reads the events in journal order. Events that name an attempt
// (attempt_start, attempt_end, retry, annotate) are gathered by the key
// (cycle, task, repetition, attempt); the decisions below are the whole
// algorithm:
//
//	for each event e, in journal order:
//	    if e.t < previous t:               diagnostic (the plan still uses e)
//	    attempt_start, attempt_end, retry: append e to attempts[key(e)]
//	    annotate pass|fail:                attempts[key(e)].outcome = e.outcome
//	    annotate clear:                    attempts[key(e)].outcome = none
//	    annotate other:                    diagnostic, ignored
//	    pause_start/pause_end:             open/close the pause of (task, cycle)
//	    reset_start/reset_end:             open/close the reset of key(e)
//	    anything else:                     ignored (run_*, cycle_*, prompt, unknown kinds)
//
//	for each attempt a:
//	    start = first attempt_start; end = first attempt_end after start
//	    fate(a) = the first rule that applies:
//	        no attempt_start                      anomalous (an orphan: named by end/retry/annotate only)
//	        empty task id or a counter < 1        anomalous
//	        task not in the specification         anomalous
//	        task is a pause                       anomalous
//	        task type neither timed nor open      anomalous
//	        more than one attempt_start           anomalous
//	        an attempt_end before attempt_start   anomalous (in journal order)
//	        more than one attempt_end             anomalous
//	        end.t < start.t                       anomalous
//	        a retry names it (anywhere)           retried
//	        no attempt_end                        incomplete
//	        otherwise                             candidate
//
//	for each (cycle, task, repetition) with candidates:
//	    winner = the candidate with the greatest start.t (then latest in the journal)
//	    the other candidates: anomalous ("superseded by attempt N")
//	    length(winner) = lerobot.Length(start.t, end.t, fps)
//	    fate(winner) = empty if length == 0, else accepted
//
//	order attempts by start.t (ties: journal order), orphans last
//	episodes = the accepted attempts in that order, episode_index 0, 1, 2, ...
//
// Structural anomalies come before retried: a journal that contradicts
// itself is worth a person's look even where the operator also retried.
// No rule ever accepts an attempt that is retried, incomplete or anomalous,
// and annotations never change a window or a fate. An attempt ended with
// cause stop is complete like any other.
//
// Pauses pair pause_start with the next pause_end of the same (task, cycle),
// resets reset_start with the next reset_end of the same key; one that never
// ends is reported Open. A pause or reset never produces rows.
//
// # The frame clock
//
// The dataset has one integer rate fps (LeRobot requires an integer). An
// episode of window [s, e) has lerobot.Length(s, e, fps) frames, frame k at
// lerobot.FrameTime(s, k, fps); package lerobot states the clock's rules.
// When no rate is given,
// DefaultFPS picks it from the session's streams: the nominal fps of the
// first video stream, else the rate of the first sensor stream, rounded.
//
// # Re-export
//
// CheckFit tells whether a corrected specification fits a recording: every
// task id the journal's attempts and pauses name exists in it with its
// recorded type.
package plan

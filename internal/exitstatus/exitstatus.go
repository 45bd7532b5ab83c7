// Package exitstatus is the one table of ceres-export's exit statuses: what
// each status means, which failure maps to which (by the library's
// sentinel errors), and the EXIT STATUS section of every command's help,
// generated from the same table. The CLI only prints: it asks Of for a
// failure's status, and Help for its help texts; a campaign's attempt
// records hold the status Of gives an export's failure.
//
// A failure is classed by what went wrong, not by the command that met
// it: the same missing file, refused destination or corrupt journal is
// the same status everywhere.
package exitstatus

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/media"
	"github.com/ceres-robotics/ceres-export/internal/merge"
	"github.com/ceres-robotics/ceres-export/internal/output"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/internal/profile"
	"github.com/ceres-robotics/ceres-export/internal/shard"
	"github.com/ceres-robotics/ceres-export/internal/verify"
	"github.com/ceres-robotics/ceres-export/journal"
)

// Status is a process exit status.
type Status int

// The statuses, the same for every command.
const (
	OK       Status = 0 // success
	Findings Status = 1 // the input was read and is not sound, or cannot be exported as asked
	Usage    Status = 2 // a usage error, an input that cannot be read, a destination that may not be written
	Corrupt  Status = 3 // the journal is corrupt
	Failed   Status = 4 // the operation failed for another reason; nothing was replaced

	// A command stopped by a signal exits 128 + the signal's number, the
	// status a shell reports for a process the signal ended: a scheduler
	// tells a stop it asked for from a failure by it (a Kubernetes Job
	// ignores 143, so a pod deleted by hand is not held against the
	// index's retries, where a full disk, 4, must be).
	Interrupt Status = 128 + Status(syscall.SIGINT)  // 130
	Terminate Status = 128 + Status(syscall.SIGTERM) // 143
)

// Meanings says what each status means for every command: README's exit
// status table (held to this one by a test).
var Meanings = []struct {
	Status  Status
	Meaning string
}{
	{OK, "success (a valid specification, a sound shard, a written export)"},
	{Findings, "the input was read and is not sound: specification violations, verify findings, a journal that breaks the format's rules, an export that cannot be made as asked (no accepted episode, a specification or profile that does not fit, a strictness switch tripped)"},
	{Usage, "usage error, an input that cannot be read at all (missing, no permission, not a regular file, a symbolic link loop), or a destination that may not be written (it exists without --replace, overlaps an input, is not an output of ceres-export)"},
	{Corrupt, "the journal is corrupt (bad frame inside a segment, segment gap, bad header); `--salvage` reads past corruption and reports what it skipped"},
	{Failed, "the operation failed for another reason (I/O, encoder, a busy destination); an existing output is left untouched"},
	{Interrupt, "stopped by SIGINT (Ctrl-C): the staging is removed, an existing output is left untouched"},
	{Terminate, "stopped by SIGTERM (`kill`, `scancel`, a pod deleted or drained): the staging is removed, an existing output is left untouched"},
}

// Class is one kind of failure: the status it maps to, how a help text
// says it, and the sentinel errors that are it.
type Class struct {
	Status Status
	Says   string
	errs   []error
}

// As returns c saying says instead: the same failure in a command's own
// words ("the session cannot be read").
func (c Class) As(says string) Class {
	c.Says = says
	return c
}

// is reports whether err is one of c's sentinels.
func (c Class) is(err error) bool {
	for _, e := range c.errs {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// The classes. Those with sentinel errors are found by Of whatever the
// command; the others are a command's to mark (Mark, Printed).
var (
	UsageError = Class{Usage, "usage error", nil}
	Unreadable = Class{Usage, "an input cannot be read", []error{
		fs.ErrNotExist, fs.ErrPermission, input.ErrNotRegular, input.ErrTooLarge, verify.ErrUnreadable, shard.ErrNotDataset,
		syscall.ELOOP, syscall.ENOTDIR, syscall.EISDIR, syscall.ENAMETOOLONG,
	}}
	DestinationExists  = Class{Usage, "the destination exists (use --replace)", []error{output.ErrDestinationExists}}
	DestinationRefused = Class{Usage, "the destination is refused (it is, holds or lies in an input, is a symbolic link, or is not an output of ceres-export)", []error{output.ErrDestinationRefused}}
	NoSalt             = Class{Usage, "--privacy metadata-only without --salt", []error{privacy.ErrNoSalt}}
	MergeInput         = Class{Usage, "a directory that is not a shard, the same shard twice, an output of another kind", []error{merge.ErrUsage}}
	SourcesDiffer      = Class{Usage, "sources that differ in fps, robot type or features (every difference is listed)", []error{merge.ErrMismatch}}
	LicensesDiffer     = Class{Usage, "sources under different licences without --license", []error{merge.ErrLicenses}}
	Manifest           = Class{Usage, "a manifest that does not parse, or an empty selection", nil}

	JournalInvalid  = Class{Findings, "a journal record breaks the format's rules, or the journal's specification is rejected", []error{journal.ErrInvalid, journal.ErrSpec}}
	NoEpisodes      = Class{Findings, "no accepted episode", []error{export.ErrNoEpisodes}}
	SpecMismatch    = Class{Findings, "a corrected specification that does not fit the recording", []error{export.ErrSpecMismatch}}
	ProfileMismatch = Class{Findings, "a --profile that does not fit the session", []error{profile.ErrMismatch}}
	Strict          = Class{Findings, "a --strict check tripped", []error{export.ErrStrict}}
	SizeUnsupported = Class{Findings, "the cameras' size is one the encoder cannot encode (SVT-AV1: at least 64x64)", []error{media.ErrSizeUnsupported}}
	Unsound         = Class{Findings, "a source is not sound: it fails its verify, or its video or statistics contradict its info or rows", []error{merge.ErrUnsound}}
	NotSound        = Class{Findings, "the input is not sound", nil}

	JournalCorrupt = Class{Corrupt, "the journal is corrupt: a bad checksum mid-segment, a missing segment, a bad segment header (--salvage reads past corruption)", []error{journal.ErrCorrupt, journal.ErrSegmentGap, journal.ErrBadHeader}}

	// Interrupted is a command stopped by SIGINT or SIGTERM (Stopped
	// finds which); a cancellation with no signal behind it is Cancelled.
	Interrupted = Class{Interrupt, "stopped by SIGINT", nil}
	terminated  = Class{Terminate, "stopped by SIGTERM", nil} // listed with Interrupted
	Cancelled   = Class{Failed, "cancelled", []error{context.Canceled, context.DeadlineExceeded}}
	Busy        = Class{Failed, "another process is writing the destination", []error{output.ErrDestinationBusy}}
	WriteFailed = Class{Failed, "the operation failed (I/O, the encoder); an existing output is untouched", nil}
)

// known are the classes Of finds by their sentinels, in the order it tries
// them.
var known = []Class{
	Unreadable, DestinationExists, DestinationRefused, NoSalt, MergeInput, SourcesDiffer, LicensesDiffer,
	JournalInvalid, NoEpisodes, SpecMismatch, ProfileMismatch, Strict, SizeUnsupported, Unsound,
	JournalCorrupt, Cancelled, Busy,
}

// marked is an error a command classed itself.
type marked struct {
	status  Status
	printed bool
	err     error
}

func (m *marked) Error() string {
	if m.err == nil {
		return "exit status " + strconv.Itoa(int(m.status))
	}
	return m.err.Error()
}

func (m *marked) Unwrap() error { return m.err }

// Mark classes err as c, for a failure only its command can class (a flag
// out of range, a page that could not be written). A nil err stays nil.
// The sentinels of the table come first: a marked failure that is a
// missing file or a corrupt journal keeps that status.
func Mark(c Class, err error) error {
	if err == nil {
		return nil
	}
	return &marked{status: c.Status, err: err}
}

// Printed is a failure of status s whose message the command has printed
// already (verify's findings, spec's violations): Of gives s, and
// WasPrinted tells the CLI not to print it again.
func Printed(s Status) error { return &marked{status: s, printed: true} }

// WasPrinted reports whether err's message was printed already.
func WasPrinted(err error) bool {
	var m *marked
	return errors.As(err, &m) && m.printed
}

// Of is the one mapping from a failure to its exit status: the table's
// sentinels first, then a command's own class (Mark, Printed), and
// Failed for everything else.
func Of(err error) Status {
	if err == nil {
		return OK
	}
	var sig *Signal
	if errors.As(err, &sig) {
		return 128 + Status(sig.Signal)
	}
	var m *marked
	if errors.As(err, &m) && m.printed {
		return m.status
	}
	for _, c := range known {
		if c.is(err) {
			return c.Status
		}
	}
	if m != nil {
		return m.status
	}
	return Failed
}

// Help is the EXIT STATUS section of a command's help: status 0 says
// success, every other status the classes of failure the command meets,
// in the table's words.
func Help(success string, classes ...Class) string {
	by := map[Status][]string{OK: {success}}
	for _, c := range classes {
		also := []Class{c}
		if c.Status == Interrupt {
			// A command one signal stops, the other stops too.
			also = append(also, terminated)
		}
		for _, c := range also {
			if !slices.Contains(by[c.Status], c.Says) {
				by[c.Status] = append(by[c.Status], c.Says)
			}
		}
	}
	width := 0
	for st := range by {
		width = max(width, len(strconv.Itoa(int(st))))
	}
	var b strings.Builder
	b.WriteString("\n\nEXIT STATUS\n")
	for _, m := range Meanings {
		says := by[m.Status]
		if len(says) == 0 {
			continue
		}
		wrap(&b, fmt.Sprintf("%-*d", width, m.Status), strings.Join(says, "; "))
	}
	return strings.TrimRight(b.String(), "\n")
}

// helpWidth is the column a help line wraps before.
const helpWidth = 78

// wrap writes "  <code>  <text>" wrapped at helpWidth, continuation lines
// indented under the text.
func wrap(b *strings.Builder, code, text string) {
	indent := "  " + strings.Repeat(" ", len(code)) + "  "
	line := "  " + code + "  "
	first := true
	for _, w := range strings.Fields(text) {
		if !first && len(line)+1+len(w) > helpWidth {
			b.WriteString(line + "\n")
			line, first = indent+w, false
			continue
		}
		if first {
			line += w
			first = false
			continue
		}
		line += " " + w
	}
	b.WriteString(line + "\n")
}

// Signal is the cause a command's context is cancelled with when the
// process is told to stop (main): Stopped puts it on the command's
// error, and Of gives 128 + its number.
type Signal struct{ Signal syscall.Signal }

func (s *Signal) Error() string { return "stopped by " + signalName(s.Signal) }

func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return "signal " + strconv.Itoa(int(sig))
}

// Stopped returns err with ctx's Signal on it when err is the
// cancellation a signal caused, so that Of gives the signal's status;
// any other err is returned as it is.
func Stopped(ctx context.Context, err error) error {
	var sig *Signal
	if err == nil || !errors.Is(err, context.Canceled) || !errors.As(context.Cause(ctx), &sig) {
		return err
	}
	return &stopped{sig: sig, err: err}
}

// stopped is a command's error with the signal that stopped it.
type stopped struct {
	sig *Signal
	err error
}

func (s *stopped) Error() string   { return s.err.Error() }
func (s *stopped) Unwrap() []error { return []error{s.sig, s.err} }

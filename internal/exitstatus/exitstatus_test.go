package exitstatus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/campaign"
	"github.com/ceres-robotics/ceres-export/internal/export"
	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/merge"
	"github.com/ceres-robotics/ceres-export/internal/output"
	"github.com/ceres-robotics/ceres-export/internal/privacy"
	"github.com/ceres-robotics/ceres-export/journal"
)

func TestOf(t *testing.T) {
	t.Parallel()
	pathErr := func(errno syscall.Errno) error { return &fs.PathError{Op: "open", Path: "/x", Err: errno} }
	for _, c := range []struct {
		err  error
		want Status
	}{
		{nil, OK},
		{Printed(Findings), Findings},
		{Printed(Usage), Usage},
		{fmt.Errorf("export: %w", export.ErrNoEpisodes), Findings},
		{fmt.Errorf("%w: x", export.ErrStrict), Findings},
		{&journal.Error{Segment: "000001.cjl", Err: fmt.Errorf("%w", journal.ErrInvalid)}, Findings},
		{merge.ErrUnsound, Findings},
		{&journal.Error{Segment: "000001.cjl", Err: journal.ErrCorrupt}, Corrupt},
		{journal.ErrSegmentGap, Corrupt},
		{journal.ErrBadHeader, Corrupt},
		// A command's own class never overrides what the failure is.
		{Mark(WriteFailed, &journal.Error{Err: journal.ErrCorrupt}), Corrupt},
		{Mark(WriteFailed, pathErr(syscall.ELOOP)), Usage},
		{pathErr(syscall.ELOOP), Usage},
		{fmt.Errorf("export: not a session: %w", pathErr(syscall.ELOOP)), Usage},
		{pathErr(syscall.ENOENT), Usage},
		{pathErr(syscall.EACCES), Usage},
		{pathErr(syscall.ENOTDIR), Usage},
		{&fs.PathError{Op: "open", Path: "/fifo", Err: fmt.Errorf("%w", input.ErrNotRegular)}, Usage},
		{fmt.Errorf("x: %w", output.ErrDestinationExists), Usage},
		{fmt.Errorf("x: %w", output.ErrDestinationRefused), Usage},
		{fmt.Errorf("x: %w", output.ErrDestinationBusy), Failed},
		{fmt.Errorf("batch: %w", privacy.ErrNoSalt), Usage},
		{Mark(WriteFailed, fmt.Errorf("batch: %w", privacy.ErrNoSalt)), Usage},
		{merge.ErrMismatch, Usage},
		{fmt.Errorf("merge setting s: %w: a is licensed mit and b is licensed cc-by-4.0", merge.ErrLicenses), Usage},
		{Mark(WriteFailed, fmt.Errorf("%w: x", merge.ErrLicenses)), Usage},
		{context.Canceled, Failed},
		// A cancellation a signal caused is that signal's status,
		// 128 + its number, however deep the command wrapped it.
		{Stopped(stoppedBy(syscall.SIGTERM), fmt.Errorf("export: camera 0: %w", context.Canceled)), 143},
		{Stopped(stoppedBy(syscall.SIGINT), fmt.Errorf("merge: %w", context.Canceled)), 130},
		{Mark(WriteFailed, Stopped(stoppedBy(syscall.SIGTERM), context.Canceled)), 143},
		// A failure the signal did not cause keeps its own status.
		{Stopped(stoppedBy(syscall.SIGTERM), pathErr(syscall.ENOSPC)), Failed},
		{Stopped(stoppedBy(syscall.SIGTERM), fmt.Errorf("x: %w", export.ErrNoEpisodes)), Findings},
		// A context cancelled by no signal is no signal's status.
		{Stopped(context.Background(), context.Canceled), Failed},
		{pathErr(syscall.ENOSPC), Failed},
		{pathErr(syscall.EIO), Failed},
		{errors.New("encoder failed"), Failed},
		{Mark(UsageError, errors.New("--fps -3")), Usage},
		{Mark(Manifest, errors.New("line 3: bad")), Usage},
	} {
		if got := Of(c.err); got != c.want {
			t.Errorf("Of(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	if Stopped(stoppedBy(syscall.SIGTERM), nil) != nil {
		t.Error("Stopped of nil is not nil")
	}
	if Mark(UsageError, nil) != nil {
		t.Error("Mark of nil is not nil")
	}
	if !WasPrinted(fmt.Errorf("x: %w", Printed(Findings))) || WasPrinted(Mark(UsageError, errors.New("x"))) {
		t.Error("WasPrinted")
	}
}

// TestHelp: the section lists the statuses in order, each once, with the
// classes' words, and wraps at helpWidth.
func TestHelp(t *testing.T) {
	t.Parallel()
	h := Help("the shard was written", UsageError, DestinationExists, JournalCorrupt, NoEpisodes, Strict, UsageError)
	want := []string{"EXIT STATUS", "  0  the shard was written", "  1  no accepted episode; a --strict check tripped", "  2  usage error; the destination exists (use --replace)", "  3  the journal is corrupt"}
	for _, w := range want {
		if !strings.Contains(h, w) {
			t.Errorf("help lacks %q:\n%s", w, h)
		}
	}
	if strings.Contains(h, "  4  ") || strings.Count(h, "usage error") != 1 {
		t.Errorf("help:\n%s", h)
	}
	for _, line := range strings.Split(h, "\n") {
		if len(line) > helpWidth {
			t.Errorf("line of %d columns: %q", len(line), line)
		}
	}
}

// TestREADMETable: README's exit status table is this package's Meanings.
func TestREADMETable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| ([0-9]+) \| (.*) \|$`)
	got := map[int]string{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		n, _ := strconv.Atoi(m[1])
		got[n] = m[2]
	}
	for _, m := range Meanings {
		if got[int(m.Status)] != m.Meaning {
			t.Errorf("README exit status %d: %q\nwant %q (internal/exitstatus.Meanings)", m.Status, got[int(m.Status)], m.Meaning)
		}
	}
	if len(got) != len(Meanings) {
		t.Errorf("README lists %d exit statuses, the table %d", len(got), len(Meanings))
	}
}

// stoppedBy is a context cancelled as main cancels it on sig.
func stoppedBy(sig syscall.Signal) context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&Signal{Signal: sig})
	return ctx
}

// A Kubernetes Job's podFailurePolicy names exit statuses (campaign
// cannot import this package, which pulls in FFmpeg): they are this
// table's, so that a stop by SIGTERM is ignored and a failure of the
// inputs fails the index.
func TestKubernetesJobNamesTheTablesStatuses(t *testing.T) {
	m, err := campaign.Parse("/campaign/c.json", []byte(`{"schema_version": 1, "campaign_id": "c", "settings": {"s": {}},
		"cases": [{"case_id": "a", "setting_id": "s", "run_id": "1", "session": "a"}]}`), false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := campaign.KubernetesJob("c", m.Tasks, campaign.KubernetesOptions{
		ScriptOptions: campaign.ScriptOptions{Binary: "ceres-export", Manifest: "/campaign/c.json", Out: "/campaign/out", ArrayCount: 1},
		Image:         "ceres-export:test", Claim: "claim", MountPath: "/campaign",
	})
	if err != nil {
		t.Fatal(err)
	}
	var job struct {
		Spec struct {
			PodFailurePolicy struct {
				Rules []struct {
					Action      string
					OnExitCodes *struct{ Values []int }
				}
			}
		}
	}
	if err := json.Unmarshal(b, &job); err != nil {
		t.Fatal(err)
	}
	got := map[string][]int{}
	for _, r := range job.Spec.PodFailurePolicy.Rules {
		if r.OnExitCodes != nil {
			got[r.Action] = append(got[r.Action], r.OnExitCodes.Values...)
		}
	}
	want := map[string][]int{"Ignore": {int(Terminate)}, "FailIndex": {int(Findings), int(Usage)}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the Job's exit codes by action %v, want %v", got, want)
	}
}

package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/output"
)

// A merge whose destination another process holds (a merge job that froze
// on its node while SLURM requeued it) waits for it with --wait-busy, as a
// campaign's exports do, and then writes the dataset; without it the
// merge gives up at once as busy (exit 4).
func TestE2EMergeWaitsForBusyDestination(t *testing.T) {
	a := exportShard(t, "a", "--seed", "1", "--cameras", "1")
	for _, tc := range []struct {
		name string
		wait []string
		code int
	}{
		{"no wait", nil, exitFailed},
		{"wait", []string{"--wait-busy", "1m"}, exitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "merged")
			lock, err := output.LockDestination(dest)
			if err != nil {
				t.Fatal(err)
			}
			const held = 1500 * time.Millisecond
			go func() {
				time.Sleep(held)
				_ = lock.Unlock()
			}()
			start := time.Now()
			_, errOut, code := run(t, append([]string{"merge", a, "-o", dest}, tc.wait...)...)
			took := time.Since(start)
			if code != tc.code {
				t.Fatalf("exit %d after %v, want %d:\n%s", code, took.Round(time.Millisecond), tc.code, errOut)
			}
			if code == exitOK {
				if took < held {
					t.Errorf("merged after %v, before the holder let go (%v)", took, held)
				}
				if kind, ok := output.KindOf(dest); !ok || kind != output.KindMerged {
					t.Errorf("no merged dataset at %s (%q)", dest, kind)
				}
			} else if !strings.Contains(errOut, "being written by another process") {
				t.Errorf("stderr %q", errOut)
			}
		})
	}
}

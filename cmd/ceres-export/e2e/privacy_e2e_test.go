package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestE2EMetadataOnly: a metadata-only export needs a salt, passes
// verify --privacy metadata-only against its session, and an ordinary export
// fails it.
func TestE2EMetadataOnly(t *testing.T) {
	session := synthSession(t, "--seed", "4")
	out := t.TempDir()
	private, full := filepath.Join(out, "private"), filepath.Join(out, "full")

	_, errOut, code := run(t, "export", session, "-o", private, "-q", "--privacy", "metadata-only")
	if code != 2 || !strings.Contains(errOut, "--privacy metadata-only needs --salt") {
		t.Fatalf("metadata-only without --salt: exit %d, %s", code, errOut)
	}
	mustRun(t, "export", session, "-o", private, "-q", "--privacy", "metadata-only", "--salt", "pepper")
	mustRun(t, "verify", private, "--privacy", "metadata-only", "--journal", session, "--salt", "pepper")

	mustRun(t, "export", session, "-o", full, "-q", "--no-report", "--vcodec", "h264")

	// merge keeps a metadata-only dataset metadata-only, and never mixes.
	merged := filepath.Join(out, "merged")
	_, errOut, code = run(t, "merge", private, full, "-o", merged)
	if code != 2 || !strings.Contains(errOut, "metadata-only and full sources cannot be joined") {
		t.Errorf("merge of a metadata-only and a full shard: exit %d, %s", code, errOut)
	}
	_, errOut, code = run(t, "merge", full, "-o", merged, "--privacy", "metadata-only")
	if code != 2 || !strings.Contains(errOut, "--privacy metadata-only joins metadata-only exports only") {
		t.Errorf("merge --privacy metadata-only of a full shard: exit %d, %s", code, errOut)
	}
	mustRun(t, "merge", private, "-o", merged, "--privacy", "metadata-only")
	mustRun(t, "verify", merged, "--privacy", "metadata-only", "--journal", session, "--salt", "pepper")
	stdout, _, code := run(t, "verify", full, "--privacy", "metadata-only", "--journal", session, "--quick")
	if code != 1 || !strings.Contains(stdout, "privacy.leak") || !strings.Contains(stdout, "privacy.video") {
		t.Errorf("verify --privacy metadata-only of a full export: exit %d\n%s", code, stdout)
	}
}

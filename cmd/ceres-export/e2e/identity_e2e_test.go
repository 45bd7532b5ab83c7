package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// verify --journal proves frame identity by content on cameras without a
// code band: an export checked against its true session is sound and says
// nothing went unchecked; checked against the same session with its camera
// start stated 17 ms late, it is NOT SOUND and names the frames.
func TestE2EVerifyFrameIdentityWithoutCodeBand(t *testing.T) {
	args := []string{"--seed", "5", "--cameras", "1", "--no-retries", "--camera-scene", "natural", "--camera-codec", "vp9", "--camera-full-range", "--width", "128", "--height", "96"}
	session := synthSession(t, args...)
	wrong := synthSession(t, append(args, "--camera-start-error", "17ms")...)
	shard := filepath.Join(t.TempDir(), "shard")
	mustRun(t, "export", session, "-o", shard, "--vcodec", "h264", "-q")

	out, errOut, code := run(t, "verify", shard, "--journal", session)
	if code != exitOK || !strings.Contains(out, "sound: 0 errors, 0 warnings, 0 notes") {
		t.Fatalf("verify against the true session: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = run(t, "verify", shard, "--journal", wrong)
	if code != exitFindings || !strings.Contains(out, "NOT SOUND") {
		t.Fatalf("verify against the session 17 ms off: exit %d, want %d\n%s%s", code, exitFindings, out, errOut)
	}
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "journal.video-content") && strings.Contains(line, "episode ") && strings.Contains(line, "looks like source frame") {
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no journal.video-content finding naming an episode, frame and source frame:\n%s", out)
	}
	t.Logf("%d frames named, e.g. %s", n, strings.SplitN(out, "\n", 2)[0])
}

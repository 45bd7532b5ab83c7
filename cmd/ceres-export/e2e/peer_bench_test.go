package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/testenv"
)

// peerPython is the LeRobot 0.6 venv's interpreter: CONFORMANCE_VENV_06, or
// the one tests/conformance/run06.sh builds; "" when there is none.
func peerPython() string {
	venv := os.Getenv("CONFORMANCE_VENV_06")
	if venv == "" {
		venv = filepath.Join("..", "..", "..", ".cache", "conformance-venv-0.6")
	}
	py, err := filepath.Abs(filepath.Join(venv, "bin", "python"))
	if err != nil {
		return ""
	}
	if _, err := os.Stat(py); err != nil {
		return ""
	}
	return py
}

// BenchmarkPeerLeRobot06 compares our export of a session with LeRobot 0.6's
// own writer producing the same episodes (tests/conformance/peer06_bench.py:
// LeRobotDataset.create, add_frame, save_episode, finalize) from frames it
// already holds decoded in memory, with streaming encoding off (create()'s
// default: PNG files, then one encode per episode) and on, at our encoder
// settings (AV1, CRF 30, GOP 2, preset 12). Goals: ratio_vs_lerobot_streaming
// >= 2 and ratio_vs_lerobot_default >= 4, although the export does more work
// (reads the journal, decodes the camera files, selects attempts). The
// export runs before and after the peer, and its mean is the reference, so
// that a change of load on a shared machine hits both sides. Needs the 0.6
// venv (make conformance builds it); skipped without it.
func BenchmarkPeerLeRobot06(b *testing.B) {
	py := peerPython()
	if py == "" {
		testenv.Missing(b, "no LeRobot 0.6 venv (make conformance builds .cache/conformance-venv-0.6, or set CONFORMANCE_VENV_06)")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "..", "tests", "conformance", "peer06_bench.py"))
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		// The demo's cameras (two, 320×240) over one cycle of the example
		// specification (about a minute): the peer holds every frame in memory.
		session := benchSession(b, dir, 1, "--cameras", "2")
		shard := filepath.Join(dir, "shard")
		before, _ := runMeasured(b, "export", session, "-o", shard, "-q")

		cmd := exec.Command(py, script, "--shard", shard, "--workdir", filepath.Join(dir, "peer"))
		cmd.Env = append(os.Environ(), "HF_HOME="+filepath.Join(dir, "hf-home"))
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("peer06_bench.py: %v\n%s", err, lastBytes(stderr.Bytes(), 3000))
		}
		var peer struct {
			Frames     int     `json:"frames"`
			Cameras    int     `json:"cameras"`
			DefaultS   float64 `json:"default_s"`
			StreamingS float64 `json:"streaming_s"`
		}
		if err := json.Unmarshal(lastLine(out.Bytes()), &peer); err != nil || peer.DefaultS <= 0 || peer.StreamingS <= 0 {
			b.Fatalf("peer06_bench.py output %q: %v", out.String(), err)
		}

		after, _ := runMeasured(b, "export", session, "-o", shard, "-q", "--replace", "--no-video-reuse")
		ours := (before + after) / 2
		b.ReportMetric(float64(peer.Frames), "frames")
		b.ReportMetric(float64(peer.Cameras), "cameras")
		b.ReportMetric(before.Seconds(), "s_export_before")
		b.ReportMetric(after.Seconds(), "s_export_after")
		b.ReportMetric(peer.DefaultS, "s_lerobot_default")
		b.ReportMetric(peer.StreamingS, "s_lerobot_streaming")
		b.ReportMetric(peer.StreamingS/ours.Seconds(), "ratio_vs_lerobot_streaming")
		b.ReportMetric(peer.DefaultS/ours.Seconds(), "ratio_vs_lerobot_default")
	}
}

func lastLine(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}

func lastBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"testing"
)

func TestHeldSample(t *testing.T) {
	times := []int64{100, 200, 200, 300}
	tests := []struct {
		T    int64
		want int
	}{
		{T: 50, want: 0},  // before the first sample: back-filled with it
		{T: 100, want: 0}, // t ≤ T includes equality
		{T: 199, want: 0},
		{T: 200, want: 2}, // the latest of equal times
		{T: 299, want: 2},
		{T: 1000, want: 3},
	}
	for _, tc := range tests {
		if got := heldSample(times, tc.T); got != tc.want {
			t.Errorf("heldSample(%d) = %d, want %d", tc.T, got, tc.want)
		}
	}
}

func TestNearestFrame(t *testing.T) {
	frames := []sourceFrame{{t: big.NewRat(0, 1)}, {t: big.NewRat(100, 1)}, {t: big.NewRat(1000, 3)}}
	tests := []struct {
		T    *big.Rat
		want int
	}{
		{T: big.NewRat(-5, 1), want: 0},
		{T: big.NewRat(49, 1), want: 0},
		{T: big.NewRat(50, 1), want: 0}, // a tie goes to the earlier frame
		{T: big.NewRat(51, 1), want: 1},
		{T: big.NewRat(650, 3), want: 1}, // exactly halfway between 100 and 1000/3
		{T: big.NewRat(651, 3), want: 2},
		{T: big.NewRat(9999, 1), want: 2},
	}
	for _, tc := range tests {
		if got := nearestFrame(frames, tc.T); got != tc.want {
			t.Errorf("nearestFrame(%s) = %d, want %d", tc.T.RatString(), got, tc.want)
		}
	}
}

func TestReplaceNonFinite(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a": [1, 2]}`, `{"a": [1, 2]}`},
		{`{"a": [NaN, -Infinity, Infinity]}`, `{"a": ["\ue000nonfinite:NaN", "\ue000nonfinite:-Infinity", "\ue000nonfinite:Infinity"]}`},
		{`{"NaN": "x \" NaN"}`, `{"NaN": "x \" NaN"}`}, // inside strings nothing changes
	}
	for _, tc := range tests {
		got := string(replaceNonFinite([]byte(tc.in)))
		var a, b any
		if err := json.Unmarshal([]byte(got), &a); err != nil {
			t.Errorf("%s: output %s does not parse: %v", tc.in, got, err)
			continue
		}
		json.Unmarshal([]byte(tc.want), &b)
		if ab, _ := json.Marshal(a); !bytes.Equal(ab, mustJSON(b)) {
			t.Errorf("replaceNonFinite(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// FuzzReplaceNonFinite: the rewrite never changes a document without bare
// non-finite tokens, and a document that parses after it has no NaN left.
func FuzzReplaceNonFinite(f *testing.F) {
	f.Add([]byte(`{"a": {"min": [NaN, 1.5]}}`))
	f.Add([]byte(`{"a\"NaN": [Infinity]}`))
	f.Add([]byte(`[-Infinity`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out := replaceNonFinite(b)
		if !bytes.Contains(b, []byte("NaN")) && !bytes.Contains(b, []byte("Infinity")) && !bytes.Equal(out, b) {
			t.Fatalf("changed %q to %q", b, out)
		}
		if json.Valid(b) && !json.Valid(out) {
			t.Fatalf("valid %q became invalid %q", b, out)
		}
	})
}

// FuzzInfoJSON: verify reports any meta/info.json as findings, never a
// panic, and a shard without data is never sound.
func FuzzInfoJSON(f *testing.F) {
	// No fixture here: every fuzz worker would export a session first.
	f.Add([]byte(`{"codebase_version": "v3.0", "robot_type": null, "total_episodes": 1, "total_frames": 2,
		"total_tasks": 1, "chunks_size": 1000, "data_files_size_in_mb": 100, "video_files_size_in_mb": 200,
		"fps": 30, "splits": {"train": "0:1"}, "data_path": "` + dataPathTemplate + `", "video_path": "` + videoPathTemplate + `",
		"features": {"observation.images.front": {"dtype": "video", "shape": [48, 64, 3], "names": ["height", "width", "channels"],
		"info": {"video.codec": "h264", "video.fps": 30}}, "observation.x": {"dtype": "float32", "shape": [2], "names": ["a", "b"]},
		"timestamp": {"dtype": "float32", "shape": [1], "names": null}, "frame_index": {"dtype": "int64", "shape": [1], "names": null},
		"episode_index": {"dtype": "int64", "shape": [1], "names": null}, "index": {"dtype": "int64", "shape": [1], "names": null},
		"task_index": {"dtype": "int64", "shape": [1], "names": null}}}`))
	f.Add([]byte(`{"fps": 0, "features": {"timestamp": {"dtype": "video", "shape": [1]}}}`))
	f.Add([]byte(`{"codebase_version": "v3.0", "fps": 30, "features": {"x": {"dtype": "float32", "shape": [2], "names": ["a"]}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "meta"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, infoPath), b, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Shard(context.Background(), dir, Options{Quick: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Sound {
			t.Fatalf("a shard with only info.json is sound")
		}
	})
}

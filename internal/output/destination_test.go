package output

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

const ourMarker = `{"tool":"ceres-export","kind":"shard"}` + "\n"

// destinationFixture is a directory with a session, a spec file, an output
// of ours and several things that are not ours.
func destinationFixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"session/journal/000001.cjl":                "journal",
		"session/media/front.webm":                  "video",
		"spec.json":                                 "{}",
		"ours/content":                              "{}",
		"ours/" + layout.OutputMarkerPath:           ourMarker,
		"merged/" + layout.OutputMarkerPath:         `{"tool":"ceres-export","kind":"merged"}`,
		"home/.bashrc":                              "x",
		"home/notes.txt":                            "y",
		"lerobot/content":                           "{}", // a dataset some other tool wrote
		"lerobot/ceres/report":                      "{}",
		"foreign-marker/" + layout.OutputMarkerPath: `{"tool":"other","kind":"shard"}`,
		"bad-marker/" + layout.OutputMarkerPath:     "not json",
		"linked-marker/ceres/x":                     "{}",
		"file.parquet":                              "PAR1",
		"realparent/keep":                           "",
		"session2/journal/000001.cjl":               "journal",
		"session2/media/cam.mp4":                    "video",
		"session2/media/nested/deeper/x.webm":       "video",
	})
	must(t, os.Symlink(filepath.Join(root, "ours", layout.OutputMarkerPath), filepath.Join(root, "linked-marker", layout.OutputMarkerPath)))
	must(t, os.Symlink(filepath.Join(root, "ours"), filepath.Join(root, "link-to-ours")))
	must(t, os.Symlink(filepath.Join(root, "session"), filepath.Join(root, "link-to-session")))
	must(t, os.Symlink(filepath.Join(root, "realparent"), filepath.Join(root, "linkparent")))
	must(t, os.Symlink(filepath.Join(root, "nowhere"), filepath.Join(root, "dangling")))
	must(t, syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644))
	return root
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestCheckDestination(t *testing.T) {
	t.Parallel()
	root := destinationFixture(t)
	p := func(rel string) string { return filepath.Join(root, rel) }
	inputs := []string{p("session"), p("spec.json")}
	for _, c := range []struct {
		name    string
		dest    string
		inputs  []string
		replace bool
		want    error  // nil: accepted
		at      string // accepted: the resolved path
	}{
		{"new name", p("new"), inputs, false, nil, p("new")},
		{"new name, replace", p("new"), inputs, true, nil, p("new")},
		{"our shard, replace", p("ours"), inputs, true, nil, p("ours")},
		{"our merged dataset, replace", p("merged"), inputs, true, nil, p("merged")},
		{"our shard, no replace", p("ours"), inputs, false, ErrDestinationExists, ""},
		{"through a linked parent", p("linkparent/new"), inputs, false, nil, p("realparent/new")},

		{"the session", p("session"), inputs, true, ErrDestinationRefused, ""},
		{"the session, no replace", p("session"), inputs, false, ErrDestinationRefused, ""},
		{"a name in journal/", p("session/journal/out"), inputs, false, ErrDestinationRefused, ""},
		{"a segment", p("session/journal/000001.cjl"), inputs, true, ErrDestinationRefused, ""},
		{"media/", p("session/media"), inputs, true, ErrDestinationRefused, ""},
		{"a name in media/", p("session/media/shard"), inputs, false, ErrDestinationRefused, ""},
		{"the session's parent", root, inputs, true, ErrDestinationRefused, ""},
		{"the spec file", p("spec.json"), inputs, true, ErrDestinationRefused, ""},
		{"the session through a link", p("link-to-session/journal/x"), inputs, false, ErrDestinationRefused, ""},
		{"an input given through a link", p("session/out"), []string{p("link-to-session")}, false, ErrDestinationRefused, ""},
		{"inside a shard being merged", p("ours/merged"), []string{p("ours"), p("merged")}, false, ErrDestinationRefused, ""},
		{"a shard being merged", p("merged"), []string{p("ours"), p("merged")}, true, ErrDestinationRefused, ""},
		{"deep in another input", p("session2/media/nested/deeper/x.webm"), []string{p("session2")}, true, ErrDestinationRefused, ""},

		{"a home directory", p("home"), inputs, true, ErrDestinationRefused, ""},
		{"a regular file", p("file.parquet"), inputs, true, ErrDestinationRefused, ""},
		{"a named pipe", p("fifo"), inputs, true, ErrDestinationRefused, ""},
		{"a dataset without marker", p("lerobot"), inputs, true, ErrDestinationRefused, ""},
		{"another tool's marker", p("foreign-marker"), inputs, true, ErrDestinationRefused, ""},
		{"a marker that is not JSON", p("bad-marker"), inputs, true, ErrDestinationRefused, ""},
		{"a marker that is a link", p("linked-marker"), inputs, true, ErrDestinationRefused, ""},

		{"a link to our shard", p("link-to-ours"), inputs, true, ErrDestinationRefused, ""},
		{"a link to our shard, no replace", p("link-to-ours"), inputs, false, ErrDestinationRefused, ""},
		{"a dangling link", p("dangling"), inputs, false, ErrDestinationRefused, ""},
		{"a staging name", p(".x.ceres-tmp-1"), inputs, false, ErrDestinationRefused, ""},
		{"a lock name", p(".x.ceres-lock"), inputs, false, ErrDestinationRefused, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := CheckDestination(c.dest, c.inputs, c.replace)
			if c.want == nil {
				if err != nil || got != c.at {
					t.Fatalf("CheckDestination = %q, %v; want %q", got, err, c.at)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("CheckDestination = %q, %v; want %v", got, err, c.want)
			}
		})
	}
}

// Stage refuses what CheckDestination refuses, and writes nothing anywhere
// when it does: no staging, no lock, no marker.
func TestStageRefusalWritesNothing(t *testing.T) {
	t.Parallel()
	root := destinationFixture(t)
	p := func(rel string) string { return filepath.Join(root, rel) }
	before := listAll(t, root)
	for _, dest := range []string{p("session"), p("session/journal/x"), p("home"), p("fifo"), p("link-to-ours"), p("file.parquet")} {
		st, err := Stage(dest, StageOptions{Replace: true, Inputs: []string{p("session")}})
		if err == nil {
			st.Abort()
			t.Errorf("Stage(%s) accepted", dest)
		}
	}
	if after := listAll(t, root); !slices.Equal(before, after) {
		t.Errorf("refused Stage changed the tree:\nbefore %v\nafter  %v", before, after)
	}
}

func listAll(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	must(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		out = append(out, path)
		return nil
	}))
	return out
}

// Writers racing for one destination: exactly one holds it at a time, the
// others are refused with ErrDestinationBusy, and after each commit the
// destination is one whole output with nothing left beside it.
func TestStageOneWriterAtATime(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dest := filepath.Join(parent, "shard")
	for round, writers := range []int{2, 4, 8} {
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			holders []*Staging
			busy    int
		)
		for range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := Stage(dest, StageOptions{Replace: true})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					holders = append(holders, st)
				case errors.Is(err, ErrDestinationBusy):
					busy++
				default:
					t.Errorf("round %d: %v", round, err)
				}
			}()
		}
		wg.Wait()
		if len(holders) != 1 || busy != writers-1 {
			t.Fatalf("round %d: %d writers got the destination, %d were busy", round, len(holders), busy)
		}
		writeTree(t, holders[0].Dir(), map[string]string{"content": string(rune('a' + round))})
		must(t, holders[0].Commit())
		if got := treeContent(t, dest); got["content"] != string(rune('a'+round)) || got[layout.OutputMarkerPath] != ourMarker {
			t.Errorf("round %d: destination %v", round, got)
		}
		if names := siblings(t, parent); !slices.Equal(names, []string{"shard"}) {
			t.Errorf("round %d: beside the destination: %v", round, names)
		}
	}
}

// The lock file is never a link or a FIFO taken over from someone else.
func TestLockDestinationRefusesPlantedLock(t *testing.T) {
	t.Parallel()
	for _, plant := range []func(path string) error{
		func(path string) error { return syscall.Mkfifo(path, 0o644) },
		func(path string) error { return os.Symlink("/etc/passwd", path) },
		func(path string) error { return os.Mkdir(path, 0o755) },
	} {
		parent := t.TempDir()
		dest := filepath.Join(parent, "shard")
		must(t, plant(filepath.Join(parent, ".shard"+lockSuffix)))
		if l, err := LockDestination(dest); err == nil {
			l.Unlock()
			t.Errorf("lock over a planted %s accepted", siblings(t, parent))
		}
	}
}

package output

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, body := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func treeContent(t *testing.T, root string) map[string]string {
	t.Helper()
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func siblings(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestStageCommitNew(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dest := filepath.Join(parent, "shard-1")
	st, err := Stage(dest, StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(st.Dir()), ".shard-1.ceres-tmp-") || !isStagingDir(st.Dir()) {
		t.Fatalf("staging dir %s not recognisable", st.Dir())
	}
	writeTree(t, st.Dir(), map[string]string{"content": "new"})
	if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("destination appeared before Commit")
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	got := treeContent(t, dest)
	if len(got) != 2 || got["content"] != "new" || got[layout.OutputMarkerPath] != ourMarker {
		t.Errorf("committed tree %v (the staging marker must not be part of it, the output marker must)", got)
	}
	if names := siblings(t, parent); len(names) != 1 {
		t.Errorf("leftovers beside the shard: %v", names)
	}
	if fi, _ := os.Stat(dest); fi.Mode().Perm() != 0o755 {
		t.Errorf("shard mode %v", fi.Mode().Perm())
	}
	if err := st.Abort(); err != nil {
		t.Errorf("Abort after Commit: %v", err)
	}
	if len(treeContent(t, dest)) != 2 {
		t.Error("Abort after Commit touched the shard")
	}
}

func TestStageRefusesExistingWithoutReplace(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dest := filepath.Join(parent, "shard")
	writeTree(t, dest, map[string]string{"content": "old"})
	if _, err := Stage(dest, StageOptions{}); !errors.Is(err, ErrDestinationExists) {
		t.Fatalf("Stage over an existing shard: %v, want ErrDestinationExists", err)
	}
	if names := siblings(t, parent); len(names) != 1 {
		t.Errorf("refused Stage left %v", names)
	}
}

func TestStageReplaceSwaps(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dest := filepath.Join(parent, "shard")
	writeTree(t, dest, map[string]string{"content": "old", layout.OutputMarkerPath: ourMarker})
	st, err := Stage(dest, StageOptions{Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, st.Dir(), map[string]string{"content": "new"})
	if got := treeContent(t, dest); got["content"] != "old" {
		t.Fatal("destination changed before Commit")
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	got := treeContent(t, dest)
	if len(got) != 2 || got["content"] != "new" {
		t.Errorf("after replace: %v", got)
	}
	if names := siblings(t, parent); len(names) != 1 {
		t.Errorf("old shard or staging left behind: %v", names)
	}
}

func TestStageAbortLeavesDestination(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dest := filepath.Join(parent, "shard")
	writeTree(t, dest, map[string]string{"content": "old", layout.OutputMarkerPath: ourMarker})
	st, err := Stage(dest, StageOptions{Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	// A build that fails half-way.
	writeTree(t, st.Dir(), map[string]string{"content": "half", "part": "1"})
	if err := st.Abort(); err != nil {
		t.Fatal(err)
	}
	got := treeContent(t, dest)
	if len(got) != 2 || got["content"] != "old" {
		t.Errorf("destination after a failed build: %v", got)
	}
	if names := siblings(t, parent); len(names) != 1 {
		t.Errorf("staging left behind: %v", names)
	}
	if err := st.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}
}

// A staging directory is stale exactly when nobody holds its
// destination's lock: a live writer's staging survives a second writer,
// which is refused; once the writer is gone, every leftover goes.
func TestStaleStagingOnlyWhenOwnerGone(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dest := filepath.Join(parent, "shard")
	dead := filepath.Join(parent, ".shard.ceres-tmp-111")
	// No marker: the old shard a Commit swapped out just before it was
	// killed, before it could mark it.
	swappedOut := filepath.Join(parent, ".shard.ceres-tmp-333")
	other := filepath.Join(parent, ".other.ceres-tmp-444") // another destination
	// pid 1 is alive: a pid says nothing, the lock does.
	writeTree(t, dead, map[string]string{StagingMarker: "x\npid 1\n", "part": "1"})
	writeTree(t, swappedOut, map[string]string{"content": "{}"})
	writeTree(t, other, map[string]string{StagingMarker: "x\npid 4194305\n"})
	if isStagingDir(swappedOut) || !isStagingDir(dead) {
		t.Fatal("isStagingDir misjudges")
	}
	live, err := Stage(dest, StageOptions{}) // cleans up as a side effect
	if err != nil {
		t.Fatal(err)
	}
	second, err := Stage(dest, StageOptions{})
	if !errors.Is(err, ErrDestinationBusy) {
		second.Abort()
		t.Fatalf("second writer: %v, want ErrDestinationBusy", err)
	}
	for _, c := range []struct {
		path  string
		exist bool
	}{{dead, false}, {live.Dir(), true}, {swappedOut, false}, {other, true}} {
		_, err := os.Stat(c.path)
		if exists := err == nil; exists != c.exist {
			t.Errorf("%s exists=%v, want %v", filepath.Base(c.path), exists, c.exist)
		}
	}
	// The live writer "dies" without cleaning up: its lock goes with it.
	leftover := live.Dir()
	live.unlock()
	next, err := Stage(dest, StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Abort()
	if _, err := os.Stat(leftover); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("staging of a gone writer survived: %v", err)
	}
}

// A scratch directory is a staging directory of its destination: made
// under the destination's lock, removed by the next Scratch or Stage after
// its owner was killed, never committed, gone after Abort.
func TestScratchFollowsTheStagingRule(t *testing.T) {
	parent := t.TempDir()
	dest := filepath.Join(parent, "session")
	killed, err := Scratch(dest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Scratch(dest); !errors.Is(err, ErrDestinationBusy) {
		t.Fatalf("a second scratch while the first is held: %v, want ErrDestinationBusy", err)
	}
	// Killed: its lock goes with the process, its directory stays.
	_ = killed.lock.Unlock()
	st, err := Scratch(dest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(killed.Dir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the killed run's scratch %s is still there: %v", killed.Dir(), err)
	}
	if err := st.Commit(); err == nil {
		t.Error("a scratch directory was committed")
	}
	if err := st.Abort(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("left after Abort: %v", entries)
	}
}

// isStagingDir reports whether path is a staging directory of this package
// (name ".<base>.ceres-tmp-*" holding the marker file).
func isStagingDir(path string) bool {
	name := filepath.Base(path)
	if !strings.HasPrefix(name, ".") || !strings.Contains(name, tempInfix) {
		return false
	}
	st, err := os.Stat(filepath.Join(path, StagingMarker))
	return err == nil && st.Mode().IsRegular()
}

// A fence asked when the lock is taken and again under it just before the
// commit: refused at either point, the destination is the old one, and
// the staging goes with the Abort.
func TestStageFence(t *testing.T) {
	t.Parallel()
	stale := errors.New("a newer writer started")
	for _, tc := range []struct {
		name          string
		refuseAt      int // the call that refuses: 1 at Stage, 2 at Commit
		wantStageErr  bool
		wantCommitErr bool
	}{
		{"refused at stage", 1, true, false},
		{"refused at commit", 2, false, true},
		{"allowed", 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dest := filepath.Join(parent, "shard")
			writeTree(t, dest, map[string]string{"content": "old", layout.OutputMarkerPath: ourMarker})
			calls := 0
			fence := func() error {
				calls++
				if calls == tc.refuseAt {
					return stale
				}
				return nil
			}
			st, err := Stage(dest, StageOptions{Replace: true, Fence: fence})
			if (err != nil) != tc.wantStageErr || err != nil && !errors.Is(err, stale) {
				t.Fatalf("Stage: %v", err)
			}
			if err == nil {
				writeTree(t, st.Dir(), map[string]string{"content": "new"})
				err = st.Commit()
				if (err != nil) != tc.wantCommitErr || err != nil && !errors.Is(err, stale) {
					t.Fatalf("Commit: %v", err)
				}
				_ = st.Abort()
			}
			want := "new"
			if tc.refuseAt != 0 {
				want = "old"
			}
			if got := treeContent(t, dest); got["content"] != want {
				t.Errorf("destination holds %q, want %q", got["content"], want)
			}
			if names := siblings(t, parent); len(names) != 1 {
				t.Errorf("staging or lock left behind: %v", names)
			}
			// The lock was released: another writer can stage.
			st2, err := Stage(dest, StageOptions{Replace: true})
			if err != nil {
				t.Fatalf("lock not released: %v", err)
			}
			_ = st2.Abort()
		})
	}
}

// TestCommitLeavesTheReplacedOutputsFilesUnsynced: an append links every
// file of the dataset it appends to into the new one (thousands for a lab's
// year of shards), and fsyncing each again made most of its time. Those
// inodes are the replaced output's, which the commit that put them there
// fsynced; the directories that now name them are fsynced all the same.
func TestCommitLeavesTheReplacedOutputsFilesUnsynced(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dest := filepath.Join(parent, "dataset")
	st, err := Stage(dest, StageOptions{Kind: KindMerged})
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, st.Dir(), map[string]string{"data/kept": "old", "meta/rewritten": "old"})
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	st, err = Stage(dest, StageOptions{Kind: KindMerged, Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := LinkOrCopy(filepath.Join(dest, "data", "kept"), filepath.Join(st.Dir(), "data", "kept")); err != nil {
		t.Fatal(err)
	}
	writeTree(t, st.Dir(), map[string]string{"meta/rewritten": "new", "data/added": "new"})
	var synced []string
	st.syncFile = func(p string) error {
		rel, _ := filepath.Rel(st.Dir(), p)
		synced = append(synced, filepath.ToSlash(rel))
		return SyncFile(p)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(synced)
	if want := []string{layout.OutputMarkerPath, "data/added", "meta/rewritten"}; !slices.Equal(synced, want) {
		t.Errorf("commit fsynced %q, want %q (not data/kept, linked from the dataset it replaces)", synced, want)
	}
	if got := treeContent(t, dest); got["data/kept"] != "old" || got["data/added"] != "new" || got["meta/rewritten"] != "new" {
		t.Errorf("after commit: %v", got)
	}
}

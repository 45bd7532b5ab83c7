package output

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// ErrDestinationExists is returned by Stage when the destination exists and
// StageOptions.Replace is not set.
var ErrDestinationExists = errors.New("output: destination exists")

const (
	// tempInfix is part of every staging directory name:
	// ".<dest-base>.ceres-tmp-<random>". The leading dot and the infix keep
	// it from ever being taken for a shard.
	tempInfix = ".ceres-tmp-"
	// StagingMarker is a file inside a staging directory saying who made it
	// (removed at the commit).
	StagingMarker = ".ceres-staging"
)

// StageOptions configures Stage. The zero value refuses an existing
// destination and stages a shard.
type StageOptions struct {
	// Replace allows replacing an existing destination atomically; only an
	// output this tool made is ever replaced (see CheckDestination).
	Replace bool
	// Kind is the layout.OutputMarkerPath kind Commit records: KindShard (the
	// default), KindMerged or KindCampaign.
	Kind string
	// Inputs are every path the command reads (session directories, spec
	// files, shards being merged); the destination may not overlap any.
	Inputs []string
	// Fence, when set, is asked under the destination's lock whether this
	// writer may still write it: once when the lock is taken and again
	// just before the commit moves the output in. Its error refuses the
	// stage or the commit (the destination is left as it was). A campaign
	// attempt refuses itself there once a newer attempt of its task has
	// started: a writer that froze and came back never overwrites the
	// newer one's shard.
	Fence func() error
}

// Staging is an output being built in a temporary directory beside its
// destination, under the destination's lock. Build everything under Dir,
// then Commit; on any failure call Abort (safe to defer: it does nothing
// after Commit).
type Staging struct {
	dest    string
	tmp     string
	kind    string
	replace bool
	done    bool
	scratch bool // made by Scratch: never committed
	lock    *DestinationLock
	fence   func() error
	// syncFile fsyncs one file of the tree at Commit (SyncFile; tests
	// record what it is given).
	syncFile func(path string) error
	// committed, when the destination may be replaced, gives its files
	// (committedFiles), listed while the output is built: under the lock
	// they cannot change, and listing the 1,000 files of a merged
	// dataset at the commit made an append's last step grow with it.
	committed chan committedList
}

// committedList is committedFiles' result.
type committedList struct {
	files map[inode]bool
	err   error
}

// Stage checks dest against the rules of CheckDestination, takes its lock
// (ErrDestinationBusy when another process holds it), removes the staging
// directories earlier runs left behind (their owners are gone: they held
// the lock while they lived), and prepares a new staging directory in the
// destination's real parent. It fails before any work if dest exists and
// opts.Replace is false.
func Stage(dest string, opts StageOptions) (*Staging, error) {
	kind := opts.Kind
	if kind == "" {
		kind = KindShard
	}
	resolved, err := CheckDestination(dest, opts.Inputs, opts.Replace)
	if err != nil {
		return nil, err
	}
	lock, err := LockDestination(resolved)
	if err != nil {
		return nil, err
	}
	// Check again under the lock: another writer may have committed.
	if _, err := CheckDestination(resolved, opts.Inputs, opts.Replace); err != nil {
		_ = lock.Unlock()
		return nil, err
	}
	if opts.Fence != nil {
		if err := opts.Fence(); err != nil {
			_ = lock.Unlock()
			return nil, fmt.Errorf("output: stage %s: %w", resolved, err)
		}
	}
	st, err := stageLocked(resolved, kind, opts.Replace)
	if err != nil {
		_ = lock.Unlock()
		return nil, err
	}
	st.lock, st.fence = lock, opts.Fence
	if opts.Replace {
		st.committed = make(chan committedList, 1)
		go func() {
			files, err := committedFiles(resolved)
			st.committed <- committedList{files, err}
		}()
	}
	return st, nil
}

// Scratch makes a work directory for a command that writes dest in place
// rather than by a commit (synth --live replays a session into it as a
// recorder would). It follows the staging rule all the same: it takes
// dest's lock (ErrDestinationBusy when another process holds it), removes
// the staging directories killed runs left, and makes a staging directory
// beside dest, which Abort removes. Commit refuses it.
func Scratch(dest string) (*Staging, error) {
	abs, err := filepath.Abs(dest)
	if err != nil {
		return nil, err
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return nil, fmt.Errorf("output: scratch for %s: %w", dest, err)
	}
	resolved := filepath.Join(parent, filepath.Base(abs))
	lock, err := LockDestination(resolved)
	if err != nil {
		return nil, err
	}
	st, err := stageLocked(resolved, "", false)
	if err != nil {
		_ = lock.Unlock()
		return nil, err
	}
	st.lock, st.scratch = lock, true
	return st, nil
}

func stageLocked(dest, kind string, replace bool) (*Staging, error) {
	parent, base := filepath.Dir(dest), filepath.Base(dest)
	if _, err := removeStaleStaging(dest); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(parent, "."+base+tempInfix)
	if err != nil {
		return nil, fmt.Errorf("output: stage %s: %w", dest, err)
	}
	// MkdirTemp makes 0700; the shard is an ordinary directory once committed.
	if err := os.Chmod(tmp, 0o755); err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("output: stage %s: %w", dest, err)
	}
	if err := writeMarker(tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("output: stage %s: %w", dest, err)
	}
	if testHookStaged != nil {
		testHookStaged()
	}
	return &Staging{dest: dest, tmp: tmp, kind: kind, replace: replace}, nil
}

// testHookStaged, when set, runs once a staging directory is ready: only a
// binary built with the ceres_testhooks tag sets it (testhook_pause.go).
var testHookStaged func()

func writeMarker(dir string) error {
	body := "ceres-export staging directory; safe to delete when no export runs\npid " + strconv.Itoa(os.Getpid()) + "\n"
	return os.WriteFile(filepath.Join(dir, StagingMarker), []byte(body), 0o644)
}

// Dir returns the staging directory: the root of the shard being built.
func (s *Staging) Dir() string { return s.tmp }

// Commit moves the finished shard into place. Every file and directory is
// fsynced first. A missing destination is created by rename; an existing
// one (with Replace) is swapped atomically with exchange (renameat2
// RENAME_EXCHANGE on Linux, renamex_np RENAME_SWAP on macOS),
// so the destination always holds either the whole old shard or the whole
// new one, and the old shard is then deleted. Commit writes layout.OutputMarkerPath
// and releases the destination's lock. A StageOptions.Fence that refuses
// leaves the destination untouched (Abort then removes the staging).
func (s *Staging) Commit() error {
	if s.done {
		return fmt.Errorf("output: commit %s: already committed or aborted", s.dest)
	}
	if s.scratch {
		return fmt.Errorf("output: commit %s: a scratch directory is never committed", s.dest)
	}
	defer s.unlock()
	if err := writeOutputMarker(s.tmp, s.kind); err != nil {
		return fmt.Errorf("output: commit %s: %w", s.dest, err)
	}
	if err := os.Remove(filepath.Join(s.tmp, StagingMarker)); err != nil {
		return fmt.Errorf("output: commit %s: %w", s.dest, err)
	}
	syncFile := s.syncFile
	if syncFile == nil {
		syncFile = SyncFile
	}
	var committed map[inode]bool
	var err error
	if s.committed != nil {
		c := <-s.committed
		s.committed <- c // for a Commit tried again
		committed, err = c.files, c.err
	} else {
		committed, err = committedFiles(s.dest)
	}
	if err != nil {
		_ = writeMarker(s.tmp)
		return fmt.Errorf("output: commit %s: %w", s.dest, err)
	}
	if err := syncTree(s.tmp, syncFile, committed); err != nil {
		_ = writeMarker(s.tmp)
		return fmt.Errorf("output: commit %s: %w", s.dest, err)
	}
	// The last word before the output moves in, under the lock: nothing
	// that could make the writer stale can happen between it and the
	// rename but another writer's commit, which the lock excludes.
	if s.fence != nil {
		if err := s.fence(); err != nil {
			_ = writeMarker(s.tmp)
			return fmt.Errorf("output: commit %s: %w", s.dest, err)
		}
	}
	parent := filepath.Dir(s.dest)
	_, statErr := os.Lstat(s.dest)
	switch {
	case errors.Is(statErr, fs.ErrNotExist):
		// Refuse to overwrite anything that appeared meanwhile (RENAME_NOREPLACE).
		if err := renameNoReplace(s.tmp, s.dest); err != nil {
			_ = writeMarker(s.tmp)
			return fmt.Errorf("output: commit %s: %w", s.dest, err)
		}
		s.done = true
		return SyncDir(parent)
	case statErr != nil:
		_ = writeMarker(s.tmp)
		return fmt.Errorf("output: commit %s: %w", s.dest, statErr)
	case !s.replace:
		_ = writeMarker(s.tmp)
		return fmt.Errorf("commit %s: %w", s.dest, ErrDestinationExists)
	}
	if _, ok := KindOf(s.dest); !ok {
		// Something else took the destination's place since Stage.
		_ = writeMarker(s.tmp)
		return fmt.Errorf("%w: commit %s: it is no longer an output of ceres-export", ErrDestinationRefused, s.dest)
	}
	if err := exchange(s.tmp, s.dest); err != nil {
		_ = writeMarker(s.tmp)
		return fmt.Errorf("output: commit %s: atomic exchange: %w", s.dest, err)
	}
	s.done = true
	if err := SyncDir(parent); err != nil {
		return fmt.Errorf("output: commit %s: %w", s.dest, err)
	}
	// s.tmp now holds the old shard. Mark it so that a crash before the
	// removal leaves something RemoveStaleStaging recognises.
	_ = writeMarker(s.tmp)
	if err := os.RemoveAll(s.tmp); err != nil {
		return fmt.Errorf("output: commit %s: remove previous shard: %w", s.dest, err)
	}
	return nil
}

// Abort removes the staging directory; the destination is never touched.
// It does nothing after Commit or a previous Abort.
func (s *Staging) Abort() error {
	if s.done {
		return nil
	}
	s.done = true
	defer s.unlock()
	if err := os.RemoveAll(s.tmp); err != nil {
		return fmt.Errorf("output: abort %s: %w", s.dest, err)
	}
	return nil
}

func (s *Staging) unlock() {
	_ = s.lock.Unlock()
	s.lock = nil
}

// removeStaleStaging deletes the staging directories of dest and returns
// their paths. The caller holds dest's lock: a staging directory is only
// made under it, so every one found now belongs to a run that is gone. A
// directory with the staging name but no marker is removed too: only a
// Commit interrupted between dropping the marker and marking the
// swapped-out old shard leaves one, and then it holds either the new shard
// that never moved in or the old one that moved out.
func removeStaleStaging(dest string) ([]string, error) {
	parent, base := filepath.Dir(dest), filepath.Base(dest)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil, fmt.Errorf("output: look for stale staging of %s: %w", dest, err)
	}
	var removed []string
	prefix := "." + base + tempInfix
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		p := filepath.Join(parent, e.Name())
		if err := os.RemoveAll(p); err != nil {
			return removed, fmt.Errorf("output: remove stale staging %s: %w", p, err)
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// committedFiles returns the inodes of the regular files of the output at
// dest, which the Commit that put them there fsynced (none when there is
// no output there yet, or the platform does not name inodes). An output
// that replaces it (an append, a re-export) links most of them unchanged.
func committedFiles(dest string) (map[inode]bool, error) {
	if _, ok := KindOf(dest); !ok {
		return nil, nil
	}
	committed := map[inode]bool{}
	err := filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if id, ok := inodeOf(info); ok {
			committed[id] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the files it replaces: %w", err)
	}
	return committed, nil
}

// syncTree fsyncs every regular file and directory under root, directories
// after their contents. The files are synced syncWorkers at a time: the
// writes of a tree's files wait for the device together instead of one
// after another (268 files of a 256-shard merge took 77 ms one at a time).
//
// A file that is a link of one of committed (the replaced output's files)
// is not synced again: its bytes were made durable by the commit that put
// it there and nothing writes into a file of an output; the new name is
// made durable by the fsync of its directory, which follows. An append to
// a dataset of 1,000 shards links about 1,000 such files, and fsyncing
// each again made an append's time grow with the dataset.
func syncTree(root string, syncFile func(string) error, committed map[inode]bool) error {
	var dirs, files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if len(committed) > 0 {
			info, err := d.Info()
			if err != nil {
				return err
			}
			if id, ok := inodeOf(info); ok && committed[id] {
				return nil
			}
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		return err
	}
	errs := make([]error, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(syncWorkers, len(files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = syncFile(files[i])
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := SyncDir(dirs[i]); err != nil {
			return err
		}
	}
	return nil
}

// syncWorkers is how many files syncTree syncs at once.
const syncWorkers = 8

package campaign

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// NewScriptOptions are a campaign's script options for the tasks selected
// by sel (tasks of them) in count array tasks (0: one per task), with the
// paths made absolute, as the jobs need them: the jobs run binary, or this
// executable when binary is "", which must be one they can run.
func NewScriptOptions(binary, manifest, out, merge string, sel Selection, count, tasks int) (ScriptOptions, error) {
	o := ScriptOptions{Selection: sel, ArrayCount: count}
	var err error
	if binary == "" {
		if binary, err = os.Executable(); err != nil {
			return o, err
		}
	} else if err := checkExecutable(binary); err != nil {
		return o, fmt.Errorf("--binary %s: %w", binary, err)
	}
	for _, p := range []struct {
		in  string
		out *string
	}{{binary, &o.Binary}, {manifest, &o.Manifest}, {out, &o.Out}, {merge, &o.Merge}} {
		if p.in == "" {
			continue
		}
		if *p.out, err = filepath.Abs(p.in); err != nil {
			return o, err
		}
	}
	if o.ArrayCount <= 0 {
		o.ArrayCount = tasks
	}
	if o.ArrayCount > tasks {
		return o, fmt.Errorf("--array-count %d: only %d tasks are selected", o.ArrayCount, tasks)
	}
	return o, nil
}

// checkExecutable refuses, before any job is queued, a --binary that no job
// could run: missing, not a regular file (a FIFO, a directory), or without
// execute permission. The jobs' nodes see it through the same shared file
// system as this host.
func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return err
	case fi.Mode()&os.ModeNamedPipe != 0:
		return errors.New("a named pipe, not a regular file")
	case fi.IsDir():
		return errors.New("a directory, not a regular file")
	case !fi.Mode().IsRegular():
		return fmt.Errorf("not a regular file (mode %s)", fi.Mode())
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("not executable (mode %s)", fi.Mode().Perm())
	}
	return nil
}

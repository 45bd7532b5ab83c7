package campaign

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ForSlurm is o, as the command line gives it, for the SLURM scripts of
// tasks selected tasks: the paths made absolute, as the jobs need them;
// o.Binary "" is this executable, and a binary the jobs could not run is
// refused; o.ArrayCount 0 is one array task per task; and values no
// script can carry are refused (CheckSlurmValues).
func (o ScriptOptions) ForSlurm(tasks int) (ScriptOptions, error) {
	var err error
	if o.Binary == "" {
		if o.Binary, err = os.Executable(); err != nil {
			return o, err
		}
	} else if err := checkExecutable(o.Binary); err != nil {
		return o, fmt.Errorf("--binary %s: %w", o.Binary, err)
	}
	for _, p := range []*string{&o.Binary, &o.Manifest, &o.Out, &o.Merge} {
		if *p == "" {
			continue
		}
		if *p, err = filepath.Abs(*p); err != nil {
			return o, err
		}
	}
	if o.ArrayCount <= 0 {
		o.ArrayCount = tasks
	}
	if o.ArrayCount > tasks {
		return o, fmt.Errorf("--array-count %d: only %d tasks are selected", o.ArrayCount, tasks)
	}
	return o, o.CheckSlurmValues()
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

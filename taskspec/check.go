package taskspec

import (
	"errors"
	"fmt"
	"io"
)

// Check is what checking one specification file found, as `ceres-export
// spec check` reports it: valid with its hash and warnings, invalid with
// its violations, or an error for a file that could not be read or
// parsed. Its keys are those of the command's --json entries.
type Check struct {
	File       string      `json:"file"`
	Valid      bool        `json:"valid"`
	Hash       string      `json:"hash"` // "" unless Valid
	Warnings   []Violation `json:"warnings"`
	Violations []Violation `json:"violations"`
	Error      string      `json:"error,omitempty"`
}

// CheckFile checks the contents of the file named file; the Spec is nil
// unless the Check is Valid.
func CheckFile(file string, data []byte) (Check, *Spec) {
	spec, err := Parse(data)
	var invalid *InvalidError
	switch {
	case errors.As(err, &invalid):
		c := UnreadableCheck(file, nil)
		c.Violations = invalid.Violations
		return c, nil
	case err != nil:
		return UnreadableCheck(file, fmt.Errorf("%s: %w", file, err)), nil
	}
	return Check{File: file, Valid: true, Hash: spec.Hash(), Warnings: append([]Violation{}, spec.Warnings()...), Violations: []Violation{}}, spec
}

// UnreadableCheck is the Check of a file that could not be read because
// of err (nil: none, the empty Check of an invalid file).
func UnreadableCheck(file string, err error) Check {
	c := Check{File: file, Warnings: []Violation{}, Violations: []Violation{}}
	if err != nil {
		c.Error = err.Error()
	}
	return c
}

// WriteText writes the Check as text: "FILE: valid, hash HASH" on out,
// and each warning and violation on errw, prefixed with the file name
// ("FILE: warning: PATH: MESSAGE", "FILE: PATH: MESSAGE"). The Error is
// the caller's to report, as errors are.
func (c Check) WriteText(out, errw io.Writer) error {
	var err error
	if c.Valid {
		_, err = fmt.Fprintf(out, "%s: valid, hash %s\n", c.File, c.Hash)
	}
	for _, w := range c.Warnings {
		fmt.Fprintf(errw, "%s: warning: %s\n", c.File, w)
	}
	for _, v := range c.Violations {
		fmt.Fprintf(errw, "%s: %s\n", c.File, v)
	}
	return err
}

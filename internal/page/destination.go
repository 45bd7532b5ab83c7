package page

import (
	"errors"
	"fmt"
	"os"

	"github.com/ceres-robotics/ceres-export/internal/output"
)

// CheckDestination applies the destination rules to a session page's file
// out: it may not be, lie inside or contain an input (anywhere in the
// session, whose fingerprint a page there would change, or in the shard;
// "" inputs are left out), nor be a symbolic link; an existing file is
// replaced only when it is a page of ours (IsPage), never another file of
// the same name.
func CheckDestination(out string, inputs ...string) error {
	var in []string
	for _, p := range inputs {
		if p != "" {
			in = append(in, p)
		}
	}
	_, err := output.CheckDestination(out, in, false)
	if !errors.Is(err, output.ErrDestinationExists) {
		return err
	}
	st, serr := os.Stat(out)
	switch {
	case serr != nil:
		return serr
	case st.IsDir():
		return fmt.Errorf("%w: -o %s is a directory; name the HTML file to write", output.ErrDestinationRefused, out)
	case !IsPage(out):
		return fmt.Errorf("%w: will not replace %s: it is not a page written by ceres-export", output.ErrDestinationRefused, out)
	}
	return nil
}

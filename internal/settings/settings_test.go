package settings

import (
	"errors"
	"fmt"
	"testing"
)

// On the command line a setting is named by its flag, wrapped or not;
// other errors pass as they are.
func TestAsFlag(t *testing.T) {
	se := &SettingError{Setting: "video_size", Value: "7x7", Want: "want even sizes"}
	for _, c := range []struct {
		err  error
		want string
	}{
		{se, "--video-size 7x7: want even sizes"},
		{fmt.Errorf("resolve: %w", se), "--video-size 7x7: want even sizes"},
		{errors.New("other"), "other"},
	} {
		if got := AsFlag(c.err).Error(); got != c.want {
			t.Errorf("AsFlag(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	if se.Setting != "video_size" {
		t.Errorf("AsFlag changed the error it was given: %q", se.Setting)
	}
}

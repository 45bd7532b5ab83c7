package main

import (
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/export"
)

// The follow's progress line says what an operator needs.
func TestFollowLine(t *testing.T) {
	for _, c := range []struct {
		st   export.FollowStatus
		want string
	}{
		{export.FollowStatus{Waiting: true}, "follow: waiting for the session's journal"},
		{export.FollowStatus{SessionTime: 12_340_000_000, Episodes: 3, Encoded: 2, Pending: 1, Open: 1, Speed: 3.5, Behind: 1_500_000_000},
			"follow: session at 12.3 s; 2 episodes encoded, 1 pending, 1 attempts open; encoder 3.5× real time; 1.5 s behind"},
		{export.FollowStatus{SessionTime: 60_000_000_000, Episodes: 8, Encoded: 8, Ended: true, Speed: 12},
			"follow: session at 60.0 s; 8 episodes encoded, 0 pending, 0 attempts open; encoder 12× real time; session ended, committing"},
	} {
		if got := followLine(c.st); got != c.want {
			t.Errorf("followLine(%+v)\n got %q\nwant %q", c.st, got, c.want)
		}
	}
}

package main

import "github.com/ceres-robotics/ceres-export/internal/progress"

// followLine is the follow's progress line under the name
// follow_e2e_test.go's TestFollowLine knows; the line and its test are
// internal/progress's now (FollowLine, TestFollowLine there), and this
// file goes when that test leaves follow_e2e_test.go.
var followLine = progress.FollowLine

package e2e

import "github.com/ceres-robotics/ceres-export/internal/exitstatus"

// The exit statuses as the tests compare them with a process's exit code.
const (
	exitOK       = int(exitstatus.OK)
	exitFindings = int(exitstatus.Findings)
	exitUsage    = int(exitstatus.Usage)
	exitCorrupt  = int(exitstatus.Corrupt)
	exitFailed   = int(exitstatus.Failed)
	exitSIGTERM  = int(exitstatus.Terminate)
)

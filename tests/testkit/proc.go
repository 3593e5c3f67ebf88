package testkit

import (
	"strconv"

	"serverlab/tests/judge"
)

// ServerPID is the process id of the process that runs the code under test:
// the subject's under tools/cmd/grade (tests/judge), this one's under go test.
func ServerPID() int { return judge.SubjectPID() }

// ServerProc is the /proc directory of the process that runs the code under
// test (Linux), for the checks that count its descriptors, threads or reads.
func ServerProc() string { return "/proc/" + strconv.Itoa(judge.SubjectPID()) }

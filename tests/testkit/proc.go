package testkit

import (
	"os"
	"strconv"

	"serverlab/tests/judge"
)

// ServerPID is the process id of the process that runs the code under test:
// the subject's under tools/cmd/grade (tests/judge), this one's under go test.
func ServerPID() int {
	if judge.IsJudge() {
		return judge.SubjectPID()
	}
	return os.Getpid()
}

// ServerProc is the /proc directory of the process that runs the code under
// test (Linux), for the checks that count its descriptors, threads or reads.
func ServerProc() string {
	if judge.IsJudge() {
		return "/proc/" + strconv.Itoa(judge.SubjectPID())
	}
	return "/proc/self"
}

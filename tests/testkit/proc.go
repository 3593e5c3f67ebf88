package testkit

import (
	"os"
	"strconv"
	"strings"

	"serverlab/tests/judge"
)

// ServerPID is the process id of the process that runs the code under test:
// the subject's under tools/cmd/grade (tests/judge), this one's under go test.
func ServerPID() int { return judge.SubjectPID() }

// ServerProc is the /proc directory of the process that runs the code under
// test (Linux), for the checks that count its descriptors, threads or reads.
func ServerProc() string { return "/proc/" + strconv.Itoa(judge.SubjectPID()) }

// ServerPIDInside is the process id of the code under test as the processes
// it starts see it: under the grader the subject runs in a PID namespace of
// its own, where its children's getppid() is not the number the judge knows
// it by. Linux names both in /proc/PID/status (NSpid: outer … inner), which
// the judge reads from outside; elsewhere, and under go test, it is ServerPID.
func ServerPIDInside() int {
	if n := nsPIDs(ServerProc()); n > 0 {
		return n
	}
	return ServerPID()
}

// HostPID turns the id of a process the code under test started, as that
// process sees itself (a CGI program printing its pid, under the grader
// inside the subject's PID namespace), into the id this process can read in
// /proc and signal. It returns 0 when no such process is left. Without a
// namespace of its own the two are the same.
func HostPID(inner int) int {
	if inner <= 0 || ServerPIDInside() == ServerPID() {
		return inner
	}
	ns, err := os.Readlink(ServerProc() + "/ns/pid")
	if err != nil {
		return 0
	}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		dir := "/proc/" + d.Name()
		if link, err := os.Readlink(dir + "/ns/pid"); err != nil || link != ns {
			continue
		}
		if nsPIDs(dir) == inner {
			return pid
		}
	}
	return 0
}

// nsPIDs is the innermost id of the process whose /proc directory is dir
// (the last NSpid field), or 0.
func nsPIDs(dir string) int {
	b, err := os.ReadFile(dir + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				n, _ := strconv.Atoi(f[len(f)-1])
				return n
			}
		}
	}
	return 0
}

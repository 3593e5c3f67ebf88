package judge

import (
	"regexp"
	"strings"
	"sync"
)

// Under a plain go test, a suite's own servers can share the process with
// the student's code: chapter 08's suite runs nats-server in it, and the
// consumers the student's server asked for keep goroutines of nats-server's
// alive after the student's server has closed (until their inactivity
// threshold). Those are the suite's, not a leak of the student's: a suite
// names their package here and the leak check leaves them out. (Under the
// grader the suite's servers run in the judge's process and none is there.)
var suiteOwn struct {
	sync.Mutex
	prefixes []string
}

// IgnoreGoroutinesOf leaves, from every leak report of this process, the
// goroutines with a frame of the package whose qualified names start with
// prefix ("github.com/nats-io/nats-server/v2/server.").
func IgnoreGoroutinesOf(prefix string) {
	suiteOwn.Lock()
	defer suiteOwn.Unlock()
	for _, p := range suiteOwn.prefixes {
		if p == prefix {
			return
		}
	}
	suiteOwn.prefixes = append(suiteOwn.prefixes, prefix)
}

// goroutineStart marks the start of one goroutine in goleak's report.
var goroutineStart = regexp.MustCompile(`(?m)^\s*\[?Goroutine \d+ in state `)

// withoutSuiteGoroutines is goleak's report without the suite's own
// goroutines: "" if none of the student's is left.
func withoutSuiteGoroutines(report string) string {
	suiteOwn.Lock()
	prefixes := suiteOwn.prefixes
	suiteOwn.Unlock()
	if len(prefixes) == 0 {
		return report
	}
	starts := goroutineStart.FindAllStringIndex(report, -1)
	if len(starts) == 0 {
		return report
	}
	head := report[:starts[0][0]]
	var kept []string
	for i, st := range starts {
		end := len(report)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		g := report[st[0]:end]
		if !ownedBySuite(g, prefixes) {
			kept = append(kept, g)
		}
	}
	if len(kept) == 0 {
		return ""
	}
	return head + strings.Join(kept, "")
}

func ownedBySuite(goroutine string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.Contains(goroutine, p) {
			return true
		}
	}
	return false
}

package judge

import (
	"strings"
	"testing"
)

func TestWithoutSuiteGoroutines(t *testing.T) {
	report := "found unexpected goroutines:\n[Goroutine 7 in state select, with github.com/nats-io/nats-server/v2/server.(*consumer).loopAndGatherMsgs on top of the stack:\n" +
		"github.com/nats-io/nats-server/v2/server.(*consumer).loopAndGatherMsgs(0x1)\n\n" +
		" Goroutine 9 in state chan receive, with serverlab/chapters/08.(*Server).pump on top of the stack:\n" +
		"serverlab/chapters/08.(*Server).pump(0x2)\n]"
	if got := withoutSuiteGoroutines(report); got != report {
		t.Fatalf("with nothing registered the report changed:\n%s", got)
	}
	IgnoreGoroutinesOf("github.com/nats-io/nats-server/v2/server.")
	defer func() { suiteOwn.prefixes = nil }()
	got := withoutSuiteGoroutines(report)
	if strings.Contains(got, "nats-server") || !strings.Contains(got, "chapters/08.(*Server).pump") || !strings.HasPrefix(got, "found unexpected goroutines:") {
		t.Errorf("the suite's goroutine must go and the student's stay; got:\n%s", got)
	}
	onlySuite := "found unexpected goroutines:\n[Goroutine 7 in state select, with github.com/nats-io/nats-server/v2/server.x on top of the stack:\ngithub.com/nats-io/nats-server/v2/server.x()\n]"
	if got := withoutSuiteGoroutines(onlySuite); got != "" {
		t.Errorf("only the suite's goroutines: got %q, want no report", got)
	}
}

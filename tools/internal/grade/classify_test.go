package grade

import (
	"io"
	"strings"
	"testing"
	"time"
)

// Builders for test2json streams, shaped like what `go tool test2json`
// prints for a binary run with -test.v=test2json (see the recorded examples
// in the end-to-end test's fixtures).
const T = "TestEx1_4_Serve"

func runEv(test string) Event { return Event{Action: "run", Test: test} }
func pass(test string, secs float64) Event {
	return Event{Action: "pass", Test: test, Elapsed: secs}
}
func fail(test string) Event { return Event{Action: "fail", Test: test, Elapsed: 0.01} }
func skip(test string) Event { return Event{Action: "skip", Test: test} }

// out is output of test ("" for the package), one event per line as
// test2json sends it.
func out(test string, lines ...string) []Event {
	var evs []Event
	for _, l := range lines {
		evs = append(evs, Event{Action: "output", Test: test, Output: l + "\n"})
	}
	return evs
}

func stream(parts ...any) []Event {
	var evs []Event
	for _, p := range parts {
		switch p := p.(type) {
		case Event:
			evs = append(evs, p)
		case []Event:
			evs = append(evs, p...)
		}
	}
	return evs
}

var (
	startPkg = Event{Action: "start"}
	runT     = runEv(T)
	headerT  = out(T, "=== RUN   "+T)
	pkgFail  = stream(out("", "FAIL"), Event{Action: "fail", Elapsed: 0.2})
	pkgPass  = stream(out("", "PASS"), Event{Action: "pass", Elapsed: 0.2})
)

// testPanic is a panic in the test's own goroutine, as Go 1.26 prints it.
var testPanic = out(T,
	"--- FAIL: "+T+" (0.00s)",
	"panic: assignment to entry in nil map [recovered, repanicked]",
	"",
	"goroutine 20 [running]:",
	"testing.tRunner.func1.2({0x60f860, 0x655eb0})",
	"\t/usr/local/go/src/testing/testing.go:1974 +0x419",
	"testing.tRunner.func1()",
	"\t/usr/local/go/src/testing/testing.go:1977 +0x67f",
	"panic({0x60f860?, 0x655eb0?})",
	"\t/usr/local/go/src/runtime/panic.go:860 +0x13a",
	"serverlab/chapters/01.(*Store).Register(...)",
	"\t/course/chapters/01/store.go:42 +0x2b",
	"serverlab/chapters/01."+T+"(0xc0000f0248?)",
	"\t/course/chapters/01/server_test.go:35 +0x2b",
	"testing.tRunner(0xc0000f0248, 0x6545f8)",
	"\t/usr/local/go/src/testing/testing.go:2036 +0x21d",
	"created by testing.(*T).Run in goroutine 1",
	"\t/usr/local/go/src/testing/testing.go:2101 +0xb13",
)

// timeoutDump is what -test.timeout prints: the alarm goroutine, the main
// goroutine and the test's, blocked.
var timeoutDump = out(T,
	"panic: test timed out after 3s",
	"\trunning tests:",
	"\t\t"+T+" (3s)",
	"",
	"goroutine 4 [running]:",
	"testing.(*M).startAlarm.func1()",
	"\t/usr/local/go/src/testing/testing.go:2802 +0x605",
	"created by time.goFunc",
	"\t/usr/local/go/src/time/sleep.go:215 +0x45",
	"",
	"goroutine 1 [chan receive]:",
	"testing.(*T).Run(0xc0000f2008, {0x6485ec, 0xe}, 0x6545e8)",
	"\t/usr/local/go/src/testing/testing.go:2109 +0xb3e",
	"main.main()",
	"\t_testmain.go:54 +0x165",
	"",
	"goroutine 21 [sync.Mutex.Lock]:",
	"sync.(*Mutex).Lock(...)",
	"\t/usr/local/go/src/sync/mutex.go:91",
	"serverlab/chapters/01.(*Server).Close(0xc000010000)",
	"\t/course/chapters/01/server.go:88 +0x2d",
	"serverlab/chapters/01."+T+"(0xc0000f2248?)",
	"\t/course/chapters/01/server_test.go:21 +0x2d",
	"testing.tRunner(0xc0000f2248, 0x6545e8)",
	"\t/usr/local/go/src/testing/testing.go:2036 +0x21d",
	"",
	"goroutine 22 [IO wait]:",
	"internal/poll.runtime_pollWait(0x7f, 0x72)",
	"\t/usr/local/go/src/runtime/netpoll.go:351 +0x85",
)

var raceReport = out(T,
	"==================",
	"WARNING: DATA RACE",
	"Read at 0x00c0000943f8 by goroutine 9:",
	"  serverlab/chapters/01.(*Store).Count()",
	"      /course/chapters/01/store.go:29 +0x7b",
	"",
	"Previous write at 0x00c0000943f8 by goroutine 10:",
	"  serverlab/chapters/01.(*Store).Register()",
	"      /course/chapters/01/store.go:20 +0x8d",
	"==================",
	"    testing.go:1712: race detected during execution of test",
	"--- FAIL: "+T+" (0.00s)",
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name      string
		run       Run
		cause     Cause
		contains  []string // substrings of the message
		excludes  []string // not in the message
		elapsed   time.Duration
		firstLine string // the message's first line, if set
	}{
		{
			name:    "pass",
			run:     Run{Test: T, Subject: &SubjectRun{}, Events: stream(startPkg, runT, headerT, out(T, "--- PASS: "+T+" (1.50s)"), pass(T, 1.5), pkgPass)},
			elapsed: 1500 * time.Millisecond,
		},
		{
			name:     "a pass with no subject is not a pass",
			run:      Run{Test: T, Events: stream(startPkg, runT, headerT, out(T, "--- PASS: "+T+" (1.50s)"), pass(T, 1.5), pkgPass)},
			cause:    CauseNotRun,
			contains: []string{"no subject ran the student's code"},
		},
		{
			name:     "a pass and then a failing exit status",
			run:      Run{Test: T, Subject: &SubjectRun{}, ExitCode: 1, Events: stream(startPkg, runT, headerT, pass(T, 0.1), pkgPass)},
			cause:    CauseExited,
			contains: []string{"then exited with status 1"},
		},
		{
			name:      "the process exits during the test",
			run:       Run{Test: T, ExitCode: 3, Events: stream(startPkg, runT, headerT, out(T, "    server_test.go:9: dialing"))},
			cause:     CauseExited,
			firstLine: "the test binary exited with status 3 while " + T + " was running, before the test finished: os.Exit, log.Fatal or a crash of the whole process in the code under test; its last output:",
			contains:  []string{"server_test.go:9: dialing"},
		},
		{
			name: "os.Exit(0) during the test, under -test.paniconexit0",
			run: Run{Test: T, ExitCode: 2, Student: "chapters/01", Events: stream(startPkg, runT, headerT, out(T,
				"panic: unexpected call to os.Exit(0) during test [recovered, repanicked]",
				"",
				"goroutine 7 [running]:",
				"os.Exit(0x0)",
				"\t/usr/local/go/src/os/proc.go:67 +0x4f",
				"serverlab/chapters/01.ReadFrame({0x0, 0x0})",
				"\t/course/chapters/01/codec.go:17 +0x1d",
				"serverlab/tests/discoverytest.ReadFrame(0xc0000f2248, {0x0})",
				"\t/course/tests/discoverytest/codec.go:40 +0x2d",
			), fail(T))},
			cause:     CauseExited,
			firstLine: "the code called os.Exit(0) while " + T + " was running: exiting is not passing",
			contains:  []string{"serverlab/chapters/01.ReadFrame", "/course/chapters/01/codec.go:17"},
			excludes:  []string{"discoverytest"},
		},
		{
			name: "failed stub",
			run: Run{Test: T, Events: stream(startPkg, runT, headerT,
				out(T, "    server_test.go:12: Serve: ex 1.4: Server.Serve: not implemented", "--- FAIL: "+T+" (0.00s)"),
				fail(T), pkgFail)},
			cause:     CauseFailed,
			firstLine: "server_test.go:12: Serve: ex 1.4: Server.Serve: not implemented",
			excludes:  []string{"=== RUN", "--- FAIL: " + T, "FAIL\n"},
		},
		{
			name: "failed subtests keep their verdict lines",
			run: Run{Test: T, Events: stream(runT, headerT,
				out(T+"/empty", "=== RUN   "+T+"/empty", "    server_test.go:30: sent \"\\x00\", want error, got nil", "    --- FAIL: "+T+"/empty (0.00s)"),
				Event{Action: "fail", Test: T + "/empty"},
				out(T, "--- FAIL: "+T+" (0.00s)"), fail(T), pkgFail)},
			cause:    CauseFailed,
			contains: []string{`server_test.go:30: sent "\x00", want error, got nil`, "--- FAIL: " + T + "/empty"},
			excludes: []string{"=== RUN"},
		},
		{
			name:      "failed without a message",
			run:       Run{Test: T, Events: stream(runT, headerT, out(T, "--- FAIL: "+T+" (0.00s)"), fail(T), pkgFail)},
			cause:     CauseFailed,
			firstLine: "the test failed without a message; the test binary said:",
		},
		{
			name:      "panic in the test goroutine",
			run:       Run{Test: T, Events: stream(runT, headerT, testPanic, fail(T))},
			cause:     CausePanic,
			firstLine: "panic: assignment to entry in nil map [recovered, repanicked]",
			contains:  []string{"serverlab/chapters/01.(*Store).Register(...)", "/course/chapters/01/store.go:42", "server_test.go:35"},
			excludes:  []string{"testing.tRunner", "runtime/panic.go", "goroutine 20"},
		},
		{
			name: "panic in a server goroutine: test2json reports the fail",
			run: Run{Test: T, Events: stream(runT, headerT, out(T,
				"panic: runtime error: invalid memory address or nil pointer dereference",
				"[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4f1c2a]",
				"",
				"goroutine 7 [running]:",
				"serverlab/chapters/01.(*Server).handle(0x0, {0x6d1f40, 0xc000012345})",
				"\t/course/chapters/01/server.go:61 +0x2a",
				"created by serverlab/chapters/01.(*Server).Serve in goroutine 6",
				"\t/course/chapters/01/server.go:50 +0xbf",
			), fail(T))},
			cause:     CausePanic,
			firstLine: "panic: runtime error: invalid memory address or nil pointer dereference",
			contains:  []string{"[signal SIGSEGV", "(*Server).handle", "created by serverlab/chapters/01.(*Server).Serve"},
		},
		{
			name: "fatal error is a crash",
			run: Run{Test: T, Events: stream(runT, headerT, out(T,
				"fatal error: concurrent map writes", "", "goroutine 9 [running]:",
				"serverlab/chapters/01.(*Store).Register(...)", "\t/course/chapters/01/store.go:20 +0x8d",
			), fail(T))},
			cause:     CausePanic,
			firstLine: "fatal error: concurrent map writes",
		},
		{
			name: "a failure message that mentions panic is only a failure",
			run: Run{Test: T, Events: stream(runT, headerT,
				out(T, "    server_test.go:40: panic: handler crashed (want a recovered error)"), fail(T), pkgFail)},
			cause: CauseFailed,
		},
		{
			name:      "timeout shows the test's blocked goroutine",
			run:       Run{Test: T, Timeout: 3 * time.Second, Events: stream(runT, headerT, timeoutDump, fail(T))},
			cause:     CauseTimeout,
			firstLine: "the test did not finish within its 3s time limit",
			contains:  []string{"goroutine 21 [sync.Mutex.Lock]:", "sync.(*Mutex).Lock(...)", "(*Server).Close", "server.go:88"},
			excludes:  []string{"startAlarm", "goroutine 1 ", "goroutine 22", "testing.tRunner"},
		},
		{
			name:      "timeout shows the student's goroutines, and only their frames",
			run:       Run{Test: T, Timeout: 3 * time.Second, Student: "chapters/01", Events: stream(runT, headerT, timeoutDump, fail(T))},
			cause:     CauseTimeout,
			firstLine: "the test did not finish within its 3s time limit",
			contains:  []string{"where your code is stuck", "goroutine 21 [sync.Mutex.Lock]:", "(*Server).Close", "server.go:88"},
			excludes:  []string{"startAlarm", "goroutine 1 ", "goroutine 22", "testing.tRunner", "sync.(*Mutex).Lock"},
		},
		{
			name:      "killed by the grader",
			run:       Run{Test: T, Timeout: time.Minute, Killed: true, Events: stream(runT, headerT, out(T, "    server_test.go:9: listening on 127.0.0.1:40000"))},
			cause:     CauseTimeout,
			firstLine: "the test binary did not stop by itself after its 1m0s time limit and was killed; its last output:",
			contains:  []string{"listening on 127.0.0.1:40000"},
		},
		{
			name: "watchdog failure is a timeout",
			run: Run{Test: T, Events: stream(runT, headerT, out(T,
				"    testkit.go:117: serverlab: watchdog: exercise 1.4 did not finish within 30s: a call is blocked",
				"        Closing its servers and connections to unblock it.",
				"    server_test.go:50: read: use of closed network connection",
				"--- FAIL: "+T+" (30.00s)",
			), fail(T), pkgFail)},
			cause:     CauseTimeout,
			firstLine: "testkit.go:117: serverlab: watchdog: exercise 1.4 did not finish within 30s: a call is blocked",
			excludes:  []string{"--- FAIL", "\nFAIL"},
		},
		{
			name:      "race",
			run:       Run{Test: T, Events: stream(runT, headerT, raceReport, fail(T), pkgFail)},
			cause:     CauseRace,
			firstLine: "WARNING: DATA RACE",
			contains:  []string{"(*Store).Count()", "Previous write"},
			excludes:  []string{"==================", "race detected during execution of test"},
		},
		{
			name: "race noted only by the testing package",
			run: Run{Test: T, Events: stream(runT, headerT,
				out(T, "    testing.go:1712: race detected during execution of test", "--- FAIL: "+T+" (0.00s)"), fail(T))},
			cause:     CauseRace,
			firstLine: "testing.go:1712: race detected during execution of test",
		},
		{
			name: "leak reported by the course's check",
			run: Run{Test: T, Events: stream(runT, headerT, out(T,
				"    testkit.go:140: serverlab: leak: 1 goroutine(s) outlived the check (exercise 1.4)",
				"        [Goroutine 8 in state IO wait, with serverlab/chapters/01.(*Server).handle on top of the stack:",
				"--- FAIL: "+T+" (0.50s)",
			), fail(T), pkgFail)},
			cause:     CauseLeak,
			firstLine: "testkit.go:140: serverlab: leak: 1 goroutine(s) outlived the check (exercise 1.4)",
			contains:  []string{"    [Goroutine 8 in state IO wait"},
		},
		{
			name: "leak found by goleak.VerifyTestMain after the test passed",
			run: Run{Test: T, Events: stream(runT, headerT, out(T, "--- PASS: "+T+" (0.00s)"), pass(T, 0.01),
				out("", "PASS",
					"goleak: Errors on successful test run: found unexpected goroutines:",
					"[Goroutine 19 in state chan receive, with serverlab/chapters/01.(*Server).Serve.func1 on top of the stack:",
					"exit status 1"),
				Event{Action: "fail"})},
			cause:     CauseLeak,
			firstLine: "goleak: Errors on successful test run: found unexpected goroutines:",
			excludes:  []string{"PASS", "exit status"},
		},
		{
			name: "panic outranks race and leak",
			run: Run{Test: T, Events: stream(runT, headerT, raceReport,
				out(T, "    testkit.go:140: serverlab: leak: 1 goroutine(s) outlived the check"), testPanic, fail(T))},
			cause: CausePanic,
		},
		{
			name: "timeout outranks panic",
			run: Run{Test: T, Events: stream(runT, headerT, testPanic[1:3],
				out(T, "    testkit.go:117: serverlab: watchdog: exercise 1.4 did not finish within 30s"), fail(T))},
			cause: CauseTimeout,
		},
		{
			name: "race outranks leak",
			run: Run{Test: T, Events: stream(runT, headerT, raceReport,
				out(T, "    testkit.go:140: serverlab: leak: 1 goroutine(s) outlived the check"), fail(T))},
			cause: CauseRace,
		},
		{
			name: "skipped",
			run: Run{Test: T, Events: stream(runT, headerT,
				out(T, "    server_test.go:8: needs IPv6", "--- SKIP: "+T+" (0.00s)"), skip(T), pkgPass)},
			cause:     CauseNotRun,
			firstLine: "the test skipped itself:",
			contains:  []string{"server_test.go:8: needs IPv6"},
		},
		{
			name:     "missing from the binary",
			run:      Run{Test: T, Events: stream(startPkg, out("", "testing: warning: no tests to run", "PASS"), Event{Action: "pass"})},
			cause:    CauseNotRun,
			contains: []string{T + " is not in the chapter's test binary: the rubric and the test wiring disagree"},
		},
		{
			name:      "binary stopped before the test started",
			run:       Run{Test: T, Events: stream(startPkg, out("", "setup: cannot create temp dir", "FAIL", "exit status 3"), Event{Action: "fail"})},
			cause:     CauseNotRun,
			firstLine: "the test binary stopped before " + T + " started; it said:",
			contains:  []string{"setup: cannot create temp dir"},
		},
		{
			name: "other tests' output is ignored",
			run: Run{Test: T, Events: stream(runEv("TestOther"), out("TestOther", "panic: not ours"),
				runT, headerT, out(T, "--- PASS: "+T+" (0.00s)"), pass(T, 0), pkgPass), Subject: &SubjectRun{}},
		},
		{
			name: "a subtest named like the test is not the test",
			run: Run{Test: "TestEx1_1_Read", Events: stream(runEv("TestEx1_1_ReadAll"), pass("TestEx1_1_ReadAll", 0),
				out("", "testing: warning: no tests to run"))},
			cause: CauseNotRun,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify(tt.run)
			if got.Cause != tt.cause {
				t.Fatalf("cause = %q, want %q; message:\n%s", got.Cause, tt.cause, got.Message)
			}
			if tt.cause != "" && got.Message == "" {
				t.Errorf("a lost exercise (cause %q) has no message", got.Cause)
			}
			if tt.firstLine != "" {
				if first, _, _ := strings.Cut(got.Message, "\n"); first != tt.firstLine {
					t.Errorf("message's first line = %q, want %q; message:\n%s", first, tt.firstLine, got.Message)
				}
			}
			for _, c := range tt.contains {
				if !strings.Contains(got.Message, c) {
					t.Errorf("message lacks %q; message:\n%s", c, got.Message)
				}
			}
			for _, e := range tt.excludes {
				if strings.Contains(got.Message, e) {
					t.Errorf("message contains %q, which is noise; message:\n%s", e, got.Message)
				}
			}
			if tt.elapsed != 0 && got.Elapsed != tt.elapsed {
				t.Errorf("elapsed = %v, want %v", got.Elapsed, tt.elapsed)
			}
		})
	}
}

func TestReadEvents(t *testing.T) {
	input := `{"Time":"2026-01-02T03:04:05Z","Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
test2json: something odd
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":0.25}
`
	evs, err := readEvents(strings.NewReader(input))
	if err != nil {
		t.Fatalf("readEvents: %v", err)
	}
	want := []Event{
		{Action: "run", Package: "p", Test: "TestA", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{Action: "output", Package: "p", Test: "TestA", Output: "=== RUN   TestA\n"},
		{Action: "output", Output: "test2json: something odd\n"},
		{Action: "pass", Package: "p", Test: "TestA", Elapsed: 0.25},
	}
	if len(evs) != len(want) {
		t.Fatalf("read %d events, want %d: %+v", len(evs), len(want), evs)
	}
	for i := range want {
		if evs[i] != want[i] {
			t.Errorf("event %d = %+v, want %+v", i, evs[i], want[i])
		}
	}
}

// A test that prints without end is cut off, but the lines that decide its
// cause are kept.
func TestReadEventsBoundsOutput(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"Action":"run","Test":"TestA"}` + "\n")
	noise := `{"Action":"output","Test":"TestA","Output":"` + strings.Repeat("x", 1000) + `\n"}` + "\n"
	for range maxKeptOutput/1000 + 100 {
		b.WriteString(noise)
	}
	b.WriteString(`{"Action":"output","Test":"TestA","Output":"WARNING: DATA RACE\n"}` + "\n")
	b.WriteString(`{"Action":"fail","Test":"TestA"}` + "\n")

	evs, err := readEvents(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("readEvents: %v", err)
	}
	kept := 0
	for _, ev := range evs {
		kept += len(ev.Output)
	}
	if kept > maxKeptOutput+2000 {
		t.Errorf("kept %d bytes of output, want at most about %d", kept, maxKeptOutput)
	}
	if got := Classify(Run{Test: "TestA", Events: evs}); got.Cause != CauseRace {
		t.Errorf("cause after a flood of output = %q, want %q (the race marker must survive the cut)", got.Cause, CauseRace)
	}
}

// A student's error whose text is megabytes of marker lines, printed by
// every failing check, costs the grader a bounded amount of memory: past the
// output bound each marker line is an excerpt, and their number is bounded;
// a line longer than maxLine is cut. The marker still decides the cause.
func TestReadEventsBoundsMarkerFlood(t *testing.T) {
	line := `{"Action":"output","Test":"TestA","Output":"panic: ` + strings.Repeat("p", 64<<10) + `\n"}` + "\n"
	giant := `{"Action":"output","Test":"TestA","Output":"` + strings.Repeat("g", 3*maxLine) + `"}` + "\n"
	parts := []io.Reader{strings.NewReader(giant)}
	for range 2 * (maxKeptOutput/len(line) + maxMarkerEvents) {
		parts = append(parts, strings.NewReader(line))
	}
	parts = append(parts, strings.NewReader(`{"Action":"fail","Test":"TestA"}`+"\n"))

	evs, err := readEvents(io.MultiReader(parts...))
	if err != nil {
		t.Fatalf("readEvents: %v", err)
	}
	kept := 0
	for _, ev := range evs {
		kept += len(ev.Output)
	}
	if bound := maxLine + maxKeptOutput + maxMarkerEvents*(maxMarkerExcerpt+1) + 64<<10; kept > bound {
		t.Errorf("kept %d bytes of output, want at most %d: the grader's memory grows with what the test prints", kept, bound)
	}
	if last := evs[len(evs)-1]; last.Action != "fail" {
		t.Errorf("the last event is %+v, want the fail event: it must survive the flood", last)
	}
	if !hasMarker(evs[len(evs)-2].Output) {
		t.Errorf("the last output kept, %.80q, lost its marker", evs[len(evs)-2].Output)
	}
}

package testkit

import (
	"bufio"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"serverlab/tools/given/lab"
)

// The checks below run a test of this package in a child process, because
// what they verify is that testkit makes a test FAIL, with the right words.

const childEnv = "TESTKIT_CHILD"

func runChild(t *testing.T, test string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+test)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("child %s: want it to fail, got err %v\n%s", test, err, out)
	}
	return string(out)
}

func onlyInChild(t *testing.T) {
	if os.Getenv(childEnv) != t.Name() {
		t.Skip("run as a child process by another test")
	}
}

func TestChildLeaks(t *testing.T) {
	onlyInChild(t)
	New(t, "9.1")
	go leakForever()
}

var block = make(chan struct{})

func leakForever() { <-block }

func TestLeakIsReported(t *testing.T) {
	out := runChild(t, "TestChildLeaks")
	for _, want := range []string{LeakMarker, "exercise 9.1", "Close must stop every goroutine", "leakForever"} {
		if !strings.Contains(out, want) {
			t.Errorf("leak report lacks %q:\n%s", want, out)
		}
	}
}

func TestChildHangs(t *testing.T) {
	onlyInChild(t)
	WatchdogTimeout = 100 * time.Millisecond
	k := New(t, "9.2")
	unblock := make(chan struct{})
	k.OnAbort(func() { close(unblock) })
	<-unblock // only the watchdog's abort can end this wait
}

func TestWatchdogFailsAndUnblocks(t *testing.T) {
	out := runChild(t, "TestChildHangs")
	if !strings.Contains(out, WatchdogMarker) || !strings.Contains(out, "--- FAIL: TestChildHangs") {
		t.Errorf("want the watchdog to fail the hung check and unblock it:\n%s", out)
	}
}

func TestChildHangsForEver(t *testing.T) {
	onlyInChild(t)
	shortWaits()
	// A second, not less: in a window of 100 ms beside 16 busy loops the
	// process's start looked starved (waited 0.1 s, ran over 1 ms), and the
	// report said so instead of "blocked".
	WatchdogTimeout = time.Second
	k := New(t, "9.5")
	k.OnAbort(func() { select {} }) // an abort that blocks too, as closing a server whose Close hangs does
	select {}
}

// A check that the watchdog's aborts do not unblock ends its process soon
// after, saying so, instead of holding it until go test's -timeout.
func TestWatchdogEndsAStuckCheck(t *testing.T) {
	start := time.Now()
	out := runChild(t, "TestChildHangsForEver")
	for _, want := range []string{WatchdogMarker + " exercise 9.5 did not finish", WatchdogBlocked, "ending the test process"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in the output:\n%s", want, out)
		}
	}
	if took := time.Since(start); took > abortGrace()+30*time.Second {
		t.Errorf("the stuck check took %v to end; want about WatchdogTimeout plus abortGrace", took)
	}
}

// stubServer is what an untouched exercise looks like.
type stubServer struct{}

func (stubServer) Serve(net.Listener) error { return lab.NotImplemented("9.3", "Serve") }
func (stubServer) Close() error             { return nil }

func TestChildStubServer(t *testing.T) {
	onlyInChild(t)
	k := New(t, "9.3")
	c := k.Dial(k.Serve(stubServer{}))
	c.ExpectLine("hello")
}

func TestStubServerFailsFast(t *testing.T) {
	out := runChild(t, "TestChildStubServer")
	if !strings.Contains(out, "Serve returned ex 9.3: Serve: not implemented") {
		t.Errorf("want the failure to say that Serve returned not implemented:\n%s", out)
	}
	if strings.Contains(out, WatchdogMarker) {
		t.Errorf("a stub server must fail the check at once, not through the watchdog:\n%s", out)
	}
}

// echoServer is a minimal correct lab.Server: it echoes lines, and closes on
// "bye".
type echoServer struct {
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
}

func (s *echoServer) Serve(ln net.Listener) error {
	s.mu.Lock()
	s.ln, s.conns = ln, map[net.Conn]bool{}
	s.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.closed {
				return lab.ErrServerClosed
			}
			return err
		}
		s.mu.Lock()
		s.conns[c] = true
		s.wg.Add(1)
		s.mu.Unlock()
		go s.echo(c)
	}
}

func (s *echoServer) echo(c net.Conn) {
	defer s.wg.Done()
	defer c.Close()
	sc := bufio.NewScanner(c)
	for sc.Scan() && sc.Text() != "bye" {
		c.Write([]byte(sc.Text() + "\n"))
	}
}

func (s *echoServer) Close() error {
	s.mu.Lock()
	s.closed = true
	s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

func TestConnHelpers(t *testing.T) {
	k := New(t, "9.4")
	srv := k.Serve(&echoServer{})
	c := k.Dial(srv)
	c.WriteLine("hello")
	c.ExpectLine("hello")
	c.WriteLine("bye")
	c.ExpectClosed()
	if !strings.Contains(c.History(), `"bye\n"`) {
		t.Errorf("History() = %s, want it to list what was sent", c.History())
	}
}

func TestCourseFrames(t *testing.T) {
	report := "found unexpected goroutines:\n[Goroutine 7 in state chan receive, with serverlab/solutions/02.(*Server).broadcast on top of the stack:\n" +
		"serverlab/solutions/02.(*Server).broadcast(0xc000)\n\t/work/solutions/02/server.go:10 +0x1\n" +
		"created by serverlab/solutions/02.(*Server).Serve in goroutine 6\n]"
	if got := courseFrames(report); got != "  serverlab/solutions/02.(*Server).broadcast" {
		t.Errorf("courseFrames = %q", got)
	}
}

func TestExerciseFromName(t *testing.T) {
	cases := map[string]string{
		"TestEx5_9_ChatLogin":     "5.9",
		"TestEx1_1_ReadFrame/sub": "1.1",
		"TestEx12_30_X":           "12.30",
		"TestConnHelpers":         "",
		"TestEx1_ReadFrame":       "",
	}
	for name, want := range cases {
		got, ok := exerciseFromName(name)
		if got != want || ok != (want != "") {
			t.Errorf("exerciseFromName(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}

// shortWaits shortens the waits of a child whose broken server is found by
// a wait running out (a Serve that never returns, an Accept never called):
// at the default, scaled by a busy machine, each such child took 20-40 s of
// make test's unit run to prove what one second proves. The parent checks
// only the message.
func shortWaits() {
	IOTimeout = time.Second
	WatchdogTimeout = 5 * time.Second
}

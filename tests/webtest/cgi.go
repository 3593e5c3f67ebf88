package webtest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tests/webtest/cgiprog"
)

// CGI checks exercise 6.4: a CGI program runs without a shell, with
// QUERY_STRING set, its output goes to the client after the two-line prefix,
// it is stopped by the time limit or when the client goes away, and the
// worker that started it reaps it before the connection is done.
func CGI(t *testing.T, impl Impl) {
	k := testkit.New(t, "6.4")
	s := newSite(k)
	needResolve(k, impl, s)
	for _, name := range []string{"env $HOME x.cgi", "cgi-bin/env.cgi", "spin.cgi", "slow.cgi", "flood.cgi",
		"fail.cgi", "mute.cgi", "orphan.cgi", "noisy.cgi"} {
		s.cgi(k, name)
	}
	s.write(k, "noexec.cgi", []byte("#!/bin/sh\necho 'Content-Type: text/plain'\necho\necho ran\n")) // mode 0644
	withoutShellVars(k)
	hs := startHandler(k, impl, Config{Root: s.root, CGITimeout: time.Minute})

	check(k, "environment", func(k *testkit.T) {
		checkEnv(k, hs.addr, "/env%20%24HOME%20x.cgi?a=1&b=%20x;rm%20-rf%20*;$(id)", "a=1&b=%20x;rm%20-rf%20*;$(id)")
		checkEnv(k, hs.addr, "/cgi-bin/env.cgi", "")
	})
	check(k, "concurrent", func(k *testkit.T) { checkConcurrentCGI(k, hs.addr) })
	check(k, "spin", func(k *testkit.T) { checkSpin(k, hs.addr) })
	check(k, "not-executable", func(k *testkit.T) {
		expectError(k, "GET /noexec.cgi (mode 0644)", get(k, hs.addr, "/noexec.cgi"), 403)
	})
	check(k, "failing-program", func(k *testkit.T) {
		expectError(k, "GET /fail.cgi (a program that exits with status 1 before any output: "+
			"hold its output back until its header is complete, so that a failure is still a 500, not a truncated 200)",
			get(k, hs.addr, "/fail.cgi"), 500)
	})
	check(k, "stderr-not-sent", func(k *testkit.T) { checkStderrNotSent(k, hs.addr) })
	check(k, "client-gone", func(k *testkit.T) { checkClientGone(k, hs) })
	check(k, "orphan", func(k *testkit.T) { checkOrphan(k, hs) })

	// The limit must leave the program time to start and print its pid, even
	// on a loaded machine running the suite under -race.
	short := startHandler(k, impl, Config{Root: s.root, CGITimeout: shortCGITimeout})
	check(k, "time-limit", func(k *testkit.T) { checkTimeLimit(k, short) })
	check(k, "silent-until-time-limit", func(k *testkit.T) {
		expectError(k, fmt.Sprintf("GET /mute.cgi (a program that says nothing until the time limit of %v kills it)",
			shortCGITimeout), get(k, short.addr, "/mute.cgi"), 500)
	})
}

// checkEnv runs an env program and checks everything it says about how it
// was run.
func checkEnv(k *testkit.T, addr, uri, query string) {
	k.Helper()
	resp := get(k, addr, uri)
	body := fmt.Sprintf("QUERY_STRING=%s\nARGS=", query)
	want := cgiPrefix + "Content-Length: "
	if !bytes.HasPrefix(resp.raw, []byte(want)) || !bytes.HasPrefix(resp.body, []byte(body)) {
		k.Fatalf("sent GET %s\n  want %q, then the program's output, with %q in its body\n   got %s",
			uri, want, body, describe(resp, nil))
	}
	checkLength(k, "GET "+uri, resp)
	if !bytes.Contains(resp.body, []byte("\nSHELL_VARS=\n")) {
		k.Fatalf("sent GET %s\n  the program's environment has variables a shell adds (PWD, SHLVL, _), "+
			"which the server's own environment does not have: start it directly (exec.Command(path)), never through sh -c, where a URI's characters become commands\n"+
			"   got %s", uri, describe(resp, nil))
	}
	ppid := fmt.Sprintf("PPID=%d\n", testkit.ServerPIDInside())
	if !bytes.HasSuffix(resp.body, []byte(ppid)) {
		k.Fatalf("sent GET %s\n  the program's parent must be the server itself (%s): start it directly, without a shell\n   got %s",
			uri, strings.TrimSpace(ppid), describe(resp, nil))
	}
}

// checkConcurrentCGI: programs run at the same time each get their own query.
func checkConcurrentCGI(k *testkit.T, addr string) {
	k.Helper()
	const n = 4
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			uri := fmt.Sprintf("/cgi-bin/env.cgi?client=%d", i)
			resp, err := exchange(addr, "GET "+uri+" HTTP/1.0\r\n\r\n")
			if want := fmt.Sprintf("QUERY_STRING=client=%d\n", i); err != nil || !bytes.HasPrefix(resp.body, []byte(want)) {
				errs <- fmt.Sprintf("GET %s: want a body starting %q, got %s", uri, want, describe(resp, err))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		k.Fatalf("%d CGI requests at once: %s", n, e)
	}
}

// checkSpin runs the original's spin.cgi for a short while.
func checkSpin(k *testkit.T, addr string) {
	k.Helper()
	resp := get(k, addr, "/spin.cgi?0.05")
	if !bytes.HasPrefix(resp.raw, []byte(cgiPrefix)) || !bytes.Contains(resp.body, []byte("I spun for 0.")) {
		k.Fatalf("sent GET /spin.cgi?0.05\n  want %q, then spin's page\n   got %s", cgiPrefix, describe(resp, nil))
	}
	checkLength(k, "GET /spin.cgi?0.05", resp)
}

// startSlow sends GET uri for a program that prints its pid first, and
// returns the connection and the pid.
func startSlow(k *testkit.T, addr, uri string) (net.Conn, *bufio.Reader, int) {
	k.Helper()
	c, err := net.DialTimeout("tcp", addr, testkit.IOTimeout)
	if err != nil {
		k.Fatalf("dial: %v", err)
	}
	k.Cleanup(func() { c.Close() })
	c.SetWriteDeadline(time.Now().Add(testkit.IOTimeout))
	req := "GET " + uri + " HTTP/1.0\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		k.Fatalf("sending %q: %v", req, err)
	}
	r := bufio.NewReader(deadlined{c})
	var seen strings.Builder
	for {
		line, err := r.ReadString('\n')
		seen.WriteString(line)
		if err != nil {
			k.Fatalf("sent %q\n  want the program's output (a PID= line)\n   got %q, then %s", req, seen.String(), testkit.Describe(err))
		}
		if pid, ok := strings.CutPrefix(line, "PID="); ok {
			// The program's pid as it sees itself: under the grader, inside
			// the subject's PID namespace; HostPID is the one this process
			// can read and signal (0: it is gone already).
			n, _ := strconv.Atoi(strings.TrimSpace(pid))
			return c, r, testkit.HostPID(n)
		}
	}
}

// shortCGITimeout is the time limit checkTimeLimit sets.
const shortCGITimeout = 2 * time.Second

// checkTimeLimit: a program that outlives the time limit is killed, the
// client's connection closed, and the program reaped.
func checkTimeLimit(k *testkit.T, hs *handlerServer) {
	k.Helper()
	c, r, pid := startSlow(k, hs.addr, "/slow.cgi")
	if _, err := io.Copy(io.Discard, r); err != nil && !testkit.IsClosed(err) {
		k.Fatalf("a CGI program ran past the time limit of %v: want the connection closed, got %s", shortCGITimeout, testkit.Describe(err))
	}
	hs.waitServed(k, c, "after the CGI time limit")
	if ok, why := reaped(pid); !ok {
		k.Fatalf("a CGI program (pid %d) ran past the time limit: want it killed and reaped by the time the "+
			"connection is done; it is %s", pid, why)
	}
}

// checkOrphan: a program that exits at once but leaves a background child
// holding its stdout must not hold the connection (and a worker) until that
// child ends: the server stops waiting for the pipe shortly after the program
// has exited (cmd.WaitDelay, with cmd.Wait doing the copy) and kills what the
// program left in its process group.
//
// The child is re-parented to this process (adoptOrphans): nothing but the
// server under test may end it before the check has seen whether the
// connection outlives it.
func checkOrphan(k *testkit.T, hs *handlerServer) {
	k.Helper()
	release, err := adoptOrphans()
	if err != nil {
		k.Logf("the child orphan.cgi leaves goes to the nearest subreaper, which may end it early: %v", err)
	}
	pid := 0
	k.Cleanup(func() { // runs before the handler's cleanup
		if pid > 0 {
			kill(pid)
		}
		if release != nil {
			release(pid)
		}
	})
	c, r, child := startSlow(k, hs.addr, "/orphan.cgi")
	pid = child
	if _, err := io.Copy(io.Discard, r); err != nil && !testkit.IsClosed(err) {
		k.Fatalf("GET /orphan.cgi: the program exited at once, leaving a child (pid %d) that holds its stdout and "+
			"sleeps for an hour\n  want the connection closed soon (about a second) after the program exited, long "+
			"before the time limit of a minute (set cmd.Stdout = w and let cmd.Wait, bounded by cmd.WaitDelay, do the "+
			"copy)\n   got %s", pid, testkit.Describe(err))
	}
	hs.waitServed(k, c, "after a CGI program exited leaving a child that holds its output")
	if ok, why := killed(pid); !ok {
		k.Fatalf("GET /orphan.cgi: the child the program left behind (pid %d) must be killed with the program's "+
			"process group (SysProcAttr.Setpgid, then kill -pgid) once the request is done; it is %s", pid, why)
	}
}

// killed waits (at most IOTimeout) for process pid, not a child of ours, to
// be gone or a zombie waiting for its own parent.
func killed(pid int) (bool, string) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(testkit.IOTimeout)
	for {
		ok, why := reaped(pid)
		if ok || strings.HasPrefix(why, "a zombie") {
			return true, ""
		}
		select {
		case <-tick.C:
		case <-deadline:
			return false, why
		}
	}
}

// checkClientGone: a client that resets the connection while a program
// floods it with output must not leave the program running.
func checkClientGone(k *testkit.T, hs *handlerServer) {
	k.Helper()
	c, r, pid := startSlow(k, hs.addr, "/flood.cgi?256")
	if _, err := io.ReadFull(r, make([]byte, 64<<10)); err != nil {
		k.Fatalf("GET /flood.cgi: want 64 KiB of output, got %s", testkit.Describe(err))
	}
	c.(*net.TCPConn).SetLinger(0) // close with a reset, as a client that crashed
	c.Close()
	hs.waitServed(k, c, "after the client reset the connection during a CGI program's output")
	if ok, why := reaped(pid); !ok {
		k.Fatalf("the client of a CGI program (pid %d) reset the connection: want the program stopped and "+
			"reaped by the time the connection is done; it is %s", pid, why)
	}
}

// reaped reports whether process pid is gone, and if not, what it is.
func reaped(pid int) (bool, string) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, fs.ErrNotExist) {
		return true, ""
	}
	if err != nil {
		return false, err.Error()
	}
	_, after, _ := strings.Cut(string(b), ") ")
	if strings.HasPrefix(after, "Z") {
		return false, "a zombie: it ended, but nobody waited for it (cmd.Wait)"
	}
	return false, "still running (state " + strings.SplitN(after, " ", 2)[0] + ")"
}

// checkStderrNotSent: a CGI program's standard error is for the server's
// log, never for the client: only its standard output is the response.
func checkStderrNotSent(k *testkit.T, addr string) {
	k.Helper()
	resp := get(k, addr, "/noisy.cgi")
	want := cgiPrefix + fmt.Sprintf("Content-Length: %d\r\nContent-Type: text/plain\r\n\r\n%s", len(cgiprog.NoisyBody),
		cgiprog.NoisyBody)
	if bytes.Contains(resp.raw, []byte(strings.TrimSpace(cgiprog.NoisyStderr))) {
		k.Fatalf("sent GET /noisy.cgi (a program that writes %q to its stderr, then its answer)\n"+
			"  the response holds what the program wrote to stderr: leave cmd.Stderr to the server's log "+
			"(or nil), never the client's connection\n   got %s", cgiprog.NoisyStderr, describe(resp, nil))
	}
	if string(resp.raw) != want {
		k.Fatalf("sent GET /noisy.cgi (a program that writes to its stderr, then its answer)\n  want %q\n   got %s",
			want, describe(resp, nil))
	}
}

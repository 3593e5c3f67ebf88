package main

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
)

func TestJobsEndToEnd(t *testing.T) {
	addr := startJobServer(t)
	for _, workload := range []string{"prime", "sort", "matmul", "mixed"} {
		code, stdout, stderr := runLoadgen(t, "jobs", "-addr", addr, "-clients", "3", "-requests", "20",
			"-workload", workload, "-sort-count", "1000", "-matrix-size", "16")
		if code != 0 || !strings.Contains(stdout, "60 ok, 0 failed") || !strings.Contains(stdout, "workload="+workload) {
			t.Errorf("jobs -workload %s: exit %d\nstdout: %s\nstderr: %s", workload, code, stdout, stderr)
		}
	}
}

// The original load_test's flags work as they did.
func TestJobsOriginalFlags(t *testing.T) {
	addr := startJobServer(t)
	host, port, _ := net.SplitHostPort(addr)
	code, stdout, stderr := runLoadgen(t, "jobs", "--host", host, "--port", port, "--clients", "2",
		"--requests-per-client", "5", "--workload", "prime", "--prime-value", "10000019")
	if code != 0 || !strings.Contains(stdout, "10 ok, 0 failed") {
		t.Fatalf("jobs with the original's flags: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

func TestJobsUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-workload", "fibonacci"},
		{"-sort-count", "0"},
		{"-sort-count", "2000001"},
		{"-matrix-size", "513"},
		{"-prime-value", "0"},
	} {
		code, _, stderr := runLoadgen(t, append([]string{"jobs", "-requests", "1"}, args...)...)
		if code == 0 || stderr == "" {
			t.Errorf("jobs %v: exit %d, stderr %q; want a failure that says why", args, code, stderr)
		}
	}
}

// lineServer answers each request line with reply(line, n), n counting the
// server's lines from 1, and records the lines, until the test ends.
type lineServer struct {
	addr  string
	mu    sync.Mutex
	lines []string
}

func startLineServer(t *testing.T, reply func(line string, n int) string) *lineServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &lineServer{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	var conns []net.Conn
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			conns = append(conns, conn)
			s.mu.Unlock()
			wg.Go(func() {
				defer conn.Close()
				sc := bufio.NewScanner(conn)
				for sc.Scan() {
					s.mu.Lock()
					s.lines = append(s.lines, sc.Text())
					n := len(s.lines)
					s.mu.Unlock()
					if _, err := fmt.Fprintf(conn, "%s\n", reply(sc.Text(), n)); err != nil {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		s.mu.Unlock()
		wg.Wait()
	})
	return s
}

// The mixed workload is the original's cycle: request r of client c takes
// slot (7c + r) mod 10 of 5 PRIME, 3 SORT, 2 MATMUL. With 3 requests each,
// client 0 takes slots 0–2 (P P P), client 1 slots 7–9 (S M M), client 2
// slots 4–6 (P S S).
func TestJobsMixedCycle(t *testing.T) {
	s := startLineServer(t, correct)
	code, stdout, stderr := runLoadgen(t, "jobs", "-addr", s.addr, "-clients", "3", "-requests", "3", "-workload", "mixed")
	if code != 0 || !strings.Contains(stdout, "9 ok, 0 failed") {
		t.Fatalf("jobs -workload mixed: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	count := map[string]int{}
	for _, line := range s.lines {
		cmd, _, _ := strings.Cut(line, " ")
		count[cmd]++
	}
	if count["PRIME"] != 4 || count["SORT"] != 3 || count["MATMUL"] != 2 {
		t.Errorf("3 clients × 3 mixed requests sent %v; want PRIME 4, SORT 3, MATMUL 2 (slots (7c+r) mod 10)", count)
	}
}

// A wrong result, a repeated id or an ERROR answer is a failure, never a
// success.
func TestJobsDetectsBadAnswers(t *testing.T) {
	cases := []struct {
		name  string
		reply func(line string, n int) string
		kind  string
	}{
		{"wrong result", func(line string, n int) string { return fmt.Sprintf("OK %d composite", n) }, "bad reply"},
		{"same id twice", func(line string, n int) string { return correct(line, 1) }, "bad id"},
		{"error answer", func(line string, n int) string { return fmt.Sprintf("ERROR %d server shutting down", n) }, "bad reply"},
	}
	for _, c := range cases {
		s := startLineServer(t, c.reply)
		_, stdout, stderr := runLoadgen(t, "jobs", "-addr", s.addr, "-clients", "1", "-requests", "3", "-prime-value", "7")
		if strings.Contains(stdout, "3 ok") || !strings.Contains(stdout+stderr, c.kind) {
			t.Errorf("%s: want failures of kind %q\nstdout: %s\nstderr: %s", c.name, c.kind, stdout, stderr)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"serverlab/tools/loadgen/load"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// echoServer serves on 127.0.0.1:0 until the test ends; each connection's
// bytes go through transform on their way back.
func echoServer(t *testing.T, transform func([]byte)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[conn] = true
			mu.Unlock()
			wg.Go(func() {
				defer conn.Close()
				buf := make([]byte, 4096)
				for {
					n, err := conn.Read(buf)
					if err != nil {
						return
					}
					transform(buf[:n])
					if _, err := conn.Write(buf[:n]); err != nil {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

func identity([]byte) {}

// runLoadgen runs the command in-process with a deadline and returns its
// exit status and output.
func runLoadgen(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code = run(ctx, &env{stdout: &out, stderr: &errOut}, args)
	return code, out.String(), errOut.String()
}

func TestHelpListsModes(t *testing.T) {
	code, stdout, _ := runLoadgen(t, "-h")
	if code != 0 {
		t.Errorf("loadgen -h: exit %d, want 0", code)
	}
	for name, m := range modes {
		if !strings.Contains(stdout, name) || !strings.Contains(stdout, m.summary) {
			t.Errorf("loadgen -h does not list mode %q (%s):\n%s", name, m.summary, stdout)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	cases := [][]string{
		{},
		{"no-such-mode"},
		{"tcp-echo", "-no-such-flag"},
		{"tcp-echo", "-requests", "1", "stray"},
		{"tcp-echo", "-label", "novalue"},
	}
	for _, args := range cases {
		if code, _, stderr := runLoadgen(t, args...); code != 2 || stderr == "" {
			t.Errorf("loadgen %q: exit %d, stderr %q; want exit 2 and a message", args, code, stderr)
		}
	}
	if code, _, _ := runLoadgen(t, "tcp-echo", "-h"); code != 0 {
		t.Errorf("loadgen tcp-echo -h: exit %d, want 0", code)
	}
}

func TestEchoClosedLoopEndToEnd(t *testing.T) {
	addr := echoServer(t, identity)
	csvPath := filepath.Join(t.TempDir(), "out.csv")
	args := []string{"tcp-echo", "-addr", addr, "-clients", "4", "-requests", "25", "-size", "100",
		"-csv", csvPath, "-label", "server=test,run=1"}
	for range 2 { // the second run appends a row
		code, stdout, stderr := runLoadgen(t, args...)
		if code != 0 {
			t.Fatalf("loadgen %q: exit %d\nstdout: %s\nstderr: %s", args, code, stdout, stderr)
		}
		if want := "100 ok, 0 failed"; !strings.Contains(stdout, want) {
			t.Errorf("loadgen %q: summary lacks %q:\n%s", args, want, stdout)
		}
	}
	rows := readCSV(t, csvPath)
	if len(rows) != 2 {
		t.Fatalf("two runs appended to %s: got %d rows, want 2: %v", csvPath, len(rows), rows)
	}
	want := map[string]string{"mode": "tcp-echo", "clients": "4", "rate": "0", "server": "test", "run": "1",
		"successes": "100", "failures": "0", "errors": ""}
	for _, row := range rows {
		for col, v := range want {
			if row[col] != v {
				t.Errorf("CSV column %s: got %q, want %q (row %v)", col, row[col], v, row)
			}
		}
	}
}

// readCSV reads a CSV file with a header into one map per row.
func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	for _, rec := range records[1:] {
		row := map[string]string{}
		for i, name := range records[0] {
			row[name] = rec[i]
		}
		rows = append(rows, row)
	}
	return rows
}

func TestEchoFixedRateJSON(t *testing.T) {
	addr := echoServer(t, identity)
	code, stdout, stderr := runLoadgen(t, "tcp-echo", "-addr", addr, "-clients", "2", "-requests", "20",
		"-rate", "2000", "-json")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	var res load.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("decoding %q: %v", stdout, err)
	}
	// 2 clients × 20 requests = 40 arrivals; a slow machine may hit the
	// in-flight cap, but every arrival has exactly one outcome.
	if res.Successes+res.Failures != 40 || res.Errors[load.KindBadReply] != 0 {
		t.Errorf("40 arrivals: got %d ok, %d failed %v", res.Successes, res.Failures, res.Errors)
	}
}

func TestEchoDetectsBadReplies(t *testing.T) {
	addr := echoServer(t, func(b []byte) { b[0] ^= 0x20 }) // flip the case of the first byte
	code, stdout, stderr := runLoadgen(t, "tcp-echo", "-addr", addr, "-clients", "2", "-requests", "5", "-csv", "-")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	records, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil || len(records) != 2 {
		t.Fatalf("-csv -: want header and one row on stdout, got %q (%v)", stdout, err)
	}
	row := map[string]string{}
	for i, name := range records[0] {
		row[name] = records[1][i]
	}
	if row["successes"] != "0" || row["errors"] != "bad reply=10" {
		t.Errorf("server corrupting every reply, 2×5 requests: got successes %q errors %q; want 0 and %q",
			row["successes"], row["errors"], "bad reply=10")
	}
	if !strings.Contains(stderr, `sent "client`) {
		t.Errorf("summary on stderr should show an example bad reply:\n%s", stderr)
	}
}

func TestEchoNoServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	code, stdout, stderr := runLoadgen(t, "tcp-echo", "-addr", addr, "-clients", "3", "-requests", "5")
	if code != 1 || !strings.Contains(stdout, "setup: refused 3") || !strings.Contains(stderr, "connection refused") {
		t.Errorf("no server at %s: exit %d\nstdout: %s\nstderr: %s\nwant exit 1, 3 refused set-ups", addr, code, stdout, stderr)
	}
}

// TestEchoMessage checks the message format: the size asked for, ending in a
// newline, naming client and request so misdelivered replies are caught.
func TestEchoMessage(t *testing.T) {
	for _, size := range []int{1, 8, 64} {
		c := &echoClient{id: 3, seq: 17, msg: make([]byte, size)}
		c.fill()
		want := []byte("client 3 request 17 " + strings.Repeat(".", max(0, size-21)))
		want = append(want[:size-1], '\n')
		if !bytes.Equal(c.msg, want) {
			t.Errorf("message of %d bytes: got %q, want %q", size, c.msg, want)
		}
	}
}

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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"serverlab/tools/internal/load"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// echoServer serves on 127.0.0.1:0 until the test ends; each connection's
// bytes go through transform on their way back.
func echoServer(t *testing.T, transform func([]byte)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
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
	assert.Zero(t, code, "loadgen -h: exit status")
	for name, m := range modes {
		assert.Contains(t, stdout, name, "loadgen -h must list mode %q", name)
		assert.Contains(t, stdout, m.summary, "loadgen -h must list mode %q with its summary", name)
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
		code, _, stderr := runLoadgen(t, args...)
		assert.Equal(t, 2, code, "loadgen %q: exit status", args)
		assert.NotEmpty(t, stderr, "loadgen %q: want a message on stderr", args)
	}
	code, _, _ := runLoadgen(t, "tcp-echo", "-h")
	assert.Zero(t, code, "loadgen tcp-echo -h: exit status")
}

func TestEchoClosedLoopEndToEnd(t *testing.T) {
	addr := echoServer(t, identity)
	csvPath := filepath.Join(t.TempDir(), "out.csv")
	args := []string{"tcp-echo", "-addr", addr, "-clients", "4", "-requests", "25", "-size", "100",
		"-csv", csvPath, "-label", "server=test,run=1"}
	for range 2 { // the second run appends a row
		code, stdout, stderr := runLoadgen(t, args...)
		require.Zero(t, code, "loadgen %q: exit status\nstdout: %s\nstderr: %s", args, stdout, stderr)
		assert.Contains(t, stdout, "100 ok, 0 failed", "loadgen %q: summary", args)
	}
	rows := readCSV(t, csvPath)
	require.Len(t, rows, 2, "two runs appended to %s", csvPath)
	want := map[string]string{"mode": "tcp-echo", "clients": "4", "rate": "0", "server": "test", "run": "1",
		"successes": "100", "failures": "0", "errors": ""}
	for _, row := range rows {
		for col, v := range want {
			assert.Equal(t, v, row[col], "CSV column %s (row %v)", col, row)
		}
	}
}

// readCSV reads a CSV file with a header into one map per row.
func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
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
	require.Zero(t, code, "exit status\nstderr: %s", stderr)
	var res load.Result
	require.NoError(t, json.Unmarshal([]byte(stdout), &res), "decoding %q", stdout)
	// 2 clients × 20 requests = 40 arrivals; a slow machine may hit the
	// in-flight cap, but every arrival has exactly one outcome.
	assert.Equal(t, int64(40), res.Successes+res.Failures, "40 arrivals: outcomes (%d ok, %d failed %v)",
		res.Successes, res.Failures, res.Errors)
	assert.Zero(t, res.Errors[load.KindBadReply], "40 arrivals: bad replies")
}

func TestEchoDetectsBadReplies(t *testing.T) {
	addr := echoServer(t, func(b []byte) { b[0] ^= 0x20 }) // flip the case of the first byte
	code, stdout, stderr := runLoadgen(t, "tcp-echo", "-addr", addr, "-clients", "2", "-requests", "5", "-csv", "-")
	require.Zero(t, code, "exit status\nstderr: %s", stderr)
	records, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	require.NoError(t, err, "-csv -: reading stdout %q", stdout)
	require.Len(t, records, 2, "-csv -: want header and one row on stdout")
	row := map[string]string{}
	for i, name := range records[0] {
		row[name] = records[1][i]
	}
	assert.Equal(t, "0", row["successes"], "server corrupting every reply, 2×5 requests: successes")
	assert.Equal(t, "bad reply=10", row["errors"], "server corrupting every reply, 2×5 requests: errors")
	assert.Contains(t, stderr, `sent "client`, "summary on stderr should show an example bad reply")
}

func TestEchoNoServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	code, stdout, stderr := runLoadgen(t, "tcp-echo", "-addr", addr, "-clients", "3", "-requests", "5")
	assert.Equal(t, 1, code, "no server at %s: exit status", addr)
	assert.Contains(t, stdout, "setup: refused 3", "no server at %s: want 3 refused set-ups", addr)
	assert.Contains(t, stderr, "connection refused", "no server at %s", addr)
}

// TestEchoMessage checks the message format: the size asked for, ending in a
// newline, naming client and request so misdelivered replies are caught.
func TestEchoMessage(t *testing.T) {
	for _, size := range []int{1, 8, 64} {
		c := &echoClient{id: 3, seq: 17, msg: make([]byte, size)}
		c.fill()
		want := []byte("client 3 request 17 " + strings.Repeat(".", max(0, size-21)))
		want = append(want[:size-1], '\n')
		assert.Equal(t, string(want), string(c.msg), "message of %d bytes", size)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"serverlab/tools/internal/load"
)

// httpServer is an HTTP server that closes every HTTP/1.0 connection after
// its response, as chapter 06's does. /short lies about its length; /missing
// is a 404.
func httpServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/short":
			w.Header().Set("Content-Length", "100")
			w.Write([]byte("only this"))
		case "/missing":
			http.NotFound(w, r)
		default:
			w.Write(bytes.Repeat([]byte("x"), 1024))
		}
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// runJSON runs loadgen with args and decodes its JSON result.
func runJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), &env{stdout: &out, stderr: &errOut}, append(args, "-json", "-quiet")); code != 0 && code != 1 {
		t.Fatalf("loadgen %q: exit %d\nstderr: %s", args, code, errOut.String())
	}
	var res map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("loadgen %q: output is not JSON: %v\n%s\nstderr: %s", args, err, out.String(), errOut.String())
	}
	return res
}

func TestHTTPClosedLoop(t *testing.T) {
	addr := httpServer(t)
	res := runJSON(t, "http", "-addr", addr, "-uri", "/f", "-clients", "4", "-requests", "25")
	if res["successes"] != float64(100) || res["failures"] != float64(0) {
		t.Fatalf("4 clients × 25 GETs of a good page: want 100 successes and no failures, got %v", res)
	}
}

func TestHTTPFixedRateNumConns(t *testing.T) {
	addr := httpServer(t)
	res := runJSON(t, "http", "-addr", addr, "-uri", "/f", "-rate", "2000", "-num-conns", "50")
	if res["successes"] != float64(50) {
		t.Fatalf("-rate 2000 -num-conns 50: want exactly 50 successes, got %v", res)
	}
}

func TestHTTPBadReplies(t *testing.T) {
	addr := httpServer(t)
	for _, c := range []struct{ uri, kind string }{{"/missing", "status"}, {"/short", "short body"}} {
		res := runJSON(t, "http", "-addr", addr, "-uri", c.uri, "-clients", "1", "-requests", "3")
		errs, _ := res["errors"].(map[string]any)
		if res["successes"] != float64(0) || errs[c.kind] == nil {
			t.Errorf("GET %s: want every request to fail with kind %q, got %v", c.uri, c.kind, res)
		}
	}
}

// TestHTTPEngines runs the closed loop on both engines: the same load must
// give the same counts, and the same bad replies the same kinds.
func TestHTTPEngines(t *testing.T) {
	addr := httpServer(t)
	for _, engine := range []string{"epoll", "goroutine"} {
		res := runJSON(t, "http", "-engine", engine, "-addr", addr, "-uri", "/f", "-clients", "3", "-requests", "10", "-loops", "2")
		if res["successes"] != float64(30) || res["failures"] != float64(0) {
			t.Errorf("-engine %s, 3 clients × 10 GETs: want 30 successes and no failures, got %v", engine, res)
		}
		res = runJSON(t, "http", "-engine", engine, "-addr", addr, "-uri", "/short", "-clients", "1", "-requests", "2")
		if errs, _ := res["errors"].(map[string]any); errs["short body"] != float64(2) {
			t.Errorf("-engine %s, GET /short twice: want 2 failures of kind \"short body\", got %v", engine, res)
		}
	}
}

func TestHTTPEngineUsage(t *testing.T) {
	for _, args := range [][]string{
		{"http", "-engine", "threads", "-requests", "1"},
		{"http", "-engine", "epoll", "-rate", "10", "-num-conns", "1"},
	} {
		if code, _, stderr := runLoadgen(t, args...); code != 2 {
			t.Errorf("loadgen %q: want exit 2 (usage), got %d\nstderr: %s", args, code, stderr)
		}
	}
}

func TestCheckReply(t *testing.T) {
	ok := []byte("200")
	for _, c := range []struct {
		reply, kind string
	}{
		{"HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nabc", ""},
		{"HTTP/1.1 200 OK\r\nServer: x\r\ncontent-length:  3 \r\n\r\nabc", ""},
		{"HTTP/1.0 200 OK\r\n\r\nanything", ""},
		{"HTTP/1.0 200 OK\r\nContent-Length: 4\r\n\r\nabc", "short body"},
		{"HTTP/1.0 404 Not Found\r\n\r\n", "status"},
		{"HTTP/1.0  200\r\n\r\n", ""},
		{"HTTP/1.0 200 OK\r\nContent-Length: 3", "bad reply"},
		{"", "eof"},
	} {
		err := checkReply([]byte(c.reply), len(c.reply), ok)
		if got := load.ErrorKind(err); got != c.kind {
			t.Errorf("reply %q: want kind %q, got %q (%v)", c.reply, c.kind, got, err)
		}
	}
}

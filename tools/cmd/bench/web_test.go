package main

import (
	"errors"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"serverlab/tools/internal/load"
)

func TestKendallOrders(t *testing.T) {
	var rs []sffRequest
	for i := 1; i <= 5; i++ {
		rs = append(rs, sffRequest{Arrival: i, Size: 10 * i, Start: time.Duration(i)})
	}
	arrival := func(r sffRequest) float64 { return float64(r.Arrival) }
	start := func(r sffRequest) float64 { return float64(r.Start) }
	backwards := func(r sffRequest) float64 { return -float64(r.Start) }
	if got := kendall(rs, arrival, start); got != 1 {
		t.Errorf("kendall(same order) = %v, want 1", got)
	}
	if got := kendall(rs, arrival, backwards); got != -1 {
		t.Errorf("kendall(reversed order) = %v, want -1", got)
	}
	if got := kendall(rs[:1], arrival, start); got != 0 {
		t.Errorf("kendall(one request) = %v, want 0 (no pairs)", got)
	}
}

func TestSFFValuesOfAShortestFirstSchedule(t *testing.T) {
	// Served by size: the small ones first, whatever their arrival.
	sizes := []int{800, 100, 400, 200, 600, 300}
	var rs []sffRequest
	for i, size := range sizes {
		d := time.Duration(size) * time.Millisecond
		rs = append(rs, sffRequest{Arrival: i + 1, Size: size, Served: size / 100, Start: d, Done: d + time.Millisecond})
	}
	v := sffValues(rs)
	if v["tau_size"] != 1 {
		t.Errorf("tau_size = %v, want 1 for a schedule in size order", v["tau_size"])
	}
	if v["tau_arrival"] >= 1 {
		t.Errorf("tau_arrival = %v, want < 1: arrival and size orders differ", v["tau_arrival"])
	}
	// The three smallest (100, 200, 300) end at 101, 201, 301 ms.
	if v["small_ms"] != 201 || v["last_ms"] != 801 {
		t.Errorf("small_ms = %v, last_ms = %v; want 201 and 801", v["small_ms"], v["last_ms"])
	}
}

func TestReplyOfChecksStatusAndBodyLength(t *testing.T) {
	check := replyOf(4)
	good := "HTTP/1.0 200 OK\r\nServer: x\r\n\r\nabcd"
	if err := check([]byte(good), len(good)); err != nil {
		t.Errorf("check(%q) = %v, want nil", good, err)
	}
	for _, bad := range []string{
		"HTTP/1.1 404 Not Found\r\n\r\nabcd",
		"HTTP/1.0 200 OK\r\n\r\nabc",
		"HTTP/1.0 200 OK\r\nno end of header",
	} {
		err := check([]byte(bad), len(bad))
		if err == nil || !errors.Is(err, load.ErrBadReply) {
			t.Errorf("check(%q) = %v, want a bad-reply error", bad, err)
		}
	}
}

func TestNginxConfServesTheTrialFolder(t *testing.T) {
	conf := nginxConf("/tmp/trial", "127.0.0.1:10180")
	for _, want := range []string{"daemon off;", "listen 127.0.0.1:10180 deferred;", "root /tmp/trial/www;", "keepalive_timeout 0;"} {
		if !strings.Contains(conf, want) {
			t.Errorf("nginx.conf lacks %q:\n%s", want, conf)
		}
	}
}

func TestProcTicksReadsThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/<pid>/stat is Linux's")
	}
	ppid, _, err := procTicks(os.Getpid())
	if err != nil || ppid != os.Getppid() {
		t.Fatalf("procTicks(self) = ppid %d, %v; want ppid %d", ppid, err, os.Getppid())
	}
	if _, err := treeCPU(os.Getpid()); err != nil {
		t.Fatalf("treeCPU(self): %v", err)
	}
}

func TestFetchTimesAWholeReply(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("fetch uses Unix sockets")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	body := strings.Repeat("x", 100<<10)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 512)
		c.Read(buf)
		c.Write([]byte("HTTP/1.0 200 OK\r\n\r\n" + body))
	}()
	r := fetch(ln.Addr().String(), "/f", len(body), time.Now().Add(5*time.Second))
	if r.err != nil {
		t.Fatalf("fetch: %v", r.err)
	}
	if r.first.IsZero() || r.done.Before(r.first) {
		t.Errorf("fetch: first byte at %v, last at %v; want first <= last", r.first, r.done)
	}
}

func TestServedOrderReadsTheLog(t *testing.T) {
	path := t.TempDir() + "/server.log"
	log := `time=2026-12-01T11:39:28.782Z level=INFO msg="web server listening" addr=127.0.0.1:1
time=2026-12-01T11:39:30.498Z level=DEBUG msg=served uri=/spin.cgi?1
time=2026-12-01T11:39:30.499Z level=DEBUG msg=served uri=/f1024.bin
time=2026-12-01T11:39:30.499Z level=DEBUG msg="connection failed" uri=/f9.bin
time=2026-12-01T11:39:30.500Z level=DEBUG msg=served uri=/f4096.bin
`
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := servedOrder(path)
	if err != nil {
		t.Fatal(err)
	}
	if got["/spin.cgi?1"] != 1 || got["/f1024.bin"] != 2 || got["/f4096.bin"] != 3 || got["/f9.bin"] != 0 {
		t.Errorf("servedOrder = %v; want spin.cgi 1, f1024 2, f4096 3, f9 absent", got)
	}
}

func TestWebFlagMistakesAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"-parts", "dynamic"}, {"-sizes", "1k"}} {
		var out, errs strings.Builder
		if code := run(t.Context(), append([]string{"web"}, args...), &out, &errs); code != 2 {
			t.Errorf("bench web %v exited %d, want 2 (a usage error)", args, code)
		}
	}
}

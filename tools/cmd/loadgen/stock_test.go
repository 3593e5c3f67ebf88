package main

import (
	"bufio"
	"net"
	"os"
	"strings"
	"sync"
	"testing"

	"serverlab/tools/given/stockproto"
)

func TestStockMixes(t *testing.T) {
	addr, path := startStock(t)
	for _, mix := range []string{"random", "show", "modify"} {
		code, stdout, stderr := runLoadgen(t, "stock", "-addr", addr, "-clients", "4", "-queries", "200", "-mix", mix)
		if code != 0 || !strings.Contains(stdout, "200 ok, 0 failed") || !strings.Contains(stdout, "mix="+mix) {
			t.Fatalf("stock -mix %s: exit %d\nstdout: %s\nstderr: %s", mix, code, stdout, stderr)
		}
	}
	// The clients said exit and left, so the server wrote the trades back.
	if b, err := os.ReadFile(path); err != nil || strings.Count(string(b), "\n") != 10 {
		t.Errorf("stock file after the runs: %q, %v; want 10 lines", b, err)
	}
}

func TestStockRejectsWrongReplies(t *testing.T) {
	addr := echoServer(t, identity) // echoes "show\n": not an 8192-byte record
	code, stdout, _ := runLoadgen(t, "stock", "-addr", addr, "-clients", "1", "-requests", "2", "-timeout", "200ms")
	if code == 0 && strings.Contains(stdout, "0 failed") {
		t.Fatalf("stock against an echo server: want failures, got\n%s", stdout)
	}
}

func TestStockUsage(t *testing.T) {
	for _, args := range [][]string{
		{"stock", "-mix", "sideways"},
		{"stock", "-clients", "8", "-queries", "4"},
	} {
		if code, _, _ := runLoadgen(t, args...); code == 0 {
			t.Errorf("loadgen %q: exit 0, want an error", args)
		}
	}
}

// originalReplies answers as the original stock servers do: the reply texts
// wrapped in ANSI colour codes, "[buy] failed" for a refused trade, and
// garbage after the NUL, each in an 8192-byte record.
func originalReplies(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			wg.Go(func() { answerAsTheOriginal(conn) })
		}
	})
	return ln.Addr().String()
}

func answerAsTheOriginal(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for i := 0; ; i++ {
		line, err := r.ReadString('\n')
		if err != nil || line == "exit\n" {
			return
		}
		cmd, _, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		var text string
		switch {
		case cmd == "show":
			text = "\x1b[0m[show]\x1b[0;32msuccess\n\x1b[0m1 100 1000\n2 50 2000\n"
		case i%3 == 0:
			text = "\x1b[0m[" + cmd + "] failed\n"
		default:
			text = "\x1b[0m[" + cmd + "]\x1b[0;32msuccess\n\x1b[0m"
		}
		rec := make([]byte, stockproto.RecordSize)
		copy(rec, text)
		copy(rec[len(text)+1:], "garbage")
		if _, err := conn.Write(rec); err != nil {
			return
		}
	}
}

func TestStockDrivesTheOriginals(t *testing.T) {
	addr := originalReplies(t)
	code, stdout, stderr := runLoadgen(t, "stock", "-addr", addr, "-clients", "2", "-queries", "300")
	if code != 0 || !strings.Contains(stdout, "300 ok, 0 failed") {
		t.Fatalf("stock against the original's replies (ANSI colours, [buy] failed): exit %d\nstdout: %s\nstderr: %s",
			code, stdout, stderr)
	}
	code, stdout, _ = runLoadgen(t, "stock", "-addr", addr, "-clients", "1", "-requests", "5", "-replies", "course")
	if code == 0 && strings.Contains(stdout, " 0 failed") {
		t.Fatalf("stock -replies course against the original's replies: want failures, got\n%s", stdout)
	}
}

func TestStockReplyMeans(t *testing.T) {
	cases := []struct {
		kind stockproto.Cmd
		text string
		ok   bool
	}{
		{stockproto.Show, "[show]success\n1 2 3\n", true},
		{stockproto.Show, "\x1b[0m[show]\x1b[0;32msuccess\n\x1b[0m1 2 3\n", true},
		{stockproto.Buy, "\x1b[0m[buy]\x1b[0;32msuccess\n\x1b[0m", true},
		{stockproto.Buy, "\x1b[0m[buy] failed\n", true},
		{stockproto.Buy, stockproto.NotEnough, true},
		{stockproto.Sell, "\x1b[0m[sell] failed\n", true},
		{stockproto.Sell, stockproto.NoSuchStock, true},
		{stockproto.Sell, "\x1b[0m[buy]\x1b[0;32msuccess\n", false},
		{stockproto.Sell, stockproto.NotEnough, false}, // a sell is never short of shares
		{stockproto.Buy, "Invalid Argument\n", false},
		{stockproto.Show, "\x1b[0m[buy] failed\n", false},
		{stockproto.Buy, "\x1b[", false},
	}
	for _, c := range cases {
		if got := stockReplyMeans(c.kind, []byte(c.text)); got != c.ok {
			t.Errorf("stockReplyMeans(%v, %q) = %v, want %v", c.kind, c.text, got, c.ok)
		}
	}
}

// FuzzStockReplyMeans: judging a reply never panics, accepts every reply the
// course's exact rule accepts, and accepts it still when the original's ANSI
// colour codes wrap it; stripping codes never makes a reply longer.
func FuzzStockReplyMeans(f *testing.F) {
	for _, s := range []string{stockproto.BuyOK, "\x1b[0m[buy] failed\n", "\x1b[0;32", "\x1b[", "[show]success\n1 2 3\n"} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, text string, k uint8) {
		kind := []stockproto.Cmd{stockproto.Show, stockproto.Buy, stockproto.Sell}[k%3]
		means := stockReplyMeans(kind, []byte(text))
		if stockReplyFits(kind, []byte(text)) && !means {
			t.Fatalf("stockReplyMeans(%v, %q) = false, but the exact rule accepts it", kind, text)
		}
		if plain := stripANSI([]byte(text)); len(plain) > len(text) {
			t.Fatalf("stripANSI(%q) = %q: longer", text, plain)
		}
		if means && !stockReplyMeans(kind, []byte("\x1b[0m"+text+"\x1b[0m")) {
			t.Fatalf("stockReplyMeans(%v, %q) = true, but false once wrapped in colour codes", kind, text)
		}
	})
}

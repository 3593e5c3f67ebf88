package main

import (
	"os"
	"strings"
	"testing"
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

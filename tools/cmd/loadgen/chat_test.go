package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"serverlab/tools/internal/chatload"
	"serverlab/tools/internal/chatload/chatloadtest"
)

func TestChatEndToEnd(t *testing.T) {
	for _, engine := range chatload.Engines() {
		t.Run(engine, func(t *testing.T) { testChatEndToEnd(t, engine) })
	}
}

func testChatEndToEnd(t *testing.T, engine string) {
	disc, usersPath := startDiscovery(t, 5*time.Second)
	addr := startChat(t, usersPath)
	csvPath := filepath.Join(t.TempDir(), "chat.csv")
	// The server runs in this process, so -pid watches this process.
	code, stdout, stderr := runLoadgen(t, "chat", "-engine", engine, "-addr", addr, "-discovery", disc,
		"-clients", "4", "-requests", "3", "-interval", "1ms", "-csv", csvPath, "-pid", strconv.Itoa(os.Getpid()))
	if code != 0 {
		t.Fatalf("chat: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	// 4 clients × 3 messages, each delivered to the 3 others.
	for _, want := range []string{"36 ok, 0 failed", "12 ok, 0 failed", "4 of 4 logged in; 0 of 36 deliveries lost"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("chat summary lacks %q:\n%s", want, stdout)
		}
	}
	rows := readCSV(t, csvPath)
	if len(rows) != 2 || rows[0]["measure"] != "delivery" || rows[1]["measure"] != "fanout" ||
		rows[0]["successes"] != "36" || rows[0]["lost"] != "0" || rows[0]["connected"] != "4" {
		t.Fatalf("CSV rows: want a delivery row (36 successes, lost 0, connected 4) and a fanout row, got %v", rows)
	}
	if runtime.GOOS == "linux" {
		if kib, err := strconv.Atoi(rows[0]["rss_idle_kib"]); err != nil || kib <= 0 {
			t.Errorf("with -pid, rss_idle_kib = %q; want the server's RSS", rows[0]["rss_idle_kib"])
		}
		if pct, err := strconv.ParseFloat(rows[0]["cpu_pct"], 64); err != nil || pct < 0 {
			t.Errorf("with -pid, cpu_pct = %q; want the server's CPU share", rows[0]["cpu_pct"])
		}
	}
}

func TestChatStressSteps(t *testing.T) {
	for _, engine := range chatload.Engines() {
		t.Run(engine, func(t *testing.T) {
			_, usersPath := startDiscovery(t, 5*time.Second)
			addr := startChat(t, usersPath)
			code, stdout, stderr := runLoadgen(t, "chat", "-engine", engine, "-addr", addr, "-users", usersPath,
				"-steps", "2:5:3", "-requests", "2", "-interval", "0")
			if code != 0 {
				t.Fatalf("chat -steps: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			for _, want := range []string{"clients=2 ", "2 of 2 logged in; 0 of 4 deliveries lost", "clients=5 ", "5 of 5 logged in; 0 of 40 deliveries lost"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("chat -steps 2:5:3 lacks %q:\n%s", want, stdout)
				}
			}
		})
	}
}

// A relay that splits every frame into small writes makes the epoll engine
// reassemble frames across reads, and grow its buffer for long ones; one that relays nothing loses everything,
// which both engines must count once -timeout has passed.
func TestChatFakeRelay(t *testing.T) {
	for _, engine := range chatload.Engines() {
		t.Run(engine+"/split", func(t *testing.T) {
			usersPath := filepath.Join(t.TempDir(), "users.txt")
			addr := chatloadtest.StartRelay(t, 7)
			code, stdout, stderr := runLoadgen(t, "chat", "-engine", engine, "-addr", addr, "-users", usersPath,
				"-clients", "3", "-requests", "3", "-interval", "0")
			if code != 0 {
				t.Fatalf("chat: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			if want := "3 of 3 logged in; 0 of 18 deliveries lost"; !strings.Contains(stdout, want) {
				t.Errorf("relaying in 7-byte writes: want %q in:\n%s", want, stdout)
			}
		})
		t.Run(engine+"/large", func(t *testing.T) { // frames longer than the epoll engine's first buffer
			usersPath := filepath.Join(t.TempDir(), "users.txt")
			addr := chatloadtest.StartRelay(t, 1000)
			code, stdout, stderr := runLoadgen(t, "chat", "-engine", engine, "-addr", addr, "-users", usersPath,
				"-clients", "3", "-requests", "2", "-interval", "0", "-size", "40000")
			if code != 0 {
				t.Fatalf("chat: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			if want := "3 of 3 logged in; 0 of 12 deliveries lost"; !strings.Contains(stdout, want) {
				t.Errorf("40 000-byte messages relayed in 1000-byte writes: want %q in:\n%s", want, stdout)
			}
		})
		t.Run(engine+"/silent", func(t *testing.T) {
			usersPath := filepath.Join(t.TempDir(), "users.txt")
			addr := chatloadtest.StartRelay(t, 0)
			code, stdout, stderr := runLoadgen(t, "chat", "-engine", engine, "-addr", addr, "-users", usersPath,
				"-clients", "3", "-requests", "2", "-interval", "0", "-timeout", "300ms")
			if code != 0 {
				t.Fatalf("chat: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			if want := "3 of 3 logged in; 12 of 12 deliveries lost"; !strings.Contains(stdout, want) {
				t.Errorf("a relay that relays nothing: want %q in:\n%s", want, stdout)
			}
		})
	}
}

// A server that lets nobody in degrades the stress test at its first step.
func TestChatStressStopsOnDegradation(t *testing.T) {
	_, usersPath := startDiscovery(t, 5*time.Second)
	addr := startChat(t, usersPath)
	elsewhere := filepath.Join(t.TempDir(), "other-users.txt") // the server never sees these users
	code, stdout, stderr := runLoadgen(t, "chat", "-addr", addr, "-users", elsewhere, "-steps", "2,3", "-requests", "1")
	if code != 0 {
		t.Fatalf("chat: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if want := "stopping the stress test at 2 clients: only 0 of 2 clients logged in"; !strings.Contains(stdout, want) {
		t.Errorf("want %q in:\n%s", want, stdout)
	}
	if strings.Contains(stdout, "clients=3") {
		t.Errorf("the stress test went on after degrading:\n%s", stdout)
	}
}

func TestChatUsage(t *testing.T) {
	for _, args := range [][]string{{"chat", "-rate", "10"}, {"chat", "-steps", "1,x"}, {"chat", "-engine", "threads"}} {
		if code, _, stderr := runLoadgen(t, args...); code != 2 || stderr == "" {
			t.Errorf("loadgen %q: exit %d, stderr %q; want 2 and a message", args, code, stderr)
		}
	}
}

//go:build linux

package main

import (
	"strings"
	"testing"
	"time"

	"serverlab/tools/internal/chatload"
)

// The chapter 05 event-loop server batches deliveries into one write per
// connection, so a receiver's read returns several frames at once.
func TestChatAgainstEventLoopServer(t *testing.T) {
	for _, engine := range chatload.Engines() {
		t.Run(engine, func(t *testing.T) {
			_, usersPath := startDiscovery(t, 5*time.Second)
			addr := startEvloopChat(t, usersPath)
			code, stdout, stderr := runLoadgen(t, "chat", "-engine", engine, "-addr", addr, "-users", usersPath,
				"-clients", "6", "-requests", "4", "-interval", "0")
			if code != 0 {
				t.Fatalf("chat: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			// 6 clients × 4 messages, each delivered to the 5 others.
			for _, want := range []string{"120 ok, 0 failed", "24 ok, 0 failed", "6 of 6 logged in; 0 of 120 deliveries lost"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("chat summary lacks %q:\n%s", want, stdout)
				}
			}
		})
	}
}

// With kernel receive timestamps every delivery is still counted once, and
// the flag is refused without the epoll engine.
func TestChatKernelTimestamps(t *testing.T) {
	_, usersPath := startDiscovery(t, 5*time.Second)
	addr := startChat(t, usersPath)
	code, stdout, stderr := runLoadgen(t, "chat", "-engine", "epoll", "-kernel-timestamps", "-addr", addr, "-users", usersPath,
		"-clients", "5", "-requests", "3", "-interval", "1ms")
	if code != 0 {
		t.Fatalf("chat: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	// 5 clients × 3 messages, each delivered to the 4 others.
	for _, want := range []string{"60 ok, 0 failed", "15 ok, 0 failed", "5 of 5 logged in; 0 of 60 deliveries lost"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("chat summary lacks %q:\n%s", want, stdout)
		}
	}
	args := []string{"chat", "-engine", "goroutines", "-kernel-timestamps"}
	if code, _, stderr := runLoadgen(t, args...); code != 2 || !strings.Contains(stderr, "-kernel-timestamps needs -engine epoll") {
		t.Errorf("loadgen %q: exit %d, stderr %q; want 2 and a message", args, code, stderr)
	}
}

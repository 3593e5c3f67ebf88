//go:build solutions

package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	chatcore "serverlab/solutions/07"
)

func startChatcore(t *testing.T) string {
	t.Helper()
	srv, err := chatcore.New(chatcore.Config{
		DBPath: filepath.Join(t.TempDir(), "chat.db"),
		Hash:   chatcore.HashParams{Time: 1, MemoryKiB: 64, Threads: 1},
	})
	return serve(t, srv, err)
}

// TestChatcoreTable runs the original's method, shortened (3 testers, 50 ms
// between messages, 0.5 s), twice on one server — the second run reuses the
// users and the channel, as a rerun of the original's tester does — and checks
// the table it prints.
func TestChatcoreTable(t *testing.T) {
	addr := startChatcore(t)
	code, stdout, stderr := runLoadgen(t, "chatcore", "-addr", addr, "-steps", "3,3",
		"-interval", "50ms", "-duration", "500ms", "-quiet")
	if code != 0 {
		t.Fatalf("chatcore: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 4 || lines[0] != "| Clients | Sent | Failed | p50 (µs) | p95 (µs) | p99 (µs) | max (µs) | Not ready |" {
		t.Fatalf("want the original README's table header (and Not ready) and two rows, got:\n%s", stdout)
	}
	row := regexp.MustCompile(`^\| 3 \| (\d+) \| (\d+) \| \d+ \| \d+ \| \d+ \| \d+ \| 0 \|$`)
	for _, l := range lines[2:] {
		m := row.FindStringSubmatch(l)
		if m == nil || m[1] == "0" {
			t.Fatalf("want a row for 3 clients with messages sent, got %q", l)
		}
	}
}

package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestRegisterEndToEnd(t *testing.T) {
	addr, usersPath := startDiscovery(t, 5*time.Second)
	code, stdout, stderr := runLoadgen(t, "register", "-addr", addr, "-clients", "3", "-requests", "5")
	if code != 0 || !strings.Contains(stdout, "15 ok, 0 failed") {
		t.Fatalf("register: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	b, err := os.ReadFile(usersPath)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 15 {
		t.Errorf("users file has %d lines after 15 registrations:\n%s", n, b)
	}
}

// With a staller holding the iterative server, registrations still succeed:
// the server's deadline drops the staller every time it gets to it.
func TestRegisterWithStaller(t *testing.T) {
	addr, _ := startDiscovery(t, 100*time.Millisecond)
	code, stdout, stderr := runLoadgen(t, "register", "-addr", addr, "-clients", "2", "-requests", "3", "-stallers", "1")
	if code != 0 || !strings.Contains(stdout, "6 ok, 0 failed") {
		t.Fatalf("register -stallers 1: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

package main

import (
	"net"
	"path/filepath"
	"strconv"
	"testing"
)

// A port that is taken is an error at start-up, before NATS is embedded,
// not a server that runs and listens nowhere.
func TestBindFailureIsAnError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	err = run([]string{"--ip", "127.0.0.1", "--port", port, "--db", filepath.Join(t.TempDir(), "db"), "--log", "error"})
	if err == nil {
		t.Fatalf("run on a port in use returned nil; want the bind error")
	}
}

// -cluster and -nats exclude each other.
func TestClusterAndNATSExclude(t *testing.T) {
	err := run([]string{"--port", "0", "--nats", "nats://127.0.0.1:4222", "--cluster", "127.0.0.1:6222", "--log", "error"})
	if err == nil {
		t.Fatalf("run with -cluster and -nats returned nil; want an error")
	}
}

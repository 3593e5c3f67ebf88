//go:build !judge

package chat_test

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	chat "serverlab/chapters/02"
	"serverlab/tools/given/users"
	"serverlab/tools/given/wire"
)

// These benchmarks measure two costs the lesson discusses; run them with
//
//	go test -run '^$' -bench . -benchtime 20x ./chapters/02

// serveBench starts a server on a users file of n users (u0 … u(n-1), password
// "pw") and returns its address.
func serveBench(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "users.txt")
	var lines strings.Builder
	for i := range n {
		lines.WriteString(users.User{Name: fmt.Sprintf("u%d", i), Password: "pw", IP: "127.0.0.1", Port: 1}.Line())
	}
	if err := os.WriteFile(path, []byte(lines.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	srv, err := chat.New(chat.Config{UsersPath: path, Logger: discard()})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// login connects and logs in as name.
func login(b *testing.B, addr, name string) net.Conn {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	if err := wire.WriteFrame(conn, wire.Frame{Type: wire.Login, Sender: name, Payload: []byte("pw")}); err != nil {
		b.Fatal(err)
	}
	if f, err := wire.ReadFrame(conn); err != nil || string(f.Payload) != "OK" {
		b.Fatalf("login %s: %v %v", name, f, err)
	}
	return conn
}

// BenchmarkLogin is one login round trip, which reads the users file again:
// how much does not caching it cost, for a small and a large file?
func BenchmarkLogin(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("users=%d", n), func(b *testing.B) {
			addr := serveBench(b, n)
			for i := 0; b.Loop(); i++ {
				login(b, addr, fmt.Sprintf("u%d", i%n)).Close()
			}
		})
	}
}

// BenchmarkIdleClients logs in 1000 clients that then sit idle, and reports
// what each costs the server: goroutine stacks (the server's only
// goroutines here are its readers and writers, two per client) and heap (the
// server's per-client state, plus the test's own client-side connection
// objects, which makes it an upper bound).
func BenchmarkIdleClients(b *testing.B) {
	const n = 1000
	addr := serveBench(b, n)
	var stack, heap float64
	for b.Loop() {
		before := memStats()
		conns := make([]net.Conn, n)
		for i := range conns {
			conns[i] = login(b, addr, fmt.Sprintf("u%d", i))
		}
		after := memStats()
		stack += float64(after.StackInuse-before.StackInuse) / n
		heap += (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / n
		for _, c := range conns {
			c.Close()
		}
	}
	b.ReportMetric(stack/float64(b.N), "stack-B/client")
	b.ReportMetric(heap/float64(b.N), "heap-B/client")
}

func memStats() runtime.MemStats {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

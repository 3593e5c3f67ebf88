//go:build !judge

package web_test

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	web "serverlab/solutions/06"
	"serverlab/tests/testkit"
)

// BenchmarkServe1KiB measures the whole server on its performance goal's
// workload: a 1 KiB file, one request per connection, 8 clients at once.
// -benchmem shows what a request allocates (client side included).
func BenchmarkServe1KiB(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f1k.html"), bytes.Repeat([]byte("x"), 1024), 0o644); err != nil {
		b.Fatal(err)
	}
	srv, err := web.New(web.Config{Root: dir, Threads: 8, Buffers: 64, Logger: testkit.Logger()})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	addr := ln.Addr().(*net.TCPAddr)
	req := []byte("GET /f1k.html HTTP/1.0\r\n\r\n")
	b.SetParallelism(4) // 4 × GOMAXPROCS clients
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		buf := make([]byte, 4096)
		for pb.Next() {
			c, err := net.DialTCP("tcp", nil, addr)
			if err != nil {
				b.Error(err)
				return
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			c.Write(req)
			n := 0
			for err == nil {
				var m int
				m, err = c.Read(buf[n:])
				n += m
			}
			c.Close()
			if !bytes.HasPrefix(buf[:n], []byte("HTTP/1.0 200 OK")) || n < 1024 {
				b.Errorf("got %d bytes: %q", n, buf[:min(n, 100)])
				return
			}
		}
	})
}

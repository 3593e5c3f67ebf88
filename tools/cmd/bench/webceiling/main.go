// Command webceiling is chapter 06's ceiling experiment: the least a Go
// server can do for a one-request-per-connection HTTP client, to learn how
// much of the gap between the course's web server and nginx is the server's
// own work and how much is the I/O layer under it.
//
//	go run ./tools/cmd/bench/webceiling -mode net -addr 127.0.0.1:10110
//	go run ./tools/cmd/bench/webceiling -mode raw -addr 127.0.0.1:10120 -n 2
//	go run ./tools/cmd/bench/webceiling -mode net -addr 127.0.0.1:10111 -size 102400
//	go run ./tools/cmd/bench/webceiling -mode net -addr 127.0.0.1:10112 -file www/f1k.html
//	wrk -t2 -c50 -d3s -H "Connection: close" http://127.0.0.1:10110/
//
// Whatever is asked for, it answers with the same "file" of -size bytes (1 KiB
// by default) from memory, with the header chapter 06's server sends, and closes: no parsing, no file system,
// no deadlines, no logging. Two ways of doing that:
//
//   - net: package net, as chapter 06 is built, with the same listener
//     settings as its server (no keep-alive, TCP_DEFER_ACCEPT): Accept on a
//     net.Listener and a goroutine per connection (the runtime's netpoller
//     registers every connection with epoll, sets TCP_NODELAY and asks for its
//     local address).
//   - raw (Linux): no package net: a blocking listening socket and -n
//     goroutines, each looping accept4, read, write, close on plain
//     descriptors, like a pre-threaded C server.
//
// With -file (net mode, Linux), every connection gets that file, opened,
// measured and sent afresh (answerFile): the same do-nothing server plus
// exactly the system calls serving a file needs. It separates the price of
// the file system from the price of the server's own work.
//
// The difference between net and raw is the price of package net's per-connection
// machinery on the machine at hand; see docs/bench-ch06.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
)

// bodySize is the default file size: chapter 06's goal is stated for 1 KiB
// and 100 KiB (-size 102400).
const bodySize = 1024

func main() {
	mode := flag.String("mode", "net", "net (package net, a goroutine per connection) or raw (Linux: blocking descriptors, no package net)")
	addr := flag.String("addr", "127.0.0.1:10110", "address to listen on (raw: an IPv4 address)")
	n := flag.Int("n", 2, "raw: goroutines blocking in accept4 (each holds a thread while it waits)")
	size := flag.Int("size", bodySize, "bytes of body in every reply")
	file := flag.String("file", "", "net mode: send this file, opened afresh for every connection, instead of -size bytes from memory")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *mode, *addr, *n, *size, *file); err != nil {
		fmt.Fprintln(os.Stderr, "webceiling:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, mode, addr string, n, size int, file string) error {
	if size < 0 {
		return errors.New("-size: want at least 0")
	}
	if file != "" && (mode != "net" || runtime.GOOS != "linux") {
		return errors.New("-file: net mode on Linux only")
	}
	resp := response(size)
	switch mode {
	case "net":
		// The listener chapter 06's server uses: no keep-alive probes (one
		// request per connection), and TCP_DEFER_ACCEPT where it exists.
		lc := net.ListenConfig{KeepAlive: -1, Control: func(_, _ string, c syscall.RawConn) error {
			return c.Control(deferAccept)
		}}
		ln, err := lc.Listen(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "webceiling: net, listening on", ln.Addr())
		go func() { <-ctx.Done(); ln.Close() }()
		if file != "" {
			err = serveNetFile(ln, file)
		} else {
			err = serveNet(ln, resp)
		}
		if ctx.Err() != nil {
			return nil
		}
		return err
	case "raw":
		if n < 1 {
			return errors.New("-n: want at least 1")
		}
		return serveRaw(ctx, addr, n, resp)
	}
	return fmt.Errorf("-mode %q: want net or raw", mode)
}

// response is the whole reply: chapter 06's 200 header and size zero bytes.
func response(size int) []byte {
	b := []byte("HTTP/1.0 200 OK\r\nServer: OSTEP WebServer\r\nContent-Length: " +
		strconv.Itoa(size) + "\r\nContent-Type: text/html\r\n\r\n")
	return append(b, make([]byte, size)...)
}

// serveNet answers every connection on ln with resp, one goroutine per
// connection, until Accept fails.
func serveNet(ln net.Listener, resp []byte) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go answer(c, resp)
	}
}

// serveNetFile is serveNet answering with answerFile.
func serveNetFile(ln net.Listener, path string) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go answerFile(c, path)
	}
}

// answer reads (the first segment of) the request, writes resp and closes.
func answer(c net.Conn, resp []byte) {
	defer c.Close()
	var buf [4096]byte
	if _, err := c.Read(buf[:]); err != nil {
		return
	}
	c.Write(resp)
}

package load_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"serverlab/tools/internal/load"
)

func TestErrorKindOfKnownErrors(t *testing.T) {
	opErr := func(op string, errno syscall.Errno) error {
		return &net.OpError{Op: op, Net: "tcp", Err: os.NewSyscallError(op, errno)}
	}
	cases := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{opErr("dial", syscall.ECONNREFUSED), load.KindRefused},
		{opErr("read", syscall.ECONNRESET), load.KindReset},
		{opErr("write", syscall.EPIPE), load.KindBrokenPipe},
		{opErr("socket", syscall.EMFILE), load.KindTooManyFDs},
		{opErr("dial", syscall.EADDRNOTAVAIL), load.KindNoPorts},
		{fmt.Errorf("read reply: %w", os.ErrDeadlineExceeded), load.KindTimeout},
		{context.DeadlineExceeded, load.KindTimeout},
		{fmt.Errorf("read header: %w", io.ErrUnexpectedEOF), load.KindEOF},
		{io.EOF, load.KindEOF},
		{net.ErrClosed, load.KindClosed},
		{context.Canceled, load.KindCanceled},
		{fmt.Errorf("%w: sent %q, got %q", load.ErrBadReply, "a", "b"), load.KindBadReply},
		{load.ErrInFlightCap, load.KindInFlightCap},
		{load.WithKind("wrong sender", io.EOF), "wrong sender"},
		{load.WithKind("empty", nil), "empty"},
		{errors.New("mystery"), load.KindOther},
	}
	for _, c := range cases {
		if got := load.ErrorKind(c.err); got != c.want {
			t.Errorf("ErrorKind(%v): got %q, want %q", c.err, got, c.want)
		}
	}
}

// TestErrorKindOfRealNetworkErrors provokes each failure on real sockets, so
// that the classification matches what the kernel and the net package return.
func TestErrorKindOfRealNetworkErrors(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		ln := listen(t)
		addr := ln.Addr().String()
		ln.Close()
		_, err := net.DialTimeout("tcp", addr, 5*time.Second)
		expectKind(t, "dial a closed port", err, load.KindRefused)
	})
	t.Run("timeout", func(t *testing.T) {
		conn, _ := pair(t)
		conn.SetReadDeadline(time.Now().Add(time.Millisecond))
		_, err := conn.Read(make([]byte, 1))
		expectKind(t, "read from a silent server past the deadline", err, load.KindTimeout)
	})
	t.Run("eof", func(t *testing.T) {
		conn, server := pair(t)
		server.Close()
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := io.ReadFull(conn, make([]byte, 1))
		expectKind(t, "read after the server closed", err, load.KindEOF)
	})
	t.Run("reset", func(t *testing.T) {
		conn, server := pair(t)
		server.(*net.TCPConn).SetLinger(0) // close with RST
		server.Close()
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := conn.Read(make([]byte, 1))
		expectKind(t, "read after the server reset", err, load.KindReset)
	})
	t.Run("closed", func(t *testing.T) {
		conn, _ := pair(t)
		conn.Close()
		_, err := conn.Write([]byte("x"))
		expectKind(t, "write on a closed connection", err, load.KindClosed)
	})
}

func expectKind(t *testing.T, what string, err error, want string) {
	t.Helper()
	if got := load.ErrorKind(err); got != want {
		t.Errorf("%s: ErrorKind(%v) = %q, want %q", what, err, got, want)
	}
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// pair returns the two ends of a loopback TCP connection.
func pair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln := listen(t)
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	select {
	case server = <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("accept: no connection within 5s")
	}
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { server.Close() })
	return client, server
}

func TestDialClosesOnCancel(t *testing.T) {
	ln := listen(t)
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	ctx, cancel := context.WithCancel(t.Context())
	conn, err := load.Dial(ctx, "tcp", ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	select {
	case server := <-accepted:
		if server != nil {
			defer server.Close()
		}
	case <-time.After(5 * time.Second):
		t.Fatal("accept: no connection within 5s")
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	readErr := make(chan error, 1)
	go func() {
		_, err := conn.Read(make([]byte, 1))
		readErr <- err
	}()
	cancel()
	select {
	case err := <-readErr:
		expectKind(t, "read on a Dial'ed connection after cancel", err, load.KindClosed)
	case <-time.After(5 * time.Second):
		t.Fatal("read on a Dial'ed connection still blocked 5s after its context was cancelled")
	}
}

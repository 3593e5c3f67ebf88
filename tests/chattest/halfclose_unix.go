//go:build unix

package chattest

import (
	"context"

	"net"
	"syscall"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/wire"
)

// smallBuffers makes a socket's kernel buffers small, so that a few
// kilobytes fill them. An accepted socket inherits the listener's.
func smallBuffers(_, _ string, rc syscall.RawConn) error {
	var serr error
	err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, 4096)
		if serr == nil {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		}
	})
	if err != nil {
		return err
	}
	return serr
}

// checkHalfClosedNotReading: a client that sends its requests, half-closes
// and then reads nothing must not hold its goroutines and its socket for
// ever. The replies queued for it wait in a full socket; the server gives
// them Config.StallTimeout (a write deadline), then closes. Without that
// deadline the writer blocks until the client reads, which it may never do.
func checkHalfClosedNotReading(k *testkit.T, impl Impl) {
	k.Helper()
	if !impl.GoroutinePerClient {
		return
	}
	const stall = 300 * time.Millisecond
	ln, err := (&net.ListenConfig{Control: smallBuffers}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen: %v", err)
	}
	e := startOn(k, impl, Config{StallTimeout: stall, MaxPending: 8 << 20}, ln, "amy")
	mark := testkit.MarkGoroutines()
	d := net.Dialer{Timeout: testkit.IOTimeout, Control: smallBuffers}
	conn, err := d.Dial("tcp", e.srv.Addr)
	if err != nil {
		k.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(testkit.IOTimeout))
	if _, err := conn.Write(testkit.Encode(loginFrame("amy", password("amy")))); err != nil {
		k.Fatalf("sending amy's LOGIN: %v", err)
	}
	if got, err := wire.ReadFrame(conn); err != nil || string(got.Payload) != replyOK {
		k.Fatalf("logging in as amy: want %v, got %v (%s)", loginReply("amy", replyOK), got, testkit.Describe(err))
	}
	// 3000 replies of about 90 bytes: far more than the sockets hold, far
	// less than MaxPending, so the outbox holds the rest, and nobody is
	// dropped for a full outbox.
	const n = 3000
	var burst []byte
	for range n {
		burst = append(burst, testkit.Encode(privateFrame("amy", "nobody", []byte("?")))...)
	}
	if _, err := conn.Write(burst); err != nil {
		k.Fatalf("sending %d PRIVATE_MSGs: %v", n, err)
	}
	conn.(*net.TCPConn).CloseWrite()
	deadline := time.Now().Add(stall + testkit.IOTimeout)
	for {
		running := mark.ServerGoroutines()
		if running == "" {
			return
		}
		if time.Now().After(deadline) {
			k.Fatalf("amy sent %d PRIVATE_MSGs to nobody, closed her side (CloseWrite) and read nothing; %v later "+
				"(StallTimeout is %v) the server still ran for her:\n%s\nhint: after a client's end of stream, its last "+
				"replies get StallTimeout to be written (a write deadline), then the connection is closed",
				n, stall+testkit.IOTimeout, stall, running)
		}
		time.Sleep(20 * time.Millisecond) // between looks at the server's goroutines, which no event announces
	}
}

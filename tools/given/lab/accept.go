package lab

import (
	"errors"
	"log/slog"
	"net"
	"syscall"
	"time"
)

// Accept waits for the next connection on ln, the way net/http.Server's accept
// loop does: an error that the listener recovers from by itself — the process
// is out of file descriptors (EMFILE, ENFILE), the kernel is short of buffers,
// or a client gave up while it waited in the backlog (ECONNABORTED) — is not a
// reason to stop serving. Accept logs it, waits (5 ms, doubling up to 1 s, so
// that a server out of descriptors does not spin on a CPU) and tries again.
//
// done is the server's "closing" channel: once it is closed, Accept returns
// ErrServerClosed, also in the middle of a wait, so Close never waits for a
// backoff. Any other error is returned as it is; the caller's Serve returns it.
func Accept(ln net.Listener, done <-chan struct{}, log *slog.Logger) (net.Conn, error) {
	var delay time.Duration
	for {
		conn, err := ln.Accept()
		if err == nil {
			return conn, nil
		}
		select {
		case <-done:
			return nil, ErrServerClosed
		default:
		}
		if !Temporary(err) {
			return nil, err
		}
		delay = min(max(2*delay, 5*time.Millisecond), time.Second)
		if log != nil {
			log.Warn("accept failed; retrying", "err", err, "in", delay)
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-done:
			t.Stop()
			return nil, ErrServerClosed
		}
	}
}

// Temporary reports whether an Accept error is one the listener recovers from
// by itself, so that a server should wait and accept again rather than stop.
func Temporary(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

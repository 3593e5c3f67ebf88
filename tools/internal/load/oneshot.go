package load

import (
	"errors"
	"io"
	"time"
)

// OneShot is a closed-loop driver for protocols that use one connection per
// request, where the client sends a request and the server answers and closes
// (HTTP/1.0, wrk and httperf with "Connection: close"). Like ClosedLoop it
// keeps Clients requests outstanding, but it does not run a goroutine per
// client: Loops goroutines each drive their share of the connections as
// non-blocking sockets on one epoll instance, the design of wrk.
//
// Why a driver of its own: with a goroutine per client and net.Dial, each
// request cost the load generator ~15 system calls (net.Dial's getsockname,
// getpeername, getsockopt and setsockopts, the poller's epoll_ctl calls, a
// failed read) and several goroutine wake-ups, about twice wrk's CPU per
// request, so on a small machine the load generator, not the server, set the
// pace. An event loop needs socket, connect, epoll_ctl, write, read (×2 with
// the end of file) and close, plus a share of one epoll_wait.
//
// Each request is timed from just before its socket is created until the
// server closes the connection (connection set-up counts, as with httperf),
// recorded in an HDR histogram like every driver's. Failures are counted by
// kind (ErrorKind): refused, reset, timeout, and whatever Check returns.
//
// OneShot runs on Linux only; elsewhere Run returns ErrOneShotUnsupported.
type OneShot struct {
	Addr     string        // host:port to connect to
	Request  []byte        // sent on each connection
	Clients  int           // connections open at once, at least 1
	Requests int           // requests per client; 0 = until Duration
	Duration time.Duration // stop issuing after this long; 0 = until Requests
	Timeout  time.Duration // limit on each request, connection included (default 5s)
	Loops    int           // event-loop goroutines (default 2, at most Clients)
	// HeadSize is how much of each reply is kept for Check (default 16
	// KiB); the rest is read and counted but not kept.
	HeadSize int
	// Check judges a reply: head is its first HeadSize bytes (or all of it),
	// total its length. It returns nil for a good reply. It is called from
	// the loops' goroutines at once, so it must not modify shared state.
	Check    func(head []byte, total int) error
	Progress io.Writer // one line per second while running; nil = quiet
}

// ErrOneShotUnsupported is Run's error on systems without epoll.
var ErrOneShotUnsupported = errors.New("load: OneShot needs Linux (epoll); use ClosedLoop")

// Defaults for OneShot's optional fields.
const (
	defaultOneShotTimeout = 5 * time.Second
	defaultOneShotLoops   = 2
	defaultOneShotHead    = 16 << 10
)

func (o OneShot) withDefaults() OneShot {
	if o.Timeout <= 0 {
		o.Timeout = defaultOneShotTimeout
	}
	if o.Loops <= 0 {
		o.Loops = defaultOneShotLoops
	}
	o.Loops = min(o.Loops, o.Clients)
	if o.HeadSize <= 0 {
		o.HeadSize = defaultOneShotHead
	}
	return o
}

func (o OneShot) validate() error {
	switch {
	case o.Clients < 1:
		return errors.New("load: OneShot needs at least one client")
	case o.Check == nil:
		return errors.New("load: OneShot needs a Check")
	case len(o.Request) == 0:
		return errors.New("load: OneShot needs a Request")
	}
	return checkBounds(o.Requests, o.Duration)
}

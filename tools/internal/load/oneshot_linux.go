//go:build linux

package load

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// sweepEvery is how often a loop looks for requests past their deadline, and
// the longest it waits in epoll_wait (so that it also notices cancellation).
// Deadlines are therefore kept to within about 10 ms.
const sweepEvery = 10 * time.Millisecond

// Run opens Clients connections, spread over Loops event loops, and replaces
// each one as soon as the server closes it, until every client has issued
// Requests requests or Duration has passed. Requests in flight when Duration
// passes finish and count. Cancelling ctx aborts the run: connections in
// flight are closed and not counted, and Run returns what was recorded with
// ctx's error.
func (o OneShot) Run(ctx context.Context) (Result, error) {
	if err := o.validate(); err != nil {
		return Result{}, err
	}
	o = o.withDefaults()
	raddr, err := net.ResolveTCPAddr("tcp", o.Addr)
	if err != nil {
		return Result{}, err
	}
	loops := make([]*oneShotLoop, o.Loops)
	for i := range loops {
		clients := (o.Clients - i + o.Loops - 1) / o.Loops // clients i, i+Loops, …
		if loops[i], err = newOneShotLoop(&o, raddr, clients); err != nil {
			for _, l := range loops[:i] {
				unix.Close(l.epfd)
			}
			return Result{}, err
		}
	}
	counts := func() (ok, failed int64) {
		for _, l := range loops {
			s, f := l.rec.Counts()
			ok, failed = ok+s, failed+f
		}
		return ok, failed
	}

	start := time.Now()
	var stopAt time.Time
	if o.Duration > 0 {
		stopAt = start.Add(o.Duration)
	}
	prog := startProgress(o.Progress, int64(o.Clients)*int64(o.Requests), o.Duration, counts)
	var wg sync.WaitGroup
	for _, l := range loops {
		wg.Go(func() { l.run(ctx, stopAt) })
	}
	wg.Wait()
	wall := time.Since(start)
	prog.end()

	all := NewRecorder()
	for _, l := range loops {
		all.Merge(l.rec)
	}
	return all.Result(wall), ctx.Err()
}

// sockaddr converts ta for connect(2). Each loop needs its own: a
// unix.Sockaddr is also the buffer Connect encodes it into.
func sockaddr(ta *net.TCPAddr) (unix.Sockaddr, int, error) {
	if ip4 := ta.IP.To4(); ip4 != nil || ta.IP == nil {
		sa := &unix.SockaddrInet4{Port: ta.Port}
		if ip4 != nil {
			sa.Addr = [4]byte(ip4)
		}
		return sa, unix.AF_INET, nil
	}
	sa := &unix.SockaddrInet6{Port: ta.Port, Addr: [16]byte(ta.IP.To16())}
	if ta.Zone != "" {
		ifi, err := net.InterfaceByName(ta.Zone)
		if err != nil {
			return nil, 0, err
		}
		sa.ZoneId = uint32(ifi.Index)
	}
	return sa, unix.AF_INET6, nil
}

// oneShotLoop is one event loop: an epoll instance and the connections of its
// clients, all driven from one goroutine, so none of this needs a lock.
type oneShotLoop struct {
	o       *OneShot
	sa      unix.Sockaddr
	family  int
	epfd    int
	clients []oneShotClient
	active  int // clients with a connection open
	events  []unix.EpollEvent
	scratch []byte // where the part of a reply past its head is read, to be counted
	rec     *Recorder
}

// oneShotClient is one client slot: the request in flight, if any.
type oneShotClient struct {
	fd       int // -1 between requests
	issued   int // requests issued so far
	start    time.Time
	deadline time.Time
	sent     int    // bytes of the request written
	head     []byte // the reply's first HeadSize bytes
	total    int    // bytes of reply read
}

func newOneShotLoop(o *OneShot, raddr *net.TCPAddr, clients int) (*oneShotLoop, error) {
	sa, family, err := sockaddr(raddr)
	if err != nil {
		return nil, err
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	l := &oneShotLoop{
		o: o, sa: sa, family: family, epfd: epfd,
		clients: make([]oneShotClient, clients),
		events:  make([]unix.EpollEvent, clients),
		scratch: make([]byte, 64<<10),
		rec:     NewRecorder(),
	}
	for i := range l.clients {
		l.clients[i] = oneShotClient{fd: -1, head: make([]byte, 0, o.HeadSize)}
	}
	return l, nil
}

// run starts every client's first request and handles events until no
// request is left in flight.
func (l *oneShotLoop) run(ctx context.Context, stopAt time.Time) {
	defer unix.Close(l.epfd)
	for i := range l.clients {
		l.next(ctx, i, stopAt)
	}
	lastSweep := time.Now()
	for l.active > 0 {
		if ctx.Err() != nil {
			l.abort()
			return
		}
		n, err := unix.EpollWait(l.epfd, l.events, int(sweepEvery/time.Millisecond))
		if err != nil && !errors.Is(err, unix.EINTR) {
			l.failAll(os.NewSyscallError("epoll_wait", err))
			return
		}
		for _, ev := range l.events[:max(n, 0)] {
			l.handle(ctx, int(ev.Fd), ev.Events, stopAt)
		}
		if now := time.Now(); now.Sub(lastSweep) >= sweepEvery {
			l.expire(ctx, now, stopAt)
			lastSweep = now
		}
	}
}

// next issues client i's next request, unless the run's bounds say it is
// done. A request that fails before it reaches the network (no file
// descriptors, no ports) is recorded and the next one tried at once, as
// ClosedLoop does.
func (l *oneShotLoop) next(ctx context.Context, i int, stopAt time.Time) {
	c := &l.clients[i]
	for ctx.Err() == nil {
		if l.o.Requests > 0 && c.issued >= l.o.Requests {
			return
		}
		if !stopAt.IsZero() && !time.Now().Before(stopAt) {
			return
		}
		c.issued++
		err := l.connect(i)
		if err == nil {
			return
		}
		l.rec.Fail(err)
	}
}

// connect starts a non-blocking connect for client i and registers the
// socket, edge-triggered: an event says the connection is up (or failed), or
// that reply bytes (or the server's close) arrived.
func (l *oneShotLoop) connect(i int) error {
	c := &l.clients[i]
	c.start = time.Now()
	c.deadline = c.start.Add(l.o.Timeout)
	fd, err := unix.Socket(l.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	if err := unix.Connect(fd, l.sa); err != nil && !errors.Is(err, unix.EINPROGRESS) {
		unix.Close(fd)
		return os.NewSyscallError("connect", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(i)}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		unix.Close(fd)
		return os.NewSyscallError("epoll_ctl", err)
	}
	c.fd, c.sent, c.head, c.total = fd, 0, c.head[:0], 0
	l.active++
	return nil
}

// handle reacts to events on client i's connection: first it writes the
// request (the first event says the connect finished; if it failed, the write
// returns why), then it reads the reply.
func (l *oneShotLoop) handle(ctx context.Context, i int, events uint32, stopAt time.Time) {
	c := &l.clients[i]
	if c.fd < 0 {
		return
	}
	if c.sent < len(l.o.Request) {
		n, err := unix.Write(c.fd, l.o.Request[c.sent:])
		switch {
		case errors.Is(err, unix.EAGAIN):
			return // still connecting, or the send buffer is full
		case err != nil:
			l.finish(ctx, i, os.NewSyscallError("write", err), stopAt)
			return
		}
		c.sent += n
		if c.sent < len(l.o.Request) || events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) == 0 {
			return // the reply will come as an event of its own
		}
	}
	l.read(ctx, i, stopAt)
}

// read reads what has arrived of client i's reply; at end of file the reply
// is complete and checked.
func (l *oneShotLoop) read(ctx context.Context, i int, stopAt time.Time) {
	c := &l.clients[i]
	for {
		buf := l.scratch
		if len(c.head) < cap(c.head) {
			buf = c.head[len(c.head):cap(c.head)]
		}
		n, err := unix.Read(c.fd, buf)
		switch {
		case errors.Is(err, unix.EAGAIN):
			return // the rest comes with a later event
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			l.finish(ctx, i, os.NewSyscallError("read", err), stopAt)
			return
		case n == 0:
			l.finish(ctx, i, l.o.Check(c.head, c.total), stopAt)
			return
		}
		if len(c.head) < cap(c.head) {
			c.head = c.head[:len(c.head)+n]
		}
		c.total += n
	}
}

// finish closes client i's connection (which also removes it from the epoll
// set), records the request and issues the client's next one. A failure that
// happens because the run was cancelled is not counted, as in ClosedLoop.
func (l *oneShotLoop) finish(ctx context.Context, i int, err error, stopAt time.Time) {
	c := &l.clients[i]
	elapsed := time.Since(c.start)
	unix.Close(c.fd)
	c.fd = -1
	l.active--
	if err == nil || ctx.Err() == nil {
		l.rec.Record(elapsed, err)
	}
	l.next(ctx, i, stopAt)
}

// expire fails every request that is past its deadline.
func (l *oneShotLoop) expire(ctx context.Context, now time.Time, stopAt time.Time) {
	for i := range l.clients {
		if c := &l.clients[i]; c.fd >= 0 && now.After(c.deadline) {
			err := fmt.Errorf("no complete reply within %v (%d bytes): %w", l.o.Timeout, c.total, os.ErrDeadlineExceeded)
			l.finish(ctx, i, err, stopAt)
		}
	}
}

// abort closes every connection without recording it: the run was
// cancelled, so the server did not fail these requests.
func (l *oneShotLoop) abort() {
	for i := range l.clients {
		if c := &l.clients[i]; c.fd >= 0 {
			unix.Close(c.fd)
			c.fd = -1
		}
	}
	l.active = 0
}

// failAll records err for every request in flight and closes them; the loop
// cannot go on (its epoll instance failed).
func (l *oneShotLoop) failAll(err error) {
	for i := range l.clients {
		if c := &l.clients[i]; c.fd >= 0 {
			l.rec.Fail(err)
			unix.Close(c.fd)
			c.fd = -1
		}
	}
	l.active = 0
}

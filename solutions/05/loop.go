//go:build linux

package evloop

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"serverlab/tools/given/lab"
	"serverlab/tools/given/rawsys"
)

// Handler is the server logic on top of the loop: the chat server and the
// stock server are each one Handler. The loop calls it from its one
// goroutine, never concurrently, so a handler needs no lock for anything that
// only the loop touches.
type Handler interface {
	// Opened is called for every accepted connection.
	Opened(c *Conn)
	// Data hands the handler the bytes that have arrived on c and that it has
	// not consumed yet, oldest first. It returns how many bytes, from the
	// front of in, it consumed; the loop keeps the rest and hands them back,
	// followed by new bytes, next time. in is only valid during the call.
	// An error closes the connection.
	Data(c *Conn, in []byte) (consumed int, err error)
	// Closed is called once when c is closed, whoever closed it; err says why
	// (nil when the handler or the server closed it).
	Closed(c *Conn, err error)
	// Tick runs the handler's timers. It is called after every batch of
	// events, and when the time it last returned has come; it does what is
	// due and returns when it next needs to run (the zero time: no timer is
	// pending). The loop sleeps in epoll_wait until then at the latest.
	Tick(now time.Time) (next time.Time)
}

// Options tune the loop. The zero value is usable.
type Options struct {
	// HighWater is the amount of unsent output at which the loop stops
	// reading from a connection, until its output has been sent: a client
	// that pipelines requests but does not read the replies cannot make the
	// server buffer without limit (default 64 KiB).
	HighWater int
	// MaxPending is the amount of unsent output at which a connection is
	// closed as a slow consumer: stopping to read from it does not help when
	// its output comes from other clients (default 4 MiB).
	MaxPending int
	// StallTimeout is how long a connection's pending output may make no
	// progress at all — the kernel takes not one byte of it — before the
	// connection is closed as stalled (ErrStalled; default 2s). MaxPending
	// bounds what a client that does not read costs; StallTimeout bounds how
	// long it costs it: back-pressure alone would keep a client that
	// pipelines requests and never reads paused for ever, and a chat client
	// that never reads would be dropped only once MaxPending bytes of other
	// people's messages had piled up for it (seconds, at chat rates).
	StallTimeout time.Duration
	// CloseGrace bounds how long Close lets replies already queued finish
	// sending, so that no client receives half a reply (default 1s).
	CloseGrace time.Duration
	// Logger receives the loop's log (default slog.Default()).
	Logger *slog.Logger
}

// readBufferSize is the size of the loop's one read buffer. Every connection
// reads into it; only bytes a handler leaves unconsumed are copied into a
// buffer of the connection's own.
const readBufferSize = 64 << 10

// maxEvents is how many events one epoll_wait returns at most.
const maxEvents = 256

// Loop is a single-goroutine event loop over one epoll instance. Serve runs
// it; Close, from any goroutine, stops it.
type Loop struct {
	h   Handler
	opt Options
	log *slog.Logger

	// mu guards the fields below it: Close runs in another goroutine than
	// Serve, and this is all the two of them share.
	mu      sync.Mutex
	closed  bool           // Close has been called
	wakefd  int            // the eventfd Close writes to; -1 when Serve is not running
	ln      net.Listener   // the listener Serve was given
	serving sync.WaitGroup // counts the running Serve call

	// Everything below belongs to the loop's goroutine alone: no lock.
	epfd     int
	lnfd     int     // the loop's own (duplicated) listening socket
	spare    int     // a reserved fd, given up to accept and refuse a client when fds run out (EMFILE)
	paused   bool    // the listener is out of the interest list: fds ran out and there was no spare
	conns    []*Conn // indexed by fd
	open     int     // number of open connections
	nextID   uint32
	buf      []byte // the one read buffer
	events   []unix.EpollEvent
	nextTick time.Time
	now      time.Time // when the current batch of events arrived: one clock read per batch
	dirty    []*Conn   // connections with output queued during this batch
	stuck    []*Conn   // connections whose output the socket did not all take (see send)
	nextScan time.Time // when scanStalled next looks at stuck
	pool     [][]byte  // output buffers to reuse
	pooled   int       // bytes of capacity in pool
	draining bool      // Close was called: sending what is queued, reading nothing
	stopping bool      // the loop ends after this batch

	lingerers []*Conn   // lingering connections, in order of deadline (see linger)
	graceEnd  time.Time // when draining: the end of CloseGrace
}

// New returns a loop that runs h.
func New(h Handler, opt Options) *Loop {
	if opt.HighWater <= 0 {
		opt.HighWater = 64 << 10
	}
	if opt.MaxPending <= 0 {
		opt.MaxPending = 4 << 20
	}
	opt.HighWater = min(opt.HighWater, opt.MaxPending)
	if opt.StallTimeout <= 0 {
		opt.StallTimeout = 2 * time.Second
	}
	if opt.CloseGrace <= 0 {
		opt.CloseGrace = time.Second
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	return &Loop{h: h, opt: opt, log: opt.Logger, wakefd: -1, epfd: -1, lnfd: -1, spare: -1}
}

// Serve runs the loop on ln until Close. It always returns a non-nil error:
// lab.ErrServerClosed after Close, or the error that stopped the loop. ln must
// be a TCP listener; Serve closes it before returning.
func (l *Loop) Serve(ln net.Listener) error {
	defer ln.Close()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return lab.ErrServerClosed
	}
	if l.ln != nil {
		l.mu.Unlock()
		return lab.ErrServerClosed // serving already: one listener, the one Close closes
	}
	if err := l.setup(ln); err != nil {
		l.mu.Unlock()
		l.teardown()
		return err
	}
	l.ln = ln
	l.serving.Add(1)
	defer l.serving.Done()
	l.mu.Unlock()

	err := l.run()
	l.teardown()
	return err
}

// setup creates the epoll instance, the wake-up eventfd, the spare fd and the
// loop's own copy of the listening socket, and puts the listener and the
// eventfd in the interest list.
func (l *Loop) setup(ln net.Listener) error {
	var err error
	if l.lnfd, err = listenerFD(ln); err != nil {
		return err
	}
	if l.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return fmt.Errorf("epoll_create1: %w", err)
	}
	if l.wakefd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	l.spare = openSpare()
	for _, fd := range []int{l.lnfd, l.wakefd} {
		if err := l.ctl(unix.EPOLL_CTL_ADD, fd, 0, unix.EPOLLIN); err != nil {
			return err
		}
	}
	l.buf = make([]byte, readBufferSize)
	l.events = make([]unix.EpollEvent, maxEvents)
	return nil
}

// listenerFD duplicates ln's socket, so that the loop owns an fd of its own
// that Go's netpoller knows nothing about. (The flag O_NONBLOCK lives in the
// open file, which the two fds share: it is set already.)
func listenerFD(ln net.Listener) (int, error) {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return -1, fmt.Errorf("evloop: %T is not a TCP listener", ln)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	cerr := raw.Control(func(s uintptr) {
		fd, err = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
	})
	if cerr != nil {
		return -1, cerr
	}
	if err != nil {
		return -1, fmt.Errorf("dup listener: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// openSpare reserves one fd (see acceptFailed); -1 if even that fails.
func openSpare() int {
	fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	return fd
}

// run is the loop: wait for events, handle each, repeat, until Close.
func (l *Loop) run() error {
	l.nextTick = l.h.Tick(time.Now())
	for !l.stopping {
		n, err := l.wait()
		if err == unix.EINTR {
			continue // a signal (Go preempts goroutines with SIGURG): just wait again
		}
		if err != nil {
			return fmt.Errorf("epoll_wait: %w", err)
		}
		l.now = time.Now()
		for _, ev := range l.events[:n] {
			l.dispatch(ev)
		}
		if !l.draining {
			l.nextTick = l.h.Tick(l.now)
		}
		l.flushAll()
		if !l.draining {
			// After the flush: it is what leaves output stuck.
			l.nextTick = earliest(l.nextTick, l.scanStalled(l.now))
			l.nextTick = earliest(l.nextTick, l.scanLinger(l.now))
		} else {
			// A lingering client may not hold Close for all of CloseGrace.
			l.nextTick = earliest(l.graceEnd, l.scanLinger(l.now))
		}
		if l.draining && (l.open == 0 || !l.now.Before(l.graceEnd)) {
			l.stopping = true // everything is sent, or the grace period is over
		}
	}
	return lab.ErrServerClosed
}

// wait returns the next batch of events. It first takes what is ready without
// sleeping (rawsys.PollNow): under load there nearly always is something, and
// then the loop never tells the scheduler it might block (see tools/given/rawsys).
// Only when nothing is ready does it sleep in the ordinary epoll_wait
// (rawsys.Wait, which the race detector sees write l.events), until
// an event or the handler's next timer.
func (l *Loop) wait() (int, error) {
	n, err := rawsys.PollNow(l.epfd, l.events)
	if n > 0 || (err != nil && err != unix.EINTR) {
		return n, err
	}
	return rawsys.Wait(l.epfd, l.events, l.timeout(time.Now()))
}

// dispatch handles one event.
func (l *Loop) dispatch(ev unix.EpollEvent) {
	fd := int(ev.Fd)
	switch fd {
	case l.lnfd:
		l.acceptAll()
		return
	case l.wakefd:
		l.woken()
		return
	}
	c := l.lookup(fd, uint32(ev.Pad))
	if c == nil {
		// The connection this event was for was closed earlier in this
		// batch, and its fd may already belong to a new connection: the id
		// in the event's data tells them apart.
		return
	}
	if c.lingering {
		l.discard(c)
		return
	}
	if ev.Events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) != 0 && len(c.out) > 0 {
		l.send(c)
	}
	if ev.Events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP|unix.EPOLLRDHUP) != 0 && !c.closed && !c.paused {
		l.readable(c)
	}
}

// lookup returns the open connection with this fd and id, or nil.
func (l *Loop) lookup(fd int, id uint32) *Conn {
	if fd < 0 || fd >= len(l.conns) {
		return nil
	}
	c := l.conns[fd]
	if c == nil || c.id != id {
		return nil
	}
	return c
}

// timeout is how long epoll_wait may sleep, in milliseconds: until the
// handler's next timer, or forever (-1) when none is pending. Never 0 while
// idle: a zero timeout turns the loop into a busy loop that burns a core
// doing nothing.
func (l *Loop) timeout(now time.Time) int {
	if l.nextTick.IsZero() {
		return -1
	}
	d := l.nextTick.Sub(now)
	if d <= 0 {
		return 0 // a timer is due: collect the events there are, then run it
	}
	// Round up, so that the loop does not wake a fraction of a millisecond
	// early and spin through a few zero-timeout waits.
	return int((d + time.Millisecond - 1) / time.Millisecond)
}

// ctl adds or modifies fd's entry in the interest list. The id goes into the
// event's data next to the fd, so that a stale event can be recognised.
func (l *Loop) ctl(op, fd int, id uint32, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd), Pad: int32(id)}
	if err := unix.EpollCtl(l.epfd, op, fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl(fd %d): %w", fd, err)
	}
	return nil
}

// Close stops the loop from any goroutine: it wakes the loop through the
// eventfd, and waits until Serve has closed every connection and fd and
// returned. It is safe to call more than once; later calls return nil.
func (l *Loop) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		l.serving.Wait()
		return nil
	}
	l.closed = true
	err := l.wake()
	l.mu.Unlock()
	l.serving.Wait()
	return err
}

// wake makes the loop's epoll_wait return, by adding 1 to the eventfd. It is
// called with l.mu held, so that Serve cannot close the eventfd meanwhile.
func (l *Loop) wake() error {
	if l.wakefd < 0 {
		return nil // Serve is not running: it will see l.closed when it starts
	}
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1) // the eventfd counter is a uint64 in the host's byte order
	for {
		_, err := unix.Write(l.wakefd, one[:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return nil // the counter is saturated: the loop is awake already
		}
		return err
	}
}

// woken handles the eventfd's event: read it (resetting the counter, or the
// level-triggered eventfd would wake the loop forever) and start draining if
// Close was called.
func (l *Loop) woken() {
	var b [8]byte
	unix.Read(l.wakefd, b[:])
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed && !l.draining {
		l.drain()
	}
}

// drain begins the end: accept no one, hand the handlers nothing more, let
// every connection with nothing queued linger, and give the others CloseGrace
// to receive what is queued for them (whole replies: a client never gets half
// of one) and then linger. The loop stops when they are all closed or the
// time is up; then teardown closes what is left.
func (l *Loop) drain() {
	l.draining = true
	l.graceEnd = time.Now().Add(l.opt.CloseGrace)
	l.nextTick = l.graceEnd
	closeFD(&l.lnfd)
	l.mu.Lock()
	l.ln.Close() // with both fds closed, the kernel refuses new clients
	l.mu.Unlock()
	for _, c := range l.conns {
		if c != nil {
			c.CloseWhenFlushed()
		}
	}
}

// teardown closes every connection and every fd the loop opened. It runs in
// Serve's goroutine once the loop has stopped.
func (l *Loop) teardown() {
	for _, c := range l.conns {
		if c != nil {
			l.close(c, nil)
		}
	}
	l.conns = nil
	for _, fd := range []*int{&l.lnfd, &l.spare, &l.epfd} {
		closeFD(fd)
	}
	l.mu.Lock()
	closeFD(&l.wakefd)
	if l.ln != nil {
		l.ln.Close()
	}
	l.mu.Unlock()
}

// closeFD closes *fd if it is open and marks it closed.
func closeFD(fd *int) {
	if *fd >= 0 {
		unix.Close(*fd)
		*fd = -1
	}
}

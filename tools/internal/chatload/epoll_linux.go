//go:build linux

package chatload

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"serverlab/tools/given/wire"
)

const epollSupported = true

// epollPoll bounds each wait, so that the loop notices the senders finishing
// (and the deadline for lost messages that follows) without a wake-up channel.
const epollPoll = 100 * time.Millisecond

// epollBuffer is each connection's read buffer to start with: over a hundred
// of the load generator's frames, and 16 MiB for a 1000-client stress step.
const epollBuffer = 16 << 10

// epollPeer is one client's connection as the epoll engine sees it: its
// descriptor, the bytes read but not yet decoded, and how many of this run's
// broadcasts it has received.
type epollPeer struct {
	fd         int
	buf        []byte // reused; grows only for a frame longer than it
	start, end int    // buf[start:end] is read but not yet decoded
	got, want  int64
	done       bool
}

// receiveEpoll is the Epoll engine: one goroutine waits on every connection
// with epoll(7) and reads whichever are readable, without blocking, into a
// reused buffer per connection. All frames of one read share its timestamp:
// taken as the read returns, so that only the loop's own turn round the
// other connections is charged to the server, or with KernelTimestamps the
// kernel's, so that nothing of the load generator's is.
//
// The loop reads duplicates of the net.Conns' descriptors. The sockets stay
// registered with Go's own poller too, which is harmless: no goroutine reads
// them meanwhile.
func receiveEpoll(ctx context.Context, run *runState, conns []*client, want []int64, sendersDone <-chan struct{}) (int64, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return 0, fmt.Errorf("epoll_create1: %w", err)
	}
	defer unix.Close(ep)
	peers := make([]epollPeer, 0, len(conns))
	active := 0 // peers expecting broadcasts
	defer func() {
		for _, p := range peers {
			unix.Close(p.fd)
		}
	}()
	for i, c := range conns {
		fd, err := connFD(c)
		if err != nil {
			return 0, err
		}
		peers = append(peers, epollPeer{fd: fd, buf: make([]byte, epollBuffer), want: want[i]})
		if want[i] <= 0 { // nothing to hear
			peers[i].done = true
			continue
		}
		active++
		if run.cfg.KernelTimestamps {
			if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
				return 0, fmt.Errorf("SO_TIMESTAMPNS: %w", err)
			}
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(i)} // Fd carries the peer's index
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			return 0, fmt.Errorf("epoll_ctl: %w", err)
		}
	}
	l := epollLoop{run: run, ep: ep, peers: peers, active: active, epoch: run.start.UnixNano()}
	if run.cfg.KernelTimestamps {
		l.oob = make([]byte, unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{}))))
	}
	err = l.loop(ctx, sendersDone)
	var received int64
	for _, p := range peers {
		received += p.got
	}
	return received, err
}

// connFD is a duplicate of the socket descriptor behind c, so that the
// loop never reads a number that c's closing (ctx ending) let the process
// reuse. It shares c's file description and so its O_NONBLOCK.
func connFD(c *client) (int, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return 0, fmt.Errorf("epoll engine: a %T has no descriptor", c.Conn)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, err
	}
	fd, dupErr := -1, error(nil)
	err = raw.Control(func(d uintptr) { fd, dupErr = unix.FcntlInt(d, unix.F_DUPFD_CLOEXEC, 0) })
	if err = errors.Join(err, dupErr); err != nil {
		return 0, fmt.Errorf("duplicating a socket descriptor: %w", err)
	}
	return fd, nil
}

// epollLoop is the state of one receiveEpoll.
type epollLoop struct {
	run    *runState
	ep     int
	peers  []epollPeer
	active int // peers still expecting broadcasts
	// With KernelTimestamps: room for the SCM_TIMESTAMPNS message, and the
	// run's start on the kernel's (wall) clock.
	oob   []byte
	epoch int64
}

// loop runs until every peer has its broadcasts, ctx is done, or the senders
// are done and cfg.Timeout has passed since.
func (l *epollLoop) loop(ctx context.Context, sendersDone <-chan struct{}) error {
	events := make([]unix.EpollEvent, len(l.peers))
	var deadline time.Time // zero until the senders are done
	for l.active > 0 && ctx.Err() == nil {
		wait := epollPoll
		if deadline.IsZero() {
			select {
			case <-sendersDone:
				deadline = time.Now().Add(l.run.cfg.Timeout)
			default:
			}
		}
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return nil // what has not arrived is lost
			}
			wait = min(wait, left)
		}
		n, err := unix.EpollWait(l.ep, events, int(wait.Milliseconds())+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("epoll_wait: %w", err)
		}
		for _, ev := range events[:n] {
			l.readPeer(&l.peers[ev.Fd])
		}
	}
	return nil
}

// readPeer reads what p's socket holds, timestamps it, and records every
// whole frame. A peer that has all its broadcasts, reaches end of stream,
// fails or sends an undecodable frame is dropped from the loop.
func (l *epollLoop) readPeer(p *epollPeer) {
	if p.done {
		return
	}
	if p.start > 0 { // move the pending bytes, less than a frame, to the front
		p.end = copy(p.buf, p.buf[p.start:p.end])
		p.start = 0
	}
	if p.end == len(p.buf) { // a frame longer than the buffer: make room for it
		p.buf = append(p.buf, make([]byte, len(p.buf))...)
	}
	n, now, err := l.read(p)
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
		return // spurious wake-up: nothing to read after all
	}
	if err != nil || n == 0 {
		l.drop(p)
		return
	}
	p.end += n
	rec := l.run.delivery[0]
	for p.got < p.want {
		f, used, err := wire.Decode(p.buf[p.start:p.end])
		if err != nil {
			l.drop(p) // the stream cannot be resynchronised
			return
		}
		if used == 0 {
			break // a partial frame: wait for the rest
		}
		if l.run.deliver(f, now, rec) {
			p.got++
		}
		p.start += used
	}
	if p.start == p.end {
		p.start, p.end = 0, 0
	}
	if p.got >= p.want {
		l.drop(p)
	}
}

// read reads into p's buffer and says when the data arrived: as the read
// returns, or with KernelTimestamps when the kernel queued the latest of
// the data on the socket (SO_TIMESTAMPNS), which leaves the load
// generator's own scheduling delay out of the measure.
func (l *epollLoop) read(p *epollPeer) (int, time.Duration, error) {
	if l.oob == nil {
		n, err := unix.Read(p.fd, p.buf[p.end:])
		return n, time.Since(l.run.start), err
	}
	n, oobn, _, _, err := unix.Recvmsg(p.fd, p.buf[p.end:], l.oob, 0)
	now := time.Since(l.run.start)
	if err != nil || oobn == 0 {
		return n, now, err
	}
	msgs, perr := unix.ParseSocketControlMessage(l.oob[:oobn])
	if perr != nil {
		return n, now, nil
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= 16 {
			ts := unix.Timespec{Sec: int64(binary.NativeEndian.Uint64(m.Data[0:])), Nsec: int64(binary.NativeEndian.Uint64(m.Data[8:]))}
			return n, time.Duration(ts.Nano() - l.epoch), nil
		}
	}
	return n, now, nil
}

// drop stops watching p.
func (l *epollLoop) drop(p *epollPeer) {
	p.done = true
	l.active--
	unix.EpollCtl(l.ep, unix.EPOLL_CTL_DEL, p.fd, nil)
}

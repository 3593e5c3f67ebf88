package chatcore

import (
	"errors"
	"net"
	"sync"
	"time"

	"serverlab/tools/given/chatcore/guard"
)

// Why a push failed.
var (
	errFull   = errors.New("outbox full")
	errClosed = errors.New("outbox closed")
)

// outbox is the queue of encoded frames waiting to be written to one
// connection.
//
// Everybody pushes — the connection's own reader (replies), other readers
// (events), the committer (chat messages) — and one goroutine, the writer,
// takes. A push never blocks: nobody may wait for a slow client, least of all
// the committer, which would make every channel wait for it. Instead the
// queue is bounded in bytes, and a push that would pass the bound fails with
// errFull; the server then drops the connection. That is the slow-consumer
// policy: disconnect, never block and never grow without bound. (The
// original queued without bound: one client that stopped reading made the
// server's memory grow until the machine gave out.)
//
// Every queued frame has also drawn its bytes from the server's output
// budget (Server.send takes them before the push): the outbox gives them
// back once they are written, or discarded by close, so that the budget
// counts exactly what all outboxes hold, whichever way a connection ends.
type outbox struct {
	limit  int
	budget *guard.Budget
	ready  chan struct{} // capacity 1: "something to take, or closed"

	mu       sync.Mutex
	queue    [][]byte
	size     int
	closed   bool // pushes fail; take returns false at once
	finished bool // pushes fail; take returns false once the queue is empty
}

func newOutbox(limit int, budget *guard.Budget) *outbox {
	return &outbox{limit: limit, budget: budget, ready: make(chan struct{}, 1)}
}

// frameBytes is the bytes of frames, which they drew from the output
// budget.
func frameBytes(frames [][]byte) int64 {
	n := 0
	for _, b := range frames {
		n += len(b)
	}
	return int64(n)
}

// push queues the frame b, which is shared and must not be modified (a
// broadcast encodes once and pushes the same bytes everywhere).
func (o *outbox) push(b []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.finished {
		return errClosed
	}
	if o.size+len(b) > o.limit {
		return errFull
	}
	o.queue = append(o.queue, b)
	o.size += len(b)
	o.wake()
	return nil
}

func (o *outbox) wake() {
	select {
	case o.ready <- struct{}{}:
	default:
	}
}

// take waits for frames and returns all of them, handing spare back as the
// new queue. It returns false when the outbox is closed, or finished and
// empty.
func (o *outbox) take(spare [][]byte) ([][]byte, bool) {
	for {
		o.mu.Lock()
		switch {
		case o.closed:
			o.mu.Unlock()
			return nil, false
		case len(o.queue) > 0:
			batch := o.queue
			o.queue, o.size = spare[:0], 0
			o.mu.Unlock()
			return batch, true
		case o.finished:
			o.mu.Unlock()
			return nil, false
		}
		o.mu.Unlock()
		<-o.ready
	}
}

// close stops the outbox at once and discards what is queued. It reports
// whether this call closed it.
func (o *outbox) close() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return false
	}
	o.closed = true
	o.budget.Give(frameBytes(o.queue))
	o.queue, o.size = nil, 0
	o.wake()
	return true
}

// stopped reports whether the outbox was closed (by a failed write or a
// drop): the connection is as good as gone.
func (o *outbox) stopped() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closed
}

// finish refuses further pushes and lets the writer send what is queued,
// then stop.
func (o *outbox) finish() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.finished = true
	o.wake()
}

// writeLoop is the connection's writer goroutine, the only code that writes
// to its socket: it writes every frame queued since its last write with one
// writev (net.Buffers), each batch within timeout, until the outbox stops or a
// write fails. It reports whether it ended in order (finished, every frame
// written); its caller then closes the socket (endConn), which ends the
// reader too.
func (c *conn) writeLoop(timeout time.Duration) (inOrder bool) {
	var spare [][]byte
	for {
		batch, ok := c.out.take(spare)
		if !ok {
			return !c.out.stopped()
		}
		c.nc.SetWriteDeadline(time.Now().Add(timeout))
		n := frameBytes(batch) // before the write: WriteTo empties the slices
		bufs := net.Buffers(batch)
		_, err := bufs.WriteTo(c.nc)
		c.out.budget.Give(n) // written, or lost with the connection
		if err != nil {
			c.out.close()
			return false
		}
		clear(batch)
		spare = batch
	}
}

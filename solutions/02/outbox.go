package chat

import (
	"net"
	"sync"
	"time"
)

// outbox is the queue of encoded frames waiting to be written to one client.
//
// Many goroutines push (every client that broadcasts, and the client's own
// reader for replies); one goroutine, the client's writer, takes. The outbox
// is bounded in bytes. A push that finds it full waits for the writer to take
// what is queued, for up to a stall timeout: the goroutine that pushes is the
// sender's reader, so a burst is slowed to the pace of its slowest reader
// (its client's TCP window closes, and it waits), instead of overflowing the
// outboxes of readers that are merely behind. A receiver that takes nothing
// for the whole stall timeout is not reading at all; that push fails, and the
// caller drops it.
type outbox struct {
	limit int           // bytes the queue may hold
	ready chan struct{} // capacity 1: "something to take, or closed"

	mu      sync.Mutex
	queue   [][]byte      // frames not yet taken by the writer, oldest first
	size    int           // bytes in queue
	taken   chan struct{} // closed (and replaced) when the writer takes: wakes pushers waiting for room
	closed  bool          // no more pushes; take returns false once it sees it
	closing bool          // no more pushes; take returns what is queued, then false
}

func newOutbox(limit int) *outbox {
	return &outbox{limit: limit, ready: make(chan struct{}, 1), taken: make(chan struct{})}
}

// push queues frame b, waiting up to stall for room if the outbox is full. It
// reports false, and queues nothing, if the outbox is closed, or still full
// after stall.
//
// A frame always fits an empty outbox (New makes the limit at least one
// frame of the largest size), so a push waits only while frames are queued,
// and any take makes room.
//
// b is shared: a broadcast encodes its frame once and pushes the same slice
// to every receiver, so nobody may modify it.
func (o *outbox) push(b []byte, stall time.Duration) bool {
	w := roomWaiter{stall: stall}
	defer w.stop()
	for {
		o.mu.Lock()
		if o.closed || o.closing {
			o.mu.Unlock()
			return false
		}
		if o.size == 0 || o.size+len(b) <= o.limit {
			o.queue = append(o.queue, b)
			o.size += len(b)
			o.wake()
			o.mu.Unlock()
			return true
		}
		taken := o.taken
		o.mu.Unlock()
		if !w.wait(taken) {
			return false // took nothing for the whole stall timeout: not reading
		}
	}
}

// roomWaiter is one push's wait for room in a full outbox: however often the
// push finds the outbox full again, it waits stall in all, from its first wait.
type roomWaiter struct {
	stall time.Duration
	timer *time.Timer // started at the first wait
}

// wait waits, without holding the outbox's lock, until taken is closed (the
// writer took what was queued: there may be room now) and reports true, or
// until the push has waited stall in all, and reports false.
func (w *roomWaiter) wait(taken <-chan struct{}) bool {
	if w.timer == nil {
		w.timer = time.NewTimer(w.stall)
	}
	select {
	case <-taken:
		return true
	case <-w.timer.C:
		return false
	}
}

func (w *roomWaiter) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// wake tells the writer there is something to do. The channel has room for
// one signal; if one is pending already, the writer will see this push too.
func (o *outbox) wake() {
	select {
	case o.ready <- struct{}{}:
	default:
	}
}

// take waits until frames are queued and returns all of them, leaving spare
// (emptied) as the new queue, so that the writer and the pushers swap two
// slices instead of allocating one per batch. It returns false once the
// outbox is closed, or once it is finishing and empty.
func (o *outbox) take(spare [][]byte) ([][]byte, bool) {
	for {
		o.mu.Lock()
		if o.closed {
			o.mu.Unlock()
			return nil, false
		}
		if len(o.queue) > 0 {
			batch := o.queue
			o.queue, o.size = spare[:0], 0
			close(o.taken) // room for every pusher that waits
			o.taken = make(chan struct{})
			o.mu.Unlock()
			return batch, true
		}
		if o.closing {
			o.mu.Unlock()
			return nil, false
		}
		o.mu.Unlock()
		<-o.ready
	}
}

// finish stops pushes but lets the writer take what is queued: for a client
// that half-closed its connection, whose replies must still reach it.
func (o *outbox) finish() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closing = true
	o.wake()
}

// close stops the outbox: later pushes fail, take returns false, waiting
// pushers give up, and the queued frames are released. It reports whether
// this call closed it, so that what follows (a log line, say) happens once.
func (o *outbox) close() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return false
	}
	o.closed = true
	o.queue, o.size = nil, 0
	close(o.taken)
	o.taken = make(chan struct{})
	o.wake()
	return true
}

// client is one logged-in connection.
type client struct {
	name    string // the authenticated name: the sender of everything it sends
	conn    net.Conn
	out     *outbox
	written chan struct{} // closed when writeLoop returns
}

// writeLoop is the client's writer goroutine: the only code that writes to
// conn once the client is logged in, so frames never interleave. It takes
// every frame queued since its last write and writes them with one writev
// (net.Buffers), until the outbox is closed (or finished and empty) or a
// write fails.
//
// A failed write closes the connection: the client's reader then fails too,
// and its goroutine removes the client.
func (c *client) writeLoop() {
	defer close(c.written)
	var spare [][]byte
	for {
		batch, ok := c.out.take(spare)
		if !ok {
			return
		}
		bufs := net.Buffers(batch) // WriteTo consumes bufs, not batch's frames
		if _, err := bufs.WriteTo(c.conn); err != nil {
			c.conn.Close()
			return
		}
		clear(batch) // let the frames be collected
		spare = batch
	}
}

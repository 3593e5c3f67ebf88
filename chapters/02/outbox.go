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
	// TODO(ex 2.2): Done when: b is queued whole, in order, if the queue is
	// empty or b fits within o.limit bytes, and the writer is woken; otherwise
	// push waits for the writer to take the queue (o.taken) and tries again,
	// for as long as the roomWaiter allows (exercise 2.5), and reports false if
	// it gives up or the outbox closes. It never waits while holding o.mu: take
	// needs it. Checked by TestEx2_2_Broadcast.
	return false
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
	// TODO(ex 2.5): Done when: wait reports true as soon as the writer takes
	// the queue, and false once the receiver has taken nothing for the whole
	// stall timeout, measured from the first wait of this push (one timer for
	// all its waits, stopped by stop). Checked by TestEx2_5_Isolation. Until
	// then a full outbox refuses at once.
	return false
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
	// TODO(ex 2.2): Done when: the writer gets everything queued at once (the
	// spare slice reused as the new queue), the queue is empty and its size
	// zero, and every push waiting for room is woken (o.taken is closed and
	// renewed); an empty outbox makes take wait, without holding o.mu, for a
	// push; a closed outbox, or a closing one that is empty, reports false.
	// Checked by TestEx2_2_Broadcast.
	return nil, false
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
	// TODO(ex 2.2): Done when: the writer is the only code that writes to
	// c.conn: it writes each batch take gives with one system call for all its
	// frames, reuses the batch slice, and ends when the outbox is done or a
	// write fails (the connection is then closed, which ends its reader).
	// Checked by TestEx2_2_Broadcast.
}

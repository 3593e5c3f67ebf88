package chat

import (
	"net"
	"sync"
)

// outbox is the queue of encoded frames waiting to be written to one client.
//
// Many goroutines push (every client that broadcasts, and the client's own
// reader for replies); one goroutine, the client's writer, takes. A push
// never blocks: a broadcaster must not wait for a slow receiver. Instead the
// outbox is bounded in bytes, and a push that would overflow it fails: the
// client is not reading, and the caller drops it.
type outbox struct {
	limit int           // bytes the queue may hold
	ready chan struct{} // capacity 1: "something to take, or closed"

	mu     sync.Mutex
	queue  [][]byte // frames not yet taken by the writer, oldest first
	size   int      // bytes in queue
	closed bool     // no more pushes; take returns false once it sees it
}

func newOutbox(limit int) *outbox {
	return &outbox{limit: limit, ready: make(chan struct{}, 1)}
}

// push queues frame b. It reports false, and queues nothing, if the outbox is
// closed or b would take it over its limit.
//
// b is shared: a broadcast encodes its frame once and pushes the same slice
// to every receiver, so nobody may modify it.
func (o *outbox) push(b []byte) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.size+len(b) > o.limit {
		return false
	}
	o.queue = append(o.queue, b)
	o.size += len(b)
	o.wake()
	return true
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
// outbox is closed.
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
			o.mu.Unlock()
			return batch, true
		}
		o.mu.Unlock()
		<-o.ready
	}
}

// close stops the outbox: later pushes fail, take returns false, and the
// queued frames are released. It reports whether this call closed it, so
// that what follows (a log line, say) happens once.
func (o *outbox) close() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return false
	}
	o.closed = true
	o.queue, o.size = nil, 0
	o.wake()
	return true
}

// client is one logged-in connection.
type client struct {
	name string // the authenticated name: the sender of everything it sends
	conn net.Conn
	out  *outbox
}

// writeLoop is the client's writer goroutine: the only code that writes to
// conn once the client is logged in, so frames never interleave. It takes
// every frame queued since its last write and writes them with one writev
// (net.Buffers), until the outbox is closed or a write fails.
//
// A failed write closes the connection: the client's reader then fails too,
// and its goroutine removes the client.
func (c *client) writeLoop() {
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

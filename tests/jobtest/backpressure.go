package jobtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"serverlab/tests/testkit"
)

// smallBuffers is the socket buffer size the back-pressure check asks for on
// both ends (Linux doubles it), so that a few tens of kilobytes fill the
// connection once the server stops reading.
const smallBuffers = 4096

// listenSmall listens on 127.0.0.1:0 with a small receive buffer, which the
// accepted connections inherit.
func listenSmall(k *testkit.T) net.Listener {
	k.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) {
			err = testkit.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF, smallBuffers)
		}); cerr != nil {
			return cerr
		}
		return err
	}}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	return ln
}

// lineCounter is an OnLineRead hook: it counts the lines the server has read
// and reports when the count reaches a mark.
type lineCounter struct {
	n       atomic.Int64
	mark    int64
	reached chan struct{}
}

func newLineCounter(mark int64) *lineCounter {
	return &lineCounter{mark: mark, reached: make(chan struct{})}
}

func (c *lineCounter) onLineRead() {
	if c.n.Add(1) == c.mark {
		close(c.reached)
	}
}

// wait waits, up to IOTimeout, until the server has read mark lines.
func (c *lineCounter) wait(k *testkit.T, what string) {
	k.Helper()
	select {
	case <-c.reached:
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("%s: the server read %d lines within %v, want %d (is OnLineRead called for every line?)",
			what, c.n.Load(), testkit.IOTimeout, c.mark)
	}
}

// BackPressure checks exercise 3.5: when the queue is full, a reader stops
// reading, so a client that sends faster than the workers compute is held
// back by TCP flow control instead of filling the server's memory.
func BackPressure(t *testing.T, impl Impl) {
	k := testkit.New(t, "3.5")
	const workers, queueCap = 1, 2
	const bound = workers + queueCap + 1 // running, queued, and one waiting in Put
	h := newHolder(1)
	k.OnAbort(h.releaseAll)
	defer h.releaseAll()
	lines := newLineCounter(workers + queueCap)
	requireQueueAndPool(k, impl)
	raw, err := impl.NewServer(Config{Workers: workers, QueueCap: queueCap,
		OnJobStart: h.onJobStart, OnLineRead: lines.onLineRead})
	if err != nil {
		k.Fatalf("NewServer: %v", err)
	}
	srv := k.ServeListener(raw, listenSmall(k))
	c := k.Dial(srv)
	if tc, ok := c.NetConn().(*net.TCPConn); ok {
		tc.SetWriteBuffer(smallBuffers)
	}

	// One megabyte of requests, with job 1 held: the server can run one,
	// queue two and hold one more in Put, and must read no further.
	const line = "PRIME 7\n"
	flood := bytes.Repeat([]byte(line), (1<<20)/len(line))
	type result struct {
		n   int
		err error
	}
	wrote := make(chan result, 1)
	go func() {
		c.NetConn().SetWriteDeadline(time.Now().Add(time.Second))
		n, err := c.NetConn().Write(flood)
		wrote <- result{n, err}
	}()
	lines.wait(k, fmt.Sprintf("one client sending %d requests, the only worker held", len(flood)/len(line)))
	w := <-wrote // the write deadline bounds this wait
	if read := lines.n.Load(); read > bound {
		k.Fatalf("with its only worker held and its queue (capacity %d) full, the server read %d lines from a "+
			"client sending %d; want at most %d (one running, %d queued, one waiting in Put). "+
			"The reader must wait in Put before it reads the next line: no goroutine per job, no unbounded buffer",
			queueCap, read, len(flood)/len(line), bound, queueCap)
	}
	if w.err == nil {
		k.Fatalf("the client wrote all %d bytes of requests while the server's only worker was held: "+
			"the server kept reading; a full queue must stop the reader", len(flood))
	}

	// Released, the server reads and answers every whole line the client got
	// into the connection, and no more.
	h.releaseAll()
	sent := w.n / len(line)
	c.CloseWrite()
	seen := make([]bool, sent+1)
	for range sent {
		got := c.ReadLine()
		id, result, good := parseOK(got)
		if !good || result != "prime" || id < 1 || id > uint64(sent) || seen[id] {
			k.Fatalf("after the worker was released: want %d answers \"OK <id> prime\" with ids 1..%d, each once; got %q",
				sent, sent, got)
		}
		seen[id] = true
	}
	c.ExpectClosed()
}

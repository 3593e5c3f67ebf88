package jobtest

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"serverlab/tests/testkit"
)

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
	if c.n.Add(1) == c.mark && c.mark > 0 {
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
// back by TCP flow control instead of filling the server's memory; and when
// a client's unsent answers reach MaxPending, its reader stops too.
func BackPressure(t *testing.T, impl Impl) {
	k := testkit.New(t, "3.5")
	k.Run("full-queue", func(t *testing.T) { checkFullQueue(testkit.New(t, k.Exercise()), impl) })
	k.Run("full-outbox", func(t *testing.T) { checkFullOutbox(testkit.New(t, k.Exercise()), impl) })
	k.Run("outbox-bound-while-read", func(t *testing.T) { checkOutboxBoundWhileRead(testkit.New(t, k.Exercise()), impl) })
	k.Run("outbox-of-one", func(t *testing.T) { checkOutboxOfOne(testkit.New(t, k.Exercise()), impl) })
}

// checkOutboxOfOne: with MaxPending 1 the reader waits whenever an answer is
// waiting or being written, and goes on as soon as the writer has sent it.
// The client pipelines requests and reads nothing until the server has
// stopped reading (so its writer is stuck in a write), then reads: every
// request must be answered. A writer that leaves its count of bytes being
// written above zero after a write keeps the reader waiting for ever; with
// the default MaxPending that costs a byte of the bound and nobody sees it.
func checkOutboxOfOne(k *testkit.T, impl Impl) {
	k.Helper()
	const line, perWrite, writes = "PRIME 7\n", 512, 80
	const sent = perWrite * writes // 600 KiB of answers: far more than the sockets between hold
	_, srv := newServerOn(k, impl, Config{Workers: 2, QueueCap: 4, MaxPending: 1, WriteTimeout: time.Minute},
		k.ListenSmall())
	c := k.DialSmall(srv.Addr)
	var written atomic.Int64 // lines the client got into the connection
	done := make(chan struct{})
	go func() { // sends every line, then ends its side; the check ends it early by closing c
		defer close(done)
		chunk := bytes.Repeat([]byte(line), perWrite)
		c.SetWriteDeadline(time.Now().Add(testkit.WatchdogTimeout))
		for range writes {
			if _, err := c.Write(chunk); err != nil {
				return
			}
			written.Add(perWrite)
		}
		if tc, ok := c.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	}()
	k.Cleanup(func() { c.Close(); <-done })

	// Wait until the client's writes stall: the server has stopped reading.
	quiet := max(testkit.QuietWindow, testkit.IOTimeout/10)
	deadline := time.Now().Add(4 * testkit.IOTimeout)
	var stalled int64
	for last := int64(-1); ; {
		time.Sleep(quiet) // a window in which a reader that goes on shows itself
		now := written.Load()
		if now == sent {
			k.Fatalf("MaxPending 1: a client sent %d %q lines and read no answer; the server read them all: with "+
				"an answer waiting for the client, the reader must stop reading", sent, line)
		}
		if now == last {
			stalled = now
			break
		}
		if time.Now().After(deadline) {
			k.Fatalf("MaxPending 1: a client sent %q lines and read no answer; %v later the server was still "+
				"reading (%d lines sent): with an answer waiting for the client, the reader must stop", line,
				4*testkit.IOTimeout, now)
		}
		last = now
	}

	// The client reads at last: the writer's stuck write ends, and the
	// reader must go on until every line is answered.
	r := bufio.NewReader(c)
	for i := range sent {
		c.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
		got, err := r.ReadString('\n')
		if err != nil || !strings.HasSuffix(got, " prime\n") {
			k.Fatalf("MaxPending 1: a client sent %d %q lines, read nothing until the server had stopped reading "+
				"(%d lines were sent by then), then read the answers\n  want: answer %d of %d, \"OK <id> prime\"\n"+
				"   got: %q, %s\nhint: once the writer has written what was waiting, nothing is: set the count of "+
				"bytes being written back to 0 after each write and wake the reader (pending + writing is what "+
				"the reader compares with MaxPending), or a small MaxPending keeps it waiting for ever",
				sent, line, stalled, i+1, sent, got, testkit.Describe(err))
		}
	}
}

// stillAt waits until the server has read at least least lines and then
// stopped reading (the count holds for a quiet window, longer on a busy
// machine), and returns the count.
func stillAt(k *testkit.T, lines *lineCounter, least int, what string) int64 {
	k.Helper()
	quiet := max(testkit.QuietWindow, testkit.IOTimeout/10)
	start := time.Now()
	deadline := start.Add(4 * testkit.IOTimeout)
	last := lines.n.Load()
	for {
		time.Sleep(quiet) // a window in which a reader that goes on shows itself
		now := lines.n.Load()
		if now == last && now >= int64(least) {
			return now
		}
		// A server that has read nothing at all is not slow: it does not
		// serve (a 3.4 still to write). Say so now, not after the long
		// wait a busy machine's slow reader is given, which outlasts the
		// exercise's time limit and would read as a hang.
		if now == 0 && least > 0 && time.Since(start) > testkit.IOTimeout {
			k.Fatalf("%s: the server read no line within %v, want at least %d (OnLineRead is called for every "+
				"line read): is the server serving? (exercise 3.4)", what, testkit.IOTimeout, least)
		}
		if time.Now().After(deadline) {
			k.Fatalf("%s: %v later the server had read %d lines, want it to read at least %d and then stop: with "+
				"MaxPending of answers waiting, the reader must stop", what, 4*testkit.IOTimeout, now, least)
		}
		last = now
	}
}

// checkFullOutbox: a client that pipelines cheap requests and never reads
// the answers. The workers keep up, so the queue never fills: what must stop
// the reader is the client's outbox reaching MaxPending. Otherwise the
// answers pile up in the server's memory at the workers' speed.
func checkFullOutbox(k *testkit.T, impl Impl) {
	k.Helper()
	const maxPending = 4096
	const shortest = len("OK 1 prime\n")
	lines := newLineCounter(-1)
	_, srv := newServerOn(k, impl, Config{Workers: 2, QueueCap: 4, MaxPending: maxPending,
		OnLineRead: lines.onLineRead, WriteTimeout: time.Minute}, k.ListenSmall())
	mute := k.DialSmall(srv.Addr)
	// The client sends for as long as the server reads (a flood for a fixed
	// time would end before a slow server, say one whose every OnLineRead is
	// a call from the subject, had read past the bound), and the check waits
	// for the reader to stop.
	const flooded = 4 << 20 / len("PRIME 7\n")
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		mute.SetWriteDeadline(time.Now().Add(testkit.WatchdogTimeout))
		mute.Write(bytes.Repeat([]byte("PRIME 7\n"), flooded))
	}()
	k.Cleanup(func() { mute.Close(); <-wrote })
	bound := (maxPending+testkit.SmallAbsorption)/shortest + 4 + 2 + 1 // answers in the outbox and the kernel, queued, running, in Put
	read := int(stillAt(k, lines, maxPending/len("OK 9999999 prime\n"), "a client sent PRIME 7 lines and read no answer"))
	if read > bound {
		k.Fatalf("a client sent up to %d \"PRIME 7\" lines and read no answer; the server read %d of them, want at most %d: "+
			"with MaxPending %d bytes of answers waiting for it, the reader must stop reading until the writer has "+
			"sent them (the workers never wait, so only this keeps the answers from piling up in memory)",
			flooded, read, bound, maxPending)
	}
	// The client reads at last: every line it got in is answered.
	c := bufio.NewReader(mute)
	for i := range read {
		mute.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
		line, err := c.ReadString('\n')
		if err != nil || !strings.HasSuffix(line, " prime\n") {
			k.Fatalf("the client that had not read, reading at last: answer %d of %d: %q, %s", i+1, read, line, testkit.Describe(err))
		}
	}
}

// checkFullQueue: with the only worker held and the queue full, the reader
// waits in Put and reads no further.
func checkFullQueue(k *testkit.T, impl Impl) {
	k.Helper()
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
	srv := k.ServeListener(raw, k.ListenSmall())
	c := k.Dial(srv)
	if tc, ok := c.NetConn().(*net.TCPConn); ok {
		tc.SetWriteBuffer(testkit.SmallBuffers)
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

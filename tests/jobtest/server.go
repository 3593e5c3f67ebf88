package jobtest

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/jobs"
	"serverlab/tools/given/lab"
)

// newServer checks that the exercises the server is built from work, builds
// a server and serves it on a fresh port.
func newServer(k *testkit.T, impl Impl, cfg Config) (lab.Server, *testkit.Server) {
	k.Helper()
	requireQueueAndPool(k, impl)
	raw, err := impl.NewServer(cfg)
	if errors.Is(err, lab.ErrNotImplemented) {
		k.Fatalf("building the server needs an earlier exercise: %v", err)
	}
	if err != nil {
		k.Fatalf("NewServer(%+v): %v", cfg, err)
	}
	return raw, k.Serve(raw)
}

// requireQueueAndPool says which earlier exercise is missing, instead of
// letting a server without a queue or workers fail with a timeout.
func requireQueueAndPool(k *testkit.T, impl Impl) {
	k.Helper()
	var missing error
	inBubble(k, func(b bubble) {
		ran := false
		q, wait := impl.StartPool(1, 1, func(_, _ int) { ran = true })
		err := q.Put(1)
		q.Close()
		wait()
		switch {
		case err != nil:
			missing = fmt.Errorf("the bounded queue (3.2): Put: %w", err)
		case !ran:
			missing = errors.New("the worker pool (3.3): a queued item was never worked on")
		}
	})
	if missing != nil {
		k.Fatalf("the server needs an earlier exercise: %v", missing)
	}
}

// exchange is one request line and the result its answer must carry: the
// text after "OK <id> ", or after "ERROR <id> " when err is set.
type exchange struct {
	line   string
	result string
	err    bool
}

func ok(line, result string) exchange    { return exchange{line: line, result: result} }
func fail(line, message string) exchange { return exchange{line: line, result: message, err: true} }

// answer formats the answer to e when it takes job id.
func (e exchange) answer(id uint64) string {
	if e.err {
		return fmt.Sprintf("ERROR %d %s", id, e.result)
	}
	return fmt.Sprintf("OK %d %s", id, e.result)
}

// protocolExamples are the examples and test vectors of docs/protocols.md §2.
var protocolExamples = []exchange{
	ok("PRIME 10000019", "prime"),
	ok("PRIME 1", "composite"),
	ok("PRIME 2", "prime"),
	ok("PRIME 32416190071", "prime"),
	ok("PRIME 18446744073709551615", "composite"),
	ok("SORT 1", "sorted 1 checksum 0"),
	ok("SORT 2", "sorted 2 checksum -1811160619"),
	ok("SORT 1000", "sorted 1000 checksum -7404176"),
	ok("SORT 10000", "sorted 10000 checksum -90494"),
	ok("SORT 2000000", "sorted 2000000 checksum -4304"),
	ok("MATMUL 1", "matmul 1 checksum 3.000000"),
	ok("MATMUL 3", "matmul 3 checksum 9.000000"),
	ok("MATMUL 64", "matmul 64 checksum 192.000000"),
	ok("HASH hello world", "5577293430985752569"),
	ok("HASH a", "4993892634952068459"),
	ok("HASH ThreadForge", "2756856608899862579"),
	ok("HASH x y  z", "13417157620362267345"),
	ok("  PRIME 7", "prime"),
	ok("\tPRIME 7", "prime"),
	ok("\vPRIME 7", "prime"),
	ok("HASH\thello", "5073465729955206604"),
	fail("PRIME\t7", msgInvalidInteger),
	fail("PRIME -5", msgInvalidInteger),
	fail("PRIME +5", msgInvalidInteger),
	fail("PRIME 1x", msgInvalidInteger),
	fail("PRIME 5 ", msgInvalidInteger),
	fail("PRIME  5", msgInvalidInteger),
	fail("PRIME 0", msgOutOfRange),
	fail("SORT 2000001", msgOutOfRange),
	fail("MATMUL 513", msgOutOfRange),
	fail("PRIME 18446744073709551616", msgOutOfRange),
	// The largest prime below 2^64: past the CPU budget of
	// jobs.MaxPrimeDivisions (the original spends 8–28 s on it).
	fail("PRIME 18446744073709551557", msgOutOfRange),
	fail("PRIME", msgMissingArgument),
	fail("PRIME ", msgMissingArgument),
	fail("HASH", msgMissingArgument),
	fail("", msgUnsupported),
	fail("prime 7", msgUnsupported),
	fail("FOO 1", msgUnsupported),
}

// roundTrip sends line and expects its answer with job id.
func roundTrip(c *testkit.Conn, e exchange, id uint64) {
	c.WriteLine(e.line)
	c.ExpectLine(e.answer(id))
}

// Server checks exercise 3.4: the reader and writer goroutines, the shared
// job counter, answers out of order, whole lines on every connection, and
// the defences against hostile clients: a line that is too large, a PRIME
// that would cost seconds, a client that never reads its answers.
func Server(t *testing.T, impl Impl) {
	k := testkit.New(t, "3.4")
	run := func(name string, check func(k *testkit.T)) {
		k.Run(name, func(t *testing.T) { check(testkit.New(t, k.Exercise())) })
	}
	run("examples", func(k *testkit.T) {
		_, srv := newServer(k, impl, Config{Workers: 2, QueueCap: 8})
		checkExamples(k, srv)
	})
	run("too-large", func(k *testkit.T) { checkTooLarge(k, impl) })
	run("too-large-last-words", func(k *testkit.T) { checkTooLargeLastWords(k, impl) })
	run("seeded-requests", func(k *testkit.T) { checkSeededRequests(k, impl) })
	run("shared-counter", func(k *testkit.T) {
		_, srv := newServer(k, impl, Config{Workers: 2, QueueCap: 8})
		checkSharedCounter(k, srv)
		checkReaderPerClient(k, srv)
	})
	run("out-of-order", func(k *testkit.T) { checkOutOfOrder(k, impl) })
	run("whole-lines", func(k *testkit.T) { checkWholeLines(k, impl) })
	run("non-reader-stalls-no-one", func(k *testkit.T) { checkNonReaderStallsNoOne(k, impl) })
	run("non-reader-dropped", func(k *testkit.T) { checkNonReaderDropped(k, impl) })
	run("old-connection-kept", func(k *testkit.T) { checkOldConnectionKept(k, impl) })
	run("last-answers-sent", func(k *testkit.T) { checkLastAnswersSent(k, impl) })
	run("released", func(k *testkit.T) { checkReleased(k, impl) })
	run("zero-config", func(k *testkit.T) { checkZeroConfig(k, impl) })
	run("pool-shared-by-listeners", func(k *testkit.T) { checkPoolSharedByListeners(k, impl) })
	run("accepted-while-closing", func(k *testkit.T) { checkAcceptedWhileClosing(k, impl) })
}

// checkExamples: every example of the protocol, answered byte for byte, and
// every line, valid or not, takes the next job id.
func checkExamples(k *testkit.T, srv *testkit.Server) {
	k.Helper()
	c := k.Dial(srv)
	id := uint64(0)
	for _, e := range protocolExamples {
		id++
		roundTrip(c, e, id)
	}
	if !raceEnabled {
		// The largest jobs take seconds under -race on a loaded machine;
		// checkSeededRequests runs smaller ones of each kind there.
		id++
		roundTrip(c, ok("SORT 2000000", "sorted 2000000 checksum -4304"), id)
		id++
		roundTrip(c, ok("MATMUL 512", "matmul 512 checksum 1536.000000"), id)
	}
	// A trailing \r is stripped.
	id++
	c.Write([]byte("PRIME 7\r\n"), `"PRIME 7\r\n"`)
	c.ExpectLine(ok("", "prime").answer(id))
	// The longest line is served.
	text := strings.Repeat("t", jobs.MaxLine-len("HASH "))
	id++
	roundTrip(c, ok("HASH "+text, jobs.HashResult(jobs.Hash(text))), id)
}

// checkTooLarge: a line of more than jobs.MaxLine bytes before its '\n' is
// answered "request too large" as soon as its first MaxLine+1 bytes are in,
// without waiting for the rest, and then the server closes the connection
// (the rest of the line cannot be told from the next request). The answer
// arrives before the end of the stream: the server must not reset the
// connection under it.
func checkTooLarge(k *testkit.T, impl Impl) {
	k.Helper()
	_, srv := newServer(k, impl, Config{Workers: 2, QueueCap: 8})
	text := strings.Repeat("t", jobs.MaxLine-len("HASH "))
	cases := []struct {
		what  string
		bytes string
	}{
		{fmt.Sprintf("a %d-byte HASH line, then HASH still here", jobs.MaxLine+1), "HASH " + text + "u\nHASH still here\n"},
		{fmt.Sprintf("a %d-byte line ending in \\r\\n (the \\r counts)", jobs.MaxLine+1), "HASH " + text + "\r\n"},
		{"a 100000-byte line, then PRIME 7", strings.Repeat("z", 100_000) + "\nPRIME 7\n"},
		{fmt.Sprintf("%d bytes and no newline (yet)", jobs.MaxLine+1), strings.Repeat("w", jobs.MaxLine+1)},
	}
	// The workers run once a job has been answered: what starts after the
	// mark is the clients'. The warm-up client hangs up at once, because its
	// own writer may start after its answer (the answer can leave before the
	// go statement that starts the writer has run): open, it would still run
	// when the goroutines are counted.
	warm := k.Dial(srv)
	expectAnyID(k, warm, "HASH warm", ok("", jobs.HashResult(jobs.Hash("warm"))))
	warm.Close()
	mark := testkit.MarkGoroutines()
	for _, tc := range cases {
		c := k.Dial(srv)
		expectAnyID(k, c, "HASH first", ok("", jobs.HashResult(jobs.Hash("first"))))
		c.Write([]byte(tc.bytes), tc.what)
		got, err := c.TryReadLine()
		if err != nil || !strings.HasPrefix(got, "ERROR ") || !strings.HasSuffix(got, " "+msgTooLarge) {
			k.Fatalf("%s\n  want: \"ERROR <id> %s\" at once, then the connection closed\n   got: %q, %s%s",
				tc.what, msgTooLarge, got, testkit.Describe(err), c.Context())
		}
		c.ExpectClosed()
	}
	// Each client read its answer and the end of its stream, and keeps its
	// socket open, sending nothing more. The server's lingering (reading
	// what the client still sends, so that closing does not reset the
	// answer) is bounded in time: every goroutine of theirs must end.
	deadline := time.Now().Add(testkit.IOTimeout)
	for running := mark.ServerGoroutines(); running != ""; running = mark.ServerGoroutines() {
		if time.Now().After(deadline) {
			k.Fatalf("%d clients each sent a line too large, read the ERROR and the end of the stream, and kept their "+
				"sockets open; %v later the server still ran for them:\n%s\nhint: the linger after a too-large line "+
				"reads with a deadline (and a byte limit): a client that never closes must not hold a goroutine and "+
				"a socket for ever", len(cases), testkit.IOTimeout, running)
		}
		time.Sleep(20 * time.Millisecond) // between looks at the server's goroutines, which no event announces
	}
}

// expectAnyID sends line and expects the answer e with whatever id it took.
func expectAnyID(k *testkit.T, c *testkit.Conn, line string, e exchange) string {
	k.Helper()
	c.WriteLine(line)
	got := c.ReadLine()
	prefix, result := "OK ", e.result
	if e.err {
		prefix = "ERROR "
	}
	num, rest, found := strings.Cut(strings.TrimPrefix(got, prefix), " ")
	if _, err := strconv.ParseUint(num, 10, 64); !strings.HasPrefix(got, prefix) || !found || err != nil || rest != result {
		k.Fatalf("sent %q\n  want: %q\n   got: %q", line, prefix+"<id> "+result, got)
	}
	return got
}

// checkSeededRequests: requests drawn afresh each run (seeded, so a failure
// can be replayed), answered as the given code in tools/given/jobs computes them.
func checkSeededRequests(k *testkit.T, impl Impl) {
	k.Helper()
	_, srv := newServer(k, impl, Config{Workers: 2, QueueCap: 8})
	rng := k.Rand()
	c := k.Dial(srv)
	var s jobs.Scratch
	for range 40 {
		var line, result string
		switch rng.IntN(4) {
		case 0:
			n := 1 + rng.Uint64N(1<<40)
			line, result = fmt.Sprintf("PRIME %d", n), jobs.PrimeResult(jobs.Prime(n))
		case 1:
			n := 1 + rng.IntN(50_000)
			line, result = fmt.Sprintf("SORT %d", n), jobs.SortResult(n, s.Sort(n))
		case 2:
			n := 1 + rng.IntN(48)
			line, result = fmt.Sprintf("MATMUL %d", n), jobs.MatMulResult(n, s.MatMul(n))
		default:
			b := make([]byte, 1+rng.IntN(64))
			for i := range b {
				b[i] = byte(' ' + rng.IntN(95))
			}
			line, result = "HASH "+string(b), jobs.HashResult(jobs.Hash(string(b)))
		}
		expectAnyID(k, c, line, ok("", result))
	}
}

// checkSharedCounter: ids come from one counter for the whole server, not one
// per connection.
func checkSharedCounter(k *testkit.T, srv *testkit.Server) {
	k.Helper()
	a, b := k.Dial(srv), k.Dial(srv)
	roundTrip(a, ok("HASH a", "4993892634952068459"), 1)
	roundTrip(b, ok("PRIME 7", "prime"), 2)
	roundTrip(b, fail("PRIME 0", msgOutOfRange), 3)
	roundTrip(a, fail("", msgUnsupported), 4)
	roundTrip(a, ok("PRIME 9", "composite"), 5)
	roundTrip(b, ok("MATMUL 3", "matmul 3 checksum 9.000000"), 6)
}

// checkReaderPerClient: a client in the middle of a line does not hold up
// the others: each connection has its own reader.
func checkReaderPerClient(k *testkit.T, srv *testkit.Server) {
	k.Helper()
	slow := k.Dial(srv)
	slow.Write([]byte("HASH par"), `"HASH par" (no newline yet)`)
	other := k.Dial(srv)
	other.WriteLine("PRIME 7")
	line := other.ReadLine()
	if !strings.HasSuffix(line, " prime") || !strings.HasPrefix(line, "OK ") {
		k.Fatalf("one client has sent half a line; another sent \"PRIME 7\"\n  want: \"OK <id> prime\"\n   got: %q", line)
	}
	slow.Write([]byte("tial\n"), `"tial\n"`)
	line = slow.ReadLine()
	if want := " " + jobs.HashResult(jobs.Hash("partial")); !strings.HasSuffix(line, want) {
		k.Fatalf("a line sent in two pieces, \"HASH par\" and \"tial\\n\"\n  want: \"OK <id>%s\"\n   got: %q", want, line)
	}
}

// holder is an OnJobStart hook that holds chosen jobs until released.
type holder struct {
	mu      sync.Mutex
	hold    map[uint64]chan struct{}
	started chan uint64 // every job id, as its worker starts it
	once    sync.Once
}

func newHolder(ids ...uint64) *holder {
	h := &holder{hold: map[uint64]chan struct{}{}, started: make(chan uint64, 1<<16)}
	for _, id := range ids {
		h.hold[id] = make(chan struct{})
	}
	return h
}

func (h *holder) onJobStart(id uint64) {
	select {
	case h.started <- id:
	default: // never block a worker on the check's bookkeeping
	}
	h.mu.Lock()
	ch := h.hold[id]
	h.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// releaseAll lets every held job go; safe to call more than once.
func (h *holder) releaseAll() {
	h.once.Do(func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, ch := range h.hold {
			close(ch)
		}
	})
}

// checkOutOfOrder: with job 1 held, job 2 of the same client is answered
// first; answers come when they are ready, not in request order.
func checkOutOfOrder(k *testkit.T, impl Impl) {
	k.Helper()
	h := newHolder(1)
	k.OnAbort(h.releaseAll)
	defer h.releaseAll()
	_, srv := newServer(k, impl, Config{Workers: 2, QueueCap: 8, OnJobStart: h.onJobStart})
	c := k.Dial(srv)
	c.Write([]byte("HASH first\nHASH second\n"), `"HASH first\nHASH second\n" (job 1 is held in OnJobStart)`)
	c.ExpectLine(ok("", jobs.HashResult(jobs.Hash("second"))).answer(2))
	h.releaseAll()
	c.ExpectLine(ok("", jobs.HashResult(jobs.Hash("first"))).answer(1))
}

// checkWholeLines: four workers answering one client at once never
// interleave their lines, and every request is answered exactly once.
func checkWholeLines(k *testkit.T, impl Impl) {
	k.Helper()
	const clients, perClient = 4, 600
	_, srv := newServer(k, impl, Config{Workers: 4, QueueCap: 16})
	type reply struct {
		lines []string
		err   error
	}
	replies := make([]reply, clients)
	var wg sync.WaitGroup
	for i := range clients {
		c := k.Dial(srv)
		var req strings.Builder
		for j := range perClient {
			fmt.Fprintf(&req, "HASH c%d-%d\n", i, j)
		}
		wg.Go(func() {
			if err := c.TryWrite([]byte(req.String()), fmt.Sprintf("%d HASH lines", perClient)); err != nil {
				replies[i].err = err
			}
		})
		wg.Go(func() {
			for range perClient {
				line, err := c.TryReadLine()
				if err != nil {
					replies[i].err = fmt.Errorf("after %d answers: %s", len(replies[i].lines), testkit.Describe(err))
					return
				}
				replies[i].lines = append(replies[i].lines, line)
			}
		})
	}
	wg.Wait()
	seen := map[uint64]bool{}
	for i, r := range replies {
		if r.err != nil {
			k.Fatalf("client %d of %d, each sending %d HASH lines at once: %v", i+1, clients, perClient, r.err)
		}
		// A client's lines are read in order, so the n-th smallest id of its
		// answers is its n-th line.
		byID := map[uint64]string{}
		for _, line := range r.lines {
			id, result, good := parseOK(line)
			if !good || seen[id] || byID[id] != "" {
				k.Fatalf("client %d: malformed or repeated answer %q: answers must be whole lines "+
					"(one Write per line, under the connection's mutex), each id once", i+1, line)
			}
			seen[id] = true
			byID[id] = result
		}
		ids := slices.Sorted(maps.Keys(byID))
		for j, id := range ids {
			text := fmt.Sprintf("c%d-%d", i, j)
			if want := jobs.HashResult(jobs.Hash(text)); byID[id] != want {
				k.Fatalf("client %d: the answer with id %d (its line %d, \"HASH %s\") is %q, want %q",
					i+1, id, j+1, text, byID[id], want)
			}
		}
	}
}

// parseOK splits "OK <id> <result>".
func parseOK(line string) (id uint64, result string, ok bool) {
	rest, found := strings.CutPrefix(line, "OK ")
	if !found {
		return 0, "", false
	}
	num, result, found := strings.Cut(rest, " ")
	id, err := strconv.ParseUint(num, 10, 64)
	return id, result, found && err == nil && result != ""
}

// newServerOn is newServer on a listener the check made (listenSmall).
func newServerOn(k *testkit.T, impl Impl, cfg Config, ln net.Listener) (lab.Server, *testkit.Server) {
	k.Helper()
	requireQueueAndPool(k, impl)
	raw, err := impl.NewServer(cfg)
	if err != nil {
		ln.Close()
		k.Fatalf("NewServer(%+v): %v", cfg, err)
	}
	return raw, k.ServeListener(raw, ln)
}

// flood writes copies of line to nc for up to d, or until the write fails,
// and returns how many whole lines went out and the write's error. A server
// that stops reading makes it end with a timeout.
func flood(nc net.Conn, line string, size int, d time.Duration) (lines int, err error) {
	nc.SetWriteDeadline(time.Now().Add(d))
	n, err := nc.Write(bytes.Repeat([]byte(line), size/len(line)))
	return n / len(line), err
}

// checkNonReaderStallsNoOne: a client that pipelines requests and never
// reads its answers fills its socket; the server must go on answering
// everyone else at once. A worker that writes to the socket itself (and
// waits there, holding the connection's lock, while other workers wait for
// that lock) would leave no worker for anyone: the write timeout is set to a
// minute, so such a server fails here.
func checkNonReaderStallsNoOne(k *testkit.T, impl Impl) {
	k.Helper()
	_, srv := newServerOn(k, impl, Config{Workers: 2, QueueCap: 8, WriteTimeout: time.Minute}, k.ListenSmall())
	mute := k.DialSmall(srv.Addr)
	// SORT 1000 takes the workers longer than the reader takes to queue it:
	// the queue is full of this client's jobs when its socket fills.
	sent, err := flood(mute, "SORT 1000\n", 4<<20, time.Second)
	if err == nil {
		k.Fatalf("a client that never reads sent %d requests and the server read them all: it must stop reading "+
			"from a client whose answers pile up (exercise 3.5)", sent)
	}
	other := k.Dial(srv)
	other.WriteLine("PRIME 7")
	got, err := other.TryReadLine()
	if err != nil || !strings.HasPrefix(got, "OK ") || !strings.HasSuffix(got, " prime") {
		k.Fatalf("a client sent %d \"SORT 1000\" lines and read none of the answers; then another client sent \"PRIME 7\"\n"+
			"  want: \"OK <id> prime\" at once\n   got: %q, %s\n"+
			"hint: a worker must never wait for a client: it hands the answer to the connection's writer "+
			"goroutine (an outbox) and goes back to the queue; and never hold a lock across a blocking Write",
			sent, got, testkit.Describe(err))
	}
}

// checkNonReaderDropped: a client whose answers cannot be written within
// WriteTimeout is disconnected, so that it cannot hold its goroutines, its
// jobs' answers and Close forever.
func checkNonReaderDropped(k *testkit.T, impl Impl) {
	k.Helper()
	const timeout = 300 * time.Millisecond
	_, srv := newServerOn(k, impl, Config{Workers: 2, QueueCap: 8, WriteTimeout: timeout}, k.ListenSmall())
	mute := k.DialSmall(srv.Addr)
	start := time.Now()
	sent, err := flood(mute, "HASH a\n", 64<<20, testkit.IOTimeout)
	if !testkit.IsClosed(err) {
		k.Fatalf("a client sent %d HASH lines and read no answer, with WriteTimeout %v: want the server to close "+
			"the connection once a write has made no progress for WriteTimeout; the client's write ended with %s "+
			"after %v\nhint: set a write deadline before every Write (SetWriteDeadline), and close the "+
			"connection when it expires", sent, timeout, testkit.Describe(err), time.Since(start).Round(time.Millisecond))
	}
}

// checkOldConnectionKept: WriteTimeout bounds each write, not the
// connection's life. A client connected for longer than WriteTimeout that
// reads its answers is served: a deadline set once per connection (or once
// per client, never renewed) fails every write after it, and drops a client
// that did nothing wrong the first time it is answered late in its life.
func checkOldConnectionKept(k *testkit.T, impl Impl) {
	k.Helper()
	const timeout = 200 * time.Millisecond
	_, srv := newServer(k, impl, Config{Workers: 2, QueueCap: 8, WriteTimeout: timeout})
	c := k.Dial(srv)
	roundTrip(c, ok("HASH a", jobs.HashResult(jobs.Hash("a"))), 1)
	// The scenario, not synchronisation: the connection grows older than
	// WriteTimeout while the client is quiet.
	time.Sleep(3 * timeout)
	c.Write([]byte("HASH b\n"), "HASH b, "+(3*timeout).String()+" after the first answer")
	got, err := c.TryReadLine()
	if want := ok("", jobs.HashResult(jobs.Hash("b"))).answer(2); err != nil || got != want {
		k.Fatalf("a client that reads its answers sent HASH b %v after its first request (WriteTimeout is %v)\n"+
			"  want: %q\n   got: %q (%s)\nhint: WriteTimeout bounds each write: set the write deadline before "+
			"every Write (SetWriteDeadline(time.Now().Add(WriteTimeout))), not once for the connection",
			3*timeout, timeout, want, got, testkit.Describe(err))
	}
}

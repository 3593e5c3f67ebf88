package jobtest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tools/jobs"
	"serverlab/tools/lab"
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
	fail("PRIME -5", msgInvalidInteger),
	fail("PRIME +5", msgInvalidInteger),
	fail("PRIME 1x", msgInvalidInteger),
	fail("PRIME 5 ", msgInvalidInteger),
	fail("PRIME  5", msgInvalidInteger),
	fail("PRIME 0", msgOutOfRange),
	fail("SORT 2000001", msgOutOfRange),
	fail("MATMUL 513", msgOutOfRange),
	fail("PRIME 18446744073709551616", msgOutOfRange),
	fail("PRIME", msgMissingArgument),
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

// Server checks exercise 3.4: the reader goroutines, the shared job counter,
// answers out of order, and whole lines on every connection.
func Server(t *testing.T, impl Impl) {
	k := testkit.New(t, "3.4")
	_, srv := newServer(k, impl, Config{Workers: 2, QueueCap: 8})
	checkExamples(k, srv)

	_, srv = newServer(k, impl, Config{Workers: 2, QueueCap: 8})
	checkSharedCounter(k, srv)
	checkReaderPerClient(k, srv)

	checkOutOfOrder(k, impl)
	checkWholeLines(k, impl)
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
		id++
		roundTrip(c, ok("MATMUL 512", "matmul 512 checksum 1536.000000"), id)
	}
	// A trailing \r is stripped.
	id++
	c.Write([]byte("PRIME 7\r\n"), `"PRIME 7\r\n"`)
	c.ExpectLine(ok("", "prime").answer(id))
	// The longest line is served; one byte more is too large, and the
	// connection stays usable.
	text := strings.Repeat("t", jobs.MaxLine-len("HASH "))
	id++
	roundTrip(c, ok("HASH "+text, jobs.HashResult(jobs.Hash(text))), id)
	id++
	c.Write([]byte("HASH "+text+"u\n"), fmt.Sprintf("a %d-byte HASH line", jobs.MaxLine+1))
	c.ExpectLine(fail("", msgTooLarge).answer(id))
	id++
	c.Write([]byte(strings.Repeat("z", 100_000)+"\n"), "a 100000-byte line")
	c.ExpectLine(fail("", msgTooLarge).answer(id))
	id++
	roundTrip(c, ok("HASH still here", jobs.HashResult(jobs.Hash("still here"))), id)
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
	h.started <- id
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

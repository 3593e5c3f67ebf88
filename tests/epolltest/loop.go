//go:build linux

package epolltest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/wire"
)

// barrier makes a round trip on c, a logged-in chat client: a QUERY_USER and
// its answer. The loop is one goroutine and epoll is level-triggered: once
// the answer is back, every connection that was readable before the query
// was sent has been read. Frames other clients send c meanwhile are
// returned.
func barrier(k *testkit.T, c *testkit.Conn) []wire.Frame {
	k.Helper()
	c.SendFrame(wire.Frame{Type: wire.QueryUser, Sender: "bob"})
	var others []wire.Frame
	for {
		f := c.ReadFrame()
		if f.Type == wire.QueryUser && f.Sender == wire.ServerName {
			return others
		}
		others = append(others, f)
	}
}

// Leftovers checks exercise 5.3: a frame that arrives over several reads is
// put together from the connection's leftovers. Each piece is read by the
// server on its own (a round trip on another connection in between makes
// sure of that), and that other connection's request lands in the loop's
// shared read buffer: a server that keeps leftovers as a slice of the shared
// buffer instead of a copy sees them overwritten.
func Leftovers(t *testing.T, impl Impl) {
	k := testkit.New(t, "5.3")
	linuxOnly(k)
	k.Run("split-frames", func(t *testing.T) { checkSplitFrames(testkit.New(t, k.Exercise()), impl) })
	k.Run("idle-holds-no-buffer", func(t *testing.T) { checkIdleHoldsNoBuffer(testkit.New(t, k.Exercise()), impl) })
}

// checkSplitFrames: a login and three broadcasts in 23 pieces, each read on
// its own, with another client's request in the shared buffer in between.
func checkSplitFrames(k *testkit.T, impl Impl) {
	k.Helper()
	srv := newChat(k, impl, Limits{}, "alice", "bob")
	bob := login(k, srv, "bob")
	alice := k.Dial(srv)

	long := bytes.Repeat([]byte("0123456789abcdef"), 300)
	msgs := []wire.Frame{
		{Type: wire.Broadcast, Sender: "alice", Target: "ALL", Payload: []byte("first, cut in its header")},
		{Type: wire.Broadcast, Sender: "alice", Target: "ALL", Payload: long},
		{Type: wire.Broadcast, Sender: "alice", Target: "ALL", Payload: []byte("third, glued to the second")},
	}
	stream := testkit.Encode(wire.Frame{Type: wire.Login, Sender: "alice", Payload: []byte(password("alice"))})
	for _, m := range msgs {
		stream = append(stream, testkit.Encode(m)...)
	}
	login := wire.HeaderSize + len(password("alice"))
	cuts := []int{1, 4, 8, 39, 71, 72, login - 1, login + 3, login + 80, login + 200, login + 1000, len(stream) - 10}
	rng := rand.New(rand.NewPCG(5, 3))
	for range 10 {
		cuts = append(cuts, login+rng.IntN(len(stream)-login))
	}
	pieces := split(stream, cuts)

	var got []wire.Frame
	for i, p := range pieces {
		alice.Write(p, fmt.Sprintf("piece %d of %d (bytes %d…%d of the stream)", i+1, len(pieces), offset(pieces, i), offset(pieces, i)+len(p)))
		got = append(got, barrier(k, bob)...)
	}
	alice.ExpectFrame(loginOK("alice"))
	for len(got) < len(msgs) {
		got = append(got, bob.ReadFrame())
	}
	for i, want := range msgs {
		if d := testkit.FrameDiff(want, got[i]); d != "" {
			k.Fatalf("alice sent a login and %d broadcasts in %d pieces, each read on its own; broadcast %d "+
				"reached bob wrong (%s)\n  want: %.120v\n   got: %.120v\nhint: copy the bytes a handler leaves "+
				"into the connection's own buffer: the shared read buffer is overwritten by the next read%s",
				len(msgs), len(pieces), i+1, d, want, got[i], alice.Context())
		}
	}
}

// split cuts b at the given offsets (in any order; out-of-range ones are
// ignored).
func split(b []byte, cuts []int) [][]byte {
	at := map[int]bool{}
	for _, c := range cuts {
		if c > 0 && c < len(b) {
			at[c] = true
		}
	}
	var pieces [][]byte
	start := 0
	for i := 1; i < len(b); i++ {
		if at[i] {
			pieces = append(pieces, b[start:i])
			start = i
		}
	}
	return append(pieces, b[start:])
}

func offset(pieces [][]byte, i int) int {
	n := 0
	for _, p := range pieces[:i] {
		n += len(p)
	}
	return n
}

// stocks is the stock file of the stock checks: stock 1 has plenty to buy.
var stocks = []string{"5 10 500", "1 100000000 100", "8 30 800", "3 7 300"}

// PartialWrites checks exercise 5.4: replies the socket does not take at
// once are kept and sent when epoll says the socket is writable, without
// holding up anyone else. One client pipelines far more `show` requests than
// the kernel's buffers hold and does not read; another client must still be
// answered at once; then the first reads every reply, whole and in order.
func PartialWrites(t *testing.T, impl Impl) {
	k := testkit.New(t, "5.4")
	linuxOnly(k)
	// Small socket buffers on the server's side: its socket fills after a
	// few replies, in the first batch already, so that a loop that waits for
	// the socket makes the other client wait.
	srv := newStockOn(k, impl, Limits{}, listenSmall(k), stocks...)
	probe := k.Dial(srv)
	probe.WriteLine("show")
	want, err := readRecord(probe)
	if err != nil {
		k.Fatalf("show on a fresh connection: %s%s", testkit.Describe(err), probe.Context())
	}

	n := 2*testkit.KernelBuffers()/recordSize + 64
	c := k.Dial(srv)
	c.Write([]byte(strings.Repeat("show\n", n)), fmt.Sprintf("%d × \"show\\n\" in one write (%d bytes of replies)", n, n*recordSize))
	other := k.Dial(srv)
	other.WriteLine("show")
	if got, err := readRecord(other); err != nil || got != want {
		k.Fatalf("while a client that does not read has %d replies waiting, another client's show got %q, %s\n"+
			"hint: Write must never wait for a socket: keep what write(2) did not take, arm EPOLLOUT, and "+
			"go back to epoll_wait", n, got, testkit.Describe(err))
	}
	for i := range n {
		got, err := readRecord(c)
		if err != nil {
			k.Fatalf("reply %d of %d: %s\nhint: when write(2) takes only part of a reply, keep the rest and "+
				"send it when epoll reports EPOLLOUT; when all is sent, hand the handler the requests it left "+
				"waiting%s", i+1, n, testkit.Describe(err), c.Context())
		}
		if got != want {
			k.Fatalf("reply %d of %d differs from the show reply (bytes lost or reordered in a partial write?)\n"+
				"  want: %q\n   got: %q", i+1, n, want, got)
		}
	}
}

// BackPressure checks exercise 5.5: a connection's unsent output is bounded.
// A client that pipelines requests without reading is not read from while
// its output is over the high-water mark (and is read again once it reads);
// a client that does not read what others send it is disconnected past
// MaxPending, and the others do not notice.
func BackPressure(t *testing.T, impl Impl) {
	k := testkit.New(t, "5.5")
	linuxOnly(k)
	absorb := testkit.KernelBuffers()
	k.Run("stops-reading", func(t *testing.T) { checkStopsReading(testkit.New(t, k.Exercise()), impl, absorb) })
	k.Run("slow-consumer", func(t *testing.T) { checkSlowConsumer(testkit.New(t, k.Exercise()), impl, absorb) })
	k.Run("slow-consumers-memory", func(t *testing.T) { checkSlowConsumersMemory(testkit.New(t, k.Exercise()), impl) })
}

func checkStopsReading(k *testkit.T, impl Impl, absorb int) {
	k.Helper()
	const highWater = 64 << 10
	srv := newStock(k, impl, Limits{HighWater: highWater, MaxPending: 1 << 30}, stocks...)
	probe := k.Dial(srv)
	start := countOf(k, probe, 1)

	const n = 4096 // 32 KiB of requests: one read; 32 MiB of replies
	c := k.Dial(srv)
	c.Write([]byte(strings.Repeat("buy 1 1\n", n)), fmt.Sprintf("%d × \"buy 1 1\\n\" in one write", n))
	// The loop read c's requests before it read the probe's (they arrived
	// first, and epoll is level-triggered), so the probe's show tells how many
	// it served before it stopped.
	done := start - countOf(k, probe, 1)
	bound := (2*absorb+highWater)/recordSize + 2
	if done > bound {
		k.Fatalf("a client sent %d buys in one write and read no reply: the server served %d of them before "+
			"answering another client, queueing %d KiB of replies; with HighWater %d KiB and %d KiB of kernel "+
			"buffers it should have stopped reading after about %d\nhint: in the handler, stop draining when "+
			"the connection is congested; in the loop, take EPOLLIN off while output is over HighWater",
			n, done, done*recordSize>>10, highWater>>10, absorb>>10, bound)
	}
	for i := range n {
		got, err := readRecord(c)
		if err != nil {
			k.Fatalf("reply %d of %d: %s\nhint: once the output is sent, take up reading again, starting with "+
				"the requests the handler left in the connection's buffer%s", i+1, n, testkit.Describe(err), c.Context())
		}
		if got != "[buy]success\n" {
			k.Fatalf("reply %d of %d: want %q, got %q", i+1, n, "[buy]success\n", got)
		}
	}
	if got := countOf(k, probe, 1); got != start-n {
		k.Fatalf("after %d buys of 1, all answered, stock 1 has %d; want %d", n, got, start-n)
	}
}

func checkSlowConsumer(k *testkit.T, impl Impl, absorb int) {
	k.Helper()
	const maxPending = 1 << 20
	const size = 60000
	srv := newChat(k, impl, Limits{HighWater: 64 << 10, MaxPending: maxPending}, "alice", "bob", "slow")
	alice := login(k, srv, "alice")
	bob := login(k, srv, "bob")
	slow := login(k, srv, "slow")

	n := (2*absorb+maxPending)/size + 20
	payload := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, size) }
	bobDone := make(chan error, 1)
	go func() {
		for i := range n {
			f, err := bob.TryReadFrame()
			if err != nil {
				bobDone <- fmt.Errorf("broadcast %d of %d: %s", i+1, n, testkit.Describe(err))
				return
			}
			if f.Type != wire.Broadcast || f.Sender != "alice" || !bytes.Equal(f.Payload, payload(i)) {
				bobDone <- fmt.Errorf("broadcast %d of %d: got %.80v", i+1, n, f)
				return
			}
		}
		bobDone <- nil
	}()
	for i := range n {
		alice.SendFrame(wire.Frame{Type: wire.Broadcast, Sender: "alice", Payload: payload(i)})
	}
	if err := <-bobDone; err != nil {
		k.Fatalf("alice broadcast %d messages of %d bytes; bob, who reads, got: %v\n"+
			"hint: a client that does not read (here: slow) must not hold up the others", n, size, err)
	}

	received := 0
	for received < n {
		f, err := slow.TryReadFrame()
		if testkit.IsClosed(err) || errors.Is(err, io.ErrUnexpectedEOF) {
			break // closed, maybe in the middle of a frame
		}
		if err != nil {
			k.Fatalf("slow, reading what was queued for it: %s", testkit.Describe(err))
		}
		if f.Type == wire.Broadcast {
			received++
		}
	}
	if received == n {
		k.Fatalf("slow read nothing while alice broadcast %d messages (%d KiB), and then got every one: the "+
			"server queued them all (over %d KiB beyond the kernel's buffers) for a client that did not read; "+
			"want it disconnected once its unsent output passes MaxPending (%d KiB)\nhint: in Write, close the "+
			"connection when its pending output would pass MaxPending",
			n, n*size>>10, (n*size-absorb)>>10, maxPending>>10)
	}
	alice.SendFrame(wire.Frame{Type: wire.QueryUser, Sender: "alice"})
	want := "alice | active: 1\nbob | active: 1\nslow | active: 0\n"
	alice.ExpectFrame(wire.Frame{Type: wire.QueryUser, Sender: wire.ServerName, Target: "alice", Payload: []byte(want)})
}

// NoBusyLoop checks exercise 5.6: with 1000 clients connected and nothing to
// do, the loop sleeps in epoll_wait. A zero timeout, or EPOLLOUT left armed
// after the output is sent (a level-triggered socket is always writable),
// turns it into a busy loop that burns a whole core. And it wakes up in time
// for its timers: a client that does not log in is closed after the login
// timeout, though nothing happens on any socket.
func NoBusyLoop(t *testing.T, impl Impl) {
	k := testkit.New(t, "5.6")
	linuxOnly(k)
	k.Run("login-timeout", func(t *testing.T) { checkTimer(testkit.New(t, k.Exercise()), impl) })
	k.Run("timers-rounded-up", func(t *testing.T) { checkTimersRoundedUp(testkit.New(t, k.Exercise()), impl) })
	k.Run("idle", func(t *testing.T) { checkIdle(testkit.New(t, k.Exercise()), impl) })
}

// checkTimersRoundedUp: many timers a fraction of a millisecond apart (the
// login timeouts of clients that connected one after another). A loop that
// rounds the time to its next timer down sleeps 0 ms for the last fraction
// of a millisecond before each, and spins: with timers due a fraction of a
// millisecond apart it spins all the time they take to fire. Rounded up, it wakes once per
// millisecond at most.
func checkTimersRoundedUp(k *testkit.T, impl Impl) {
	k.Helper()
	const clients, timeout = 1000, 500 * time.Millisecond
	needFDs(k, 2*clients+100)
	srv := newChatConfig(k, impl, ChatConfig{LoginTimeout: timeout}, "alice")
	var conns []*testkit.Conn
	for range clients {
		conns = append(conns, k.Dial(srv)) // one after another: their timers a fraction of a millisecond apart
	}
	var start time.Time
	var cpu0 time.Duration
	for i, c := range conns {
		c.NetConn().SetReadDeadline(time.Now().Add(testkit.IOTimeout + timeout))
		if _, err := c.NetConn().Read(make([]byte, 1)); !testkit.IsClosed(err) {
			k.Fatalf("client %d of %d connected and sent nothing, with the login timeout at %v: want the server to "+
				"close the connection, got %s", i+1, clients, timeout, testkit.Describe(err))
		}
		if i == 0 { // the timers have begun to fire: measure until the last
			start, cpu0 = time.Now(), cpuTime()
		}
	}
	wall, cpu := time.Since(start), cpuTime()-cpu0
	share := cpu.Seconds() / wall.Seconds()
	k.Logf("%d login timeouts fired in %v, using %v of CPU (%.0f%% of a core)", clients,
		wall.Round(time.Millisecond), cpu.Round(time.Millisecond), share*100)
	// Closing a connection costs the correct loop (and the test reading its
	// end) about a fifth of the time between two timers here; spinning, the
	// loop takes all it can get.
	const maxTimerCPU = 0.45
	if share > maxTimerCPU {
		k.Fatalf("%d login timeouts, due a fraction of a millisecond apart: while they fired, the test process used %.0f%% of a core "+
			"(%v of CPU in %v)\nhint: round the time to the next timer up to a millisecond, never down: "+
			"rounded down, the last fraction of a millisecond before each timer is a zero timeout, and the loop "+
			"spins until it is due", clients, share*100, cpu.Round(time.Millisecond), wall.Round(time.Millisecond))
	}
}

// checkIdle: 1000 idle clients, after output that needed EPOLLOUT, cost
// next to no CPU.
func checkIdle(k *testkit.T, impl Impl) {
	k.Helper()
	const clients = 1000
	needFDs(k, 2*clients+100)
	// A chat server with its only client logged in has no timer pending: its
	// loop must sleep with timeout -1. (The stock server below always has
	// its write-back timer while clients are connected.)
	chat := newChat(k, impl, Limits{}, "alice")
	login(k, chat, "alice")
	srv := newStock(k, impl, Limits{}, stocks...)
	var conns []*testkit.Conn
	for range clients {
		conns = append(conns, k.Dial(srv))
	}
	// A round trip on the last connection: the loop has accepted them all.
	last := conns[clients-1]
	last.WriteLine("show")
	if _, err := readRecord(last); err != nil {
		k.Fatalf("show: %s%s", testkit.Describe(err), last.Context())
	}
	// One client gets more output than the kernel takes at once, so that the
	// loop arms EPOLLOUT, and then reads it all.
	n := 2*testkit.KernelBuffers()/recordSize + 16
	c := conns[0]
	c.Write([]byte(strings.Repeat("show\n", n)), fmt.Sprintf("%d × \"show\\n\"", n))
	for i := range n {
		if _, err := readRecord(c); err != nil {
			k.Fatalf("reply %d of %d to pipelined shows: %s (exercise 5.4 first)", i+1, n, testkit.Describe(err))
		}
	}
	if cpu := idleCPU(500 * time.Millisecond); cpu > maxIdleCPU {
		k.Fatalf("with %d clients connected and idle, the test process kept %.0f%% of a core busy over 500ms (CPU used, or waited for); an "+
			"idle event loop uses next to nothing\nhint: epoll_wait's timeout must be -1 (or the time to the "+
			"next timer), never 0; and EPOLLOUT must be taken off once the output is sent, or the "+
			"level-triggered socket reports 'writable' on every wait", clients, cpu*100)
	}
}

// checkTimer: the chat server closes a connection that has not logged in
// within the login timeout; epoll_wait must not sleep past it.
func checkTimer(k *testkit.T, impl Impl) {
	k.Helper()
	const timeout = 200 * time.Millisecond
	srv := newChatConfig(k, impl, ChatConfig{LoginTimeout: timeout}, "alice")
	mute := k.Dial(srv)
	start := time.Now()
	mute.NetConn().SetReadDeadline(start.Add(testkit.IOTimeout))
	_, err := mute.NetConn().Read(make([]byte, 1))
	if !testkit.IsClosed(err) {
		k.Fatalf("a client connected and sent nothing, with the login timeout at %v: want the server to close "+
			"the connection, got %s after %v\nhint: epoll_wait's timeout is the time to the handler's next "+
			"timer (rounded up to a millisecond), or -1 when there is none", timeout, testkit.Describe(err),
			time.Since(start).Round(time.Millisecond))
	}
}

// needFDs makes sure the process may open n more fds, or skips.
func needFDs(k *testkit.T, n int) {
	k.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		k.Fatalf("getrlimit: %v", err)
	}
	if lim.Cur < uint64(n)+uint64(len(openFDs(k))) {
		k.Skipf("this check needs %d file descriptors; the limit is %d (raise it with ulimit -n)", n, lim.Cur)
	}
}

// EMFILE checks exercise 5.7: when the process runs out of file descriptors,
// accept4 fails with EMFILE and the client stays queued, so the
// level-triggered listener stays readable. The server must refuse the
// client (close it at once, with the fd it keeps in reserve) rather than
// spin, and serve again once fds are free.
func EMFILE(t *testing.T, impl Impl) {
	k := testkit.New(t, "5.7")
	linuxOnly(k)
	srv := newStock(k, impl, Limits{}, stocks...)
	c0 := k.Dial(srv)
	c0.WriteLine("show")
	if _, err := readRecord(c0); err != nil {
		k.Fatalf("show on a fresh connection: %s%s", testkit.Describe(err), c0.Context())
	}

	fillers := exhaustFDs(k)
	// Free one fd, for the client; the server then has none for it.
	fillers[len(fillers)-1].Close()
	c1 := k.DialAddr(srv.Addr)
	c1.ExpectClosed()
	cpu := idleCPU(300 * time.Millisecond)
	for _, f := range fillers[:len(fillers)-1] {
		f.Close()
	}
	if cpu > maxIdleCPU {
		k.Fatalf("out of fds, after refusing a client, the test process kept %.0f%% of a core busy over 300ms: the "+
			"server spins\nhint: on EMFILE, close the reserved fd, accept and close the client, and open the "+
			"reserve again", cpu*100)
	}
	c2 := k.Dial(srv)
	c2.WriteLine("show")
	if _, err := readRecord(c2); err != nil {
		k.Fatalf("once fds were free again, a new client's show got %s: the server must go on accepting%s",
			testkit.Describe(err), c2.Context())
	}
}

// exhaustFDs lowers the process's fd limit to a little above what is open and
// opens /dev/null until no fd is left. The limit is restored at cleanup.
func exhaustFDs(k *testkit.T) []*os.File {
	k.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		k.Fatalf("getrlimit: %v", err)
	}
	highest := 0
	for fd := range openFDs(k) {
		highest = max(highest, fd)
	}
	low := old
	low.Cur = uint64(highest + 32)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		k.Fatalf("setrlimit: %v", err)
	}
	var files []*os.File
	k.Cleanup(func() {
		for _, f := range files {
			f.Close()
		}
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	})
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			if len(files) == 0 {
				k.Fatalf("test bug: no fd to spare below the limit %d", low.Cur)
			}
			return files
		}
		files = append(files, f)
	}
}

// warmUp makes the Go runtime open what it opens once per process (its own
// epoll instance and eventfd, on first use of the network), so that counting
// fds before and after a server sees only the server's.
func warmUp(k *testkit.T) {
	k.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen: %v", err)
	}
	ln.Close()
}

// Close checks exercise 5.8: Close, from another goroutine, wakes the loop
// (sleeping in epoll_wait with no timeout), closes every connection and
// every fd the server opened (epoll, eventfd, the reserve, the listener), and
// returns promptly; Serve returns lab.ErrServerClosed.
func Close(t *testing.T, impl Impl) {
	k := testkit.New(t, "5.8")
	linuxOnly(k)
	k.Run("every-fd", func(t *testing.T) { checkEveryFD(testkit.New(t, k.Exercise()), impl) })
	k.Run("unread-output", func(t *testing.T) { checkUnreadOutputClosed(testkit.New(t, k.Exercise()), impl) })
}

// checkUnreadOutputClosed: a client with replies queued that it does not
// read during the grace Close gives it is closed when the grace is over,
// by teardown: its connection is not left open with the loop gone.
func checkUnreadOutputClosed(k *testkit.T, impl Impl) {
	k.Helper()
	srv := newStockOn(k, impl, Limits{}, listenSmall(k), stocks...)
	c := dialSmall(k, srv.Addr) // small buffers on both sides: most of the replies stay queued in the server
	const n = 64
	c.SetWriteDeadline(time.Now().Add(testkit.IOTimeout))
	if _, err := c.Write([]byte(strings.Repeat("show\n", n))); err != nil {
		k.Fatalf("writing %d × \"show\\n\": %v", n, err)
	}
	probe := k.Dial(srv)
	probe.WriteLine("show")
	if _, err := readRecord(probe); err != nil {
		k.Fatalf("show: %s%s", testkit.Describe(err), probe.Context())
	}
	start := time.Now()
	srv.Close() // waits for the grace period to pass
	k.Logf("Close took %v", time.Since(start).Round(time.Millisecond))
	c.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
	read, err := io.Copy(io.Discard, c)
	if err != nil && !testkit.IsClosed(err) {
		k.Fatalf("a client had replies queued and read none during Close's grace period; after Close returned it "+
			"read %d bytes, then %s: want the connection closed\nhint: teardown must close every connection "+
			"still open when the loop stops (through l.close)", read, testkit.Describe(err))
	}
}

// checkEveryFD: Close closes every fd the server opened, and clients see
// their connections closed.
func checkEveryFD(k *testkit.T, impl Impl) {
	k.Helper()
	warmUp(k)
	before := openFDs(k)

	srv := newChat(k, impl, Limits{}, "alice", "bob")
	alice := login(k, srv, "alice")
	bob := login(k, srv, "bob")
	alice.Write(testkit.Encode(wire.Frame{Type: wire.Broadcast, Sender: "alice", Payload: []byte("half")})[:50], "half a frame")
	barrier(k, bob)
	idle := []*testkit.Conn{alice, bob}
	for range 20 {
		idle = append(idle, k.Dial(srv))
	}
	barrier(k, bob)

	srv.Close() // fails the check if Close does not return, or Serve returns anything but ErrServerClosed
	for _, c := range idle {
		c.ExpectClosed()
		c.Close()
	}
	if extra := newFDs(before, openFDs(k)); extra != "" {
		k.Fatalf("after Close (and with every client closed), fds the server opened are still open: %s\n"+
			"hint: Close must close every connection, the epoll fd, the eventfd, the reserved fd and the "+
			"listening socket", extra)
	}

	// Close before Serve: Serve returns at once, and nothing stays open.
	raw, err := impl.NewChat(ChatConfig{UsersPath: os.DevNull})
	if err != nil {
		k.Fatalf("NewChat: %v", err)
	}
	if err := raw.Close(); err != nil {
		k.Fatalf("Close before Serve: %v", err)
	}
	late := k.Serve(raw)
	late.Close()
	if err, _ := late.Stopped(); err == nil {
		k.Fatalf("Serve after Close: want lab.ErrServerClosed")
	}
	if err := raw.Close(); err != nil {
		k.Fatalf("a second Close: want nil, got %v", err)
	}
	if extra := newFDs(before, openFDs(k)); extra != "" {
		k.Fatalf("after Close, then Serve, fds are open: %s", extra)
	}
}

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

	"serverlab/tests/judge"
	"serverlab/tests/testkit"
)

// Leftovers checks exercise 5.3: a request that arrives over several reads
// is put together from the connection's leftovers. The checks of the loop's
// own exercises (5.3–5.8) run on the chapter's given echo server, which needs
// nothing but the loop. Each piece is read by the server on its own (a round
// trip on another connection in between makes sure of that), and that other
// connection's request lands in the loop's shared read buffer: a server that
// keeps leftovers as a slice of the shared buffer instead of a copy sees them
// overwritten.
func Leftovers(t *testing.T, impl Impl) {
	k := testkit.New(t, "5.3")
	linuxOnly(k)
	k.Run("split-lines", func(t *testing.T) { checkSplitLines(testkit.New(t, k.Exercise()), impl) })
	k.Run("idle-holds-no-buffer", func(t *testing.T) { checkIdleHoldsNoBuffer(testkit.New(t, k.Exercise()), impl) })
}

// checkSplitLines: three lines in 20-odd pieces, each read on its own, with
// another client's request in the shared buffer in between.
func checkSplitLines(k *testkit.T, impl Impl) {
	k.Helper()
	srv := newEcho(k, impl, EchoConfig{})
	bob := k.Dial(srv)
	alice := k.Dial(srv)

	lines := []string{"first, cut near its start", strings.Repeat("0123456789abcdef", 300), "third, glued to the second"}
	stream := []byte(strings.Join(lines, "\n") + "\n")
	second := len(lines[0]) + 1
	cuts := []int{1, 4, 8, second - 1, second, second + 3, second + 80, second + 1000, len(stream) - 10}
	rng := rand.New(rand.NewPCG(5, 3))
	for range 12 {
		cuts = append(cuts, rng.IntN(len(stream)))
	}
	pieces := split(stream, cuts)

	for i, p := range pieces {
		alice.Write(p, fmt.Sprintf("piece %d of %d (bytes %d…%d of the stream)", i+1, len(pieces), offset(pieces, i), offset(pieces, i)+len(p)))
		echoTrip(k, bob, 1, "barrier")
	}
	for i, want := range lines {
		_, got, err := readEcho(alice)
		if err != nil || got != want {
			k.Fatalf("alice sent %d lines in %d pieces, each read on its own; the echo of line %d came back wrong\n"+
				"  want: %.120q\n   got: %.120q, %s\nhint: copy the bytes a handler leaves into the connection's "+
				"own buffer: the shared read buffer is overwritten by the next read%s",
				len(lines), len(pieces), i+1, want, got, testkit.Describe(err), alice.Context())
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

// PartialWrites checks exercise 5.4: replies the socket does not take at
// once are kept and sent when epoll says the socket is writable, without
// holding up anyone else. One client pipelines far more requests than the
// kernel's buffers hold replies for and does not read; another client must
// still be answered at once; then the first reads every reply, whole and in
// order.
func PartialWrites(t *testing.T, impl Impl) {
	k := testkit.New(t, "5.4")
	linuxOnly(k)
	// Small socket buffers on the server's side: its socket fills after a
	// few replies, in the first batch already, so that a loop that waits for
	// the socket makes the other client wait.
	// MaxPending is out of the way: the check holds for a loop whose
	// back-pressure (5.5) is not written yet, which queues every reply.
	const repeat = 1024
	srv := newEchoOn(k, impl, EchoConfig{Repeat: repeat, Limits: Limits{MaxPending: 1 << 30}}, k.ListenSmall())
	probe := k.Dial(srv)
	echoTrip(k, probe, repeat, "probe")

	line := func(i int) string { return fmt.Sprintf("line %05d", i) }
	size := len(line(0)) * repeat
	n := 2*testkit.KernelBuffers()/size + 64
	var requests strings.Builder
	for i := range n {
		requests.WriteString(line(i) + "\n")
	}
	c := k.Dial(srv)
	echoTrip(k, c, repeat, "accepted") // so that the loop reads its requests before the other client's
	c.Write([]byte(requests.String()), fmt.Sprintf("%d lines in one write (%d KiB of replies)", n, n*size>>10))
	other := k.Dial(srv)
	other.WriteLine("other")
	if _, got, err := readEcho(other); err != nil || got != strings.Repeat("other", repeat) {
		k.Fatalf("while a client that does not read has %d replies waiting, another client's line got %.80q, %s\n"+
			"hint: Write must never wait for a socket: keep what write(2) did not take, arm EPOLLOUT, and "+
			"go back to epoll_wait", n, got, testkit.Describe(err))
	}
	last := -1
	for i := range n {
		count, got, err := readEcho(c)
		if err != nil {
			k.Fatalf("reply %d of %d: %s\nhint: when write(2) takes only part of a reply, keep the rest and "+
				"send it when epoll reports EPOLLOUT; when all is sent, hand the handler the requests it left "+
				"waiting%s", i+1, n, testkit.Describe(err), c.Context())
		}
		if want := strings.Repeat(line(i), repeat); got != want || count <= last {
			k.Fatalf("reply %d of %d (its count %d, the one before %d) differs from the echo of %q (bytes lost or "+
				"reordered in a partial write?)\n  want: %.120q\n   got: %.120q", i+1, n, count, last, line(i), want, got)
		}
		last = count
	}
	checkNothingAfterClosing(k, srv)
}

// checkNothingAfterClosing: once a connection is closing (CloseWhenFlushed),
// Write refuses it. The echo server answers "bye", closes the connection
// once the answer is sent, then writes "late\n" to it, as a handler
// answering a late event would: the client must get the answer, then the end
// of the stream, and never "late".
func checkNothingAfterClosing(k *testkit.T, srv *testkit.Server) {
	k.Helper()
	c := k.Dial(srv)
	c.WriteLine("bye")
	if _, got, err := readEcho(c); err != nil || !strings.HasPrefix(got, "bye") {
		k.Fatalf("sent \"bye\": want its echo, then the end of the stream; got %.80q, %s", got, testkit.Describe(err))
	}
	rest, err := io.ReadAll(c.Reader())
	if len(rest) > 0 || err != nil {
		k.Fatalf("sent \"bye\" (the echo server answers it, closes the connection once the answer is sent, "+
			"then writes \"late\\n\" to it)\n  want: the end of the stream after the answer\n   got: %q, %s\n"+
			"hint: Write refuses a closed or closing connection (errClosed): what a handler writes after "+
			"CloseWhenFlushed must never reach the client", rest, testkit.Describe(err))
	}
}

// BackPressure checks exercise 5.5: a connection's unsent output is bounded.
// A client that pipelines requests without reading is not read from while
// its output is over the high-water mark (and is read again once it reads);
// a client whose unsent output would pass MaxPending is disconnected, and the
// others do not notice.
func BackPressure(t *testing.T, impl Impl) {
	k := testkit.New(t, "5.5")
	linuxOnly(k)
	absorb := testkit.KernelBuffers()
	k.Run("stops-reading", func(t *testing.T) { checkStopsReading(testkit.New(t, k.Exercise()), impl, absorb) })
	k.Run("slow-consumer", func(t *testing.T) { checkSlowConsumer(testkit.New(t, k.Exercise()), impl, absorb) })
	k.Run("slow-consumers-memory", func(t *testing.T) { checkSlowConsumersMemory(testkit.New(t, k.Exercise()), impl) })
	k.Run("pending-limit", func(t *testing.T) { checkPendingLimit(testkit.New(t, k.Exercise()), impl) })
	k.Run("congested-at-high-water", func(t *testing.T) { checkCongestedAtHighWater(testkit.New(t, k.Exercise()), impl, absorb) })
	k.Run("reads-below-high-water", func(t *testing.T) { checkReadsBelowHighWater(testkit.New(t, k.Exercise()), impl) })
}

// checkCongestedAtHighWater: a connection whose queue has reached HighWater
// (not only passed it) is congested. HighWater is exactly the size of the
// first reply, far more than the kernel's buffers take, so the reply stays
// queued. A client sends two lines in one write and reads nothing: the
// server answers the first and must stop there; the answer count of another
// client's line then says whether the second was answered too.
func checkCongestedAtHighWater(k *testkit.T, impl Impl, absorb int) {
	k.Helper()
	repeat := 2 * absorb
	highWater := len("0 ") + repeat + len("\n") // the first reply: "0 ", repeat × "a", "\n"
	srv := newEchoOn(k, impl, EchoConfig{Repeat: repeat, Limits: Limits{HighWater: highWater, MaxPending: 1 << 30}},
		k.ListenSmall())
	c := k.Dial(srv)
	c.Write([]byte("a\nb\n"), `"a\nb\n" in one write, then only the first two bytes of the replies read`)
	var head [2]byte
	if _, err := io.ReadFull(c.Reader(), head[:]); err != nil || string(head[:]) != "0 " {
		k.Fatalf("sent \"a\\nb\\n\" to a fresh echo server (HighWater %d bytes, the size of the reply to \"a\")\n"+
			"  want: a reply starting \"0 \"\n   got: %q, %s\nhint: a connection at HighWater is paused: EPOLLIN "+
			"is taken off (watch); left on, level-triggered epoll reports it for ever and the loop spins",
			highWater, head[:], testkit.Describe(err))
	}
	other := k.Dial(srv)
	other.WriteLine("x")
	count, _, err := readEcho(other)
	if err != nil {
		k.Fatalf("HighWater %d bytes; a client sent \"a\\nb\\n\" in one write and did not read (the reply to \"a\" "+
			"is exactly HighWater bytes); then another client sent \"x\"\n  want: its answer\n   got: %s\n"+
			"hint: a connection at HighWater is paused: its input is left where it is and EPOLLIN is taken off "+
			"(watch); left on, level-triggered epoll reports the connection for ever and the loop serves no one else",
			highWater, testkit.Describe(err))
	}
	if count != 1 {
		k.Fatalf("HighWater %d bytes; a client sent \"a\\nb\\n\" in one write and did not read; the reply to "+
			"\"a\" is exactly %d bytes, far more than the socket takes; then another client sent \"x\"\n"+
			"  want: its reply counted 1 (\"b\" waits: the first connection reached HighWater)\n"+
			"   got: counted %d (\"b\" was answered too)\n"+
			"hint: a connection is congested once its queue has reached HighWater (>=), not only passed it",
			highWater, highWater, count)
	}
	// Paused, the connection is not read from either: more requests fill
	// the kernel's buffers, and the client's write stops.
	flood := bytes.Repeat([]byte("a\n"), absorb)
	raw := c.NetConn()
	raw.SetWriteDeadline(time.Now().Add(pausedWait))
	n, err := raw.Write(flood)
	raw.SetWriteDeadline(time.Time{})
	if err == nil {
		k.Fatalf("a client over HighWater that reads nothing went on sending: %d bytes of requests (twice what "+
			"the kernel's buffers hold) in one write\n  want: the write stopped within %v (the server reads "+
			"nothing more from a paused connection)\n   got: all %d bytes taken\nhint: a paused connection's "+
			"interest in epoll has no EPOLLIN (watch); with it, the loop reads requests into memory without bound",
			len(flood), pausedWait, n)
	}
}

// pausedWait is how long a client's write to a paused connection is given:
// a server that reads none of it lets no more than the kernel's buffers
// through, however long it waits.
const pausedWait = 500 * time.Millisecond

func checkStopsReading(k *testkit.T, impl Impl, absorb int) {
	k.Helper()
	const highWater = 64 << 10
	const repeat, request = 1024, "0123456"
	srv := newEcho(k, impl, EchoConfig{Repeat: repeat, Limits: Limits{HighWater: highWater, MaxPending: 1 << 30}})
	probe := k.Dial(srv)
	start := echoTrip(k, probe, repeat, "")

	const n = 4096 // 32 KiB of requests: one read; 28 MiB of replies
	c := k.Dial(srv)
	echoTrip(k, c, repeat, "accepted") // so that the loop reads its requests before the probe's
	c.Write([]byte(strings.Repeat(request+"\n", n)), fmt.Sprintf("%d × %q in one write", n, request+"\n"))
	// The loop read c's requests before it read the probe's (they arrived
	// first, and epoll is level-triggered), so the count in the probe's
	// reply tells how many it served before it stopped.
	done := echoTrip(k, probe, repeat, "") - start - 2
	size := len(request) * repeat
	bound := (2*absorb+highWater)/size + 2
	if done > bound {
		k.Fatalf("a client sent %d lines in one write and read no reply: the server answered %d of them before "+
			"answering another client, queueing %d KiB of replies; with HighWater %d KiB and %d KiB of kernel "+
			"buffers it should have stopped reading after about %d\nhint: in the handler, stop draining when "+
			"the connection is congested; in the loop, take EPOLLIN off while output is over HighWater",
			n, done, done*size>>10, highWater>>10, absorb>>10, bound)
	}
	want := strings.Repeat(request, repeat)
	for i := range n {
		_, got, err := readEcho(c)
		if err != nil {
			k.Fatalf("reply %d of %d: %s\nhint: once the output is sent, take up reading again, starting with "+
				"the requests the handler left in the connection's buffer%s", i+1, n, testkit.Describe(err), c.Context())
		}
		if got != want {
			k.Fatalf("reply %d of %d: want %.80q, got %.80q", i+1, n, want, got)
		}
	}
	if got := echoTrip(k, probe, repeat, "") - start - 3; got != n {
		k.Fatalf("after %d lines, all answered, the server counts %d lines answered in between; want %d", n, got, n)
	}
}

// checkSlowConsumer: a client whose unsent output would pass MaxPending is
// disconnected, and the others do not notice. (HighWater is MaxPending here,
// so that the loop does not stop reading from it first.)
func checkSlowConsumer(k *testkit.T, impl Impl, absorb int) {
	k.Helper()
	const maxPending = 1 << 20
	const repeat, request = 15000, "slow"
	size := repeat * len(request)
	srv := newEcho(k, impl, EchoConfig{Repeat: repeat, Limits: Limits{HighWater: maxPending, MaxPending: maxPending}})
	bob := k.Dial(srv)
	echoTrip(k, bob, repeat, "bob")

	n := (2*absorb+maxPending)/size + 20
	slow := k.Dial(srv)
	slow.Write([]byte(strings.Repeat(request+"\n", n)), fmt.Sprintf("%d × %q in one write", n, request+"\n"))
	echoTrip(k, bob, repeat, "bob") // slow's requests have been read and answered

	received := 0
	for received < n {
		_, _, err := readEcho(slow)
		if testkit.IsClosed(err) || errors.Is(err, io.ErrUnexpectedEOF) {
			break // closed, maybe in the middle of a reply
		}
		if err != nil {
			k.Fatalf("slow, reading what was queued for it: %s", testkit.Describe(err))
		}
		received++
	}
	if received == n {
		k.Fatalf("slow sent %d lines and read nothing while they were answered (%d KiB), and then got every "+
			"reply: the server queued them all (over %d KiB beyond the kernel's buffers) for a client that did not "+
			"read; want it disconnected once its unsent output passes MaxPending (%d KiB)\nhint: in Write, close "+
			"the connection when its pending output would pass MaxPending",
			n, n*size>>10, (n*size-absorb)>>10, maxPending>>10)
	}
	echoTrip(k, bob, repeat, "bob")
}

// checkStalled: a client that pipelines requests and never reads. Back-
// pressure stops the server reading from it, so its output never passes
// MaxPending, and it would hold its fd and its buffers for ever; the
// StallTimeout drops it: its output made no progress for that long. The
// client only writes, until a write fails: it fails with a reset once the
// server closes (it closes with the client's requests unread), and blocks
// until the deadline if the server keeps it. Small socket buffers on both
// sides keep the volume small, and a cap stops the client if the server
// never stops reading (no back-pressure yet: exercise 5.5 itself).
func checkStalled(k *testkit.T, impl Impl) {
	k.Helper()
	const stall = 300 * time.Millisecond
	const highWater, request = 64 << 10, "stall\n"
	srv := newEchoOn(k, impl, EchoConfig{Limits: Limits{HighWater: highWater, MaxPending: 1 << 30, StallTimeout: stall}},
		k.ListenSmall())
	bob := k.Dial(srv)
	echoTrip(k, bob, 1, "bob")

	nc := k.DialSmall(srv.Addr)
	defer nc.Close()
	chunk := []byte(strings.Repeat(request, 1024))
	const within = 5 * time.Second // the StallTimeout, with room for a loaded machine
	const limit = 16 << 20         // far more than HighWater and the small buffers take
	start := time.Now()
	nc.SetWriteDeadline(start.Add(within))
	sent := 0
	var err error
	for err == nil && sent < limit {
		var n int
		n, err = nc.Write(chunk)
		sent += n
	}
	switch {
	case testkit.IsClosed(err):
		k.Logf("the client that never read was dropped after %v (%d KiB of requests sent)",
			time.Since(start).Round(time.Millisecond), sent>>10)
	case err == nil:
		k.Fatalf("a client sent %d MiB of %q lines and never read a reply, and the server kept reading them: "+
			"want it to stop reading at HighWater (%d KiB of unsent replies)", sent>>20, request, highWater>>10)
	default:
		k.Fatalf("a client sent %d KiB of %q lines and never read a reply: after %v it was still connected "+
			"(write: %v); want it closed once its pending output made no progress for StallTimeout (%v)\n"+
			"hint: back-pressure (HighWater) stops reading from such a client, so MaxPending is never reached; "+
			"the loop's given send and scanStalled drop it, once timeout wakes the loop for l.nextTick (the stall "+
			"scan is one of its timers, exercise 5.6)",
			sent>>10, request, within, err, stall)
	}
	echoTrip(k, bob, 1, "bob") // the others did not notice
}

// NoBusyLoop checks exercise 5.6: with 1000 clients connected and nothing to
// do, the loop sleeps in epoll_wait. A zero timeout, or EPOLLOUT left armed
// after the output is sent (a level-triggered socket is always writable),
// turns it into a busy loop that burns a whole core. And it wakes up in time
// for its timers: a client that sends nothing is closed after the echo
// server's greet timeout, though nothing happens on any socket, and a
// client that has stopped reading is dropped after the loop's StallTimeout.
func NoBusyLoop(t *testing.T, impl Impl) {
	k := testkit.New(t, "5.6")
	linuxOnly(k)
	k.Run("greet-timeout", func(t *testing.T) { checkTimer(testkit.New(t, k.Exercise()), impl) })
	k.Run("timers-rounded-up", func(t *testing.T) { checkTimersRoundedUp(testkit.New(t, k.Exercise()), impl) })
	k.Run("idle", func(t *testing.T) { checkIdle(testkit.New(t, k.Exercise()), impl) })
	k.Run("stall-timeout", func(t *testing.T) { checkStalled(testkit.New(t, k.Exercise()), impl) })
	k.Run("interrupted", func(t *testing.T) { checkInterrupted(testkit.New(t, k.Exercise()), impl) })
}

// checkTimersRoundedUp: many timers a fraction of a millisecond apart (the
// greet timeouts of clients that connected one after another). A loop that
// rounds the time to its next timer down sleeps 0 ms for the last fraction
// of a millisecond before each, and spins: with timers due a fraction of a
// millisecond apart it spins all the time they take to fire. Rounded up, it wakes once per
// millisecond at most.
func checkTimersRoundedUp(k *testkit.T, impl Impl) {
	k.Helper()
	const clients, timeout = 1000, 500 * time.Millisecond
	needFDs(k, 2*clients+100)
	srv := newEcho(k, impl, EchoConfig{GreetTimeout: timeout})
	var conns []*testkit.Conn
	for range clients {
		conns = append(conns, k.Dial(srv)) // one after another: their timers a fraction of a millisecond apart
	}
	var start time.Time
	var cpu0 time.Duration
	for i, c := range conns {
		c.NetConn().SetReadDeadline(time.Now().Add(testkit.IOTimeout + timeout))
		if _, err := c.NetConn().Read(make([]byte, 1)); !testkit.IsClosed(err) {
			k.Fatalf("client %d of %d connected and sent nothing, with the greet timeout at %v: want the server to "+
				"close the connection, got %s", i+1, clients, timeout, testkit.Describe(err))
		}
		if i == 0 { // the timers have begun to fire: measure until the last
			start, cpu0 = time.Now(), cpuTime()
		}
	}
	wall, cpu := time.Since(start), cpuTime()-cpu0
	share := cpu.Seconds() / wall.Seconds()
	k.Logf("%d greet timeouts fired in %v, using %v of CPU (%.0f%% of a core)", clients,
		wall.Round(time.Millisecond), cpu.Round(time.Millisecond), share*100)
	// Closing a connection costs the correct loop (and the test reading its
	// end) about a fifth of the time between two timers here; spinning, the
	// loop takes all it can get.
	const maxTimerCPU = 0.45
	if share > maxTimerCPU {
		k.Fatalf("%d greet timeouts, due a fraction of a millisecond apart: while they fired, the test process used %.0f%% of a core "+
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
	// An echo server without a greet timeout has no timer: its loop must
	// sleep with timeout -1. The one below has its clients' greet timers
	// pending (due long after the check): its loop must sleep until the
	// first.
	timerless := newEcho(k, impl, EchoConfig{})
	echoTrip(k, k.Dial(timerless), 1, "hello")
	const repeat = 1024
	srv := newEcho(k, impl, EchoConfig{Repeat: repeat, GreetTimeout: time.Hour})
	var conns []*testkit.Conn
	for range clients {
		conns = append(conns, k.Dial(srv))
	}
	// A round trip on the last connection: the loop has accepted them all.
	echoTrip(k, conns[clients-1], repeat, "last")
	// One client gets more output than the kernel takes at once, so that the
	// loop arms EPOLLOUT, and then reads it all.
	const request = "0123456"
	n := 2*testkit.KernelBuffers()/(len(request)*repeat) + 16
	c := conns[0]
	c.Write([]byte(strings.Repeat(request+"\n", n)), fmt.Sprintf("%d × %q", n, request+"\n"))
	for i := range n {
		if _, _, err := readEcho(c); err != nil {
			k.Fatalf("reply %d of %d to pipelined lines: %s (exercise 5.4 first)", i+1, n, testkit.Describe(err))
		}
	}
	if cpu := idleCPU(500 * time.Millisecond); cpu > maxIdleCPU {
		k.Fatalf("with %d clients connected and idle, the test process kept %.0f%% of a core busy over 500ms (CPU used, or waited for); an "+
			"idle event loop uses next to nothing\nhint: epoll_wait's timeout must be -1 (or the time to the "+
			"next timer), never 0; and EPOLLOUT must be taken off once the output is sent, or the "+
			"level-triggered socket reports 'writable' on every wait", clients, cpu*100)
	}
}

// checkTimer: the echo server closes a connection that has sent nothing
// within the greet timeout; epoll_wait must not sleep past it.
func checkTimer(k *testkit.T, impl Impl) {
	k.Helper()
	const timeout = 200 * time.Millisecond
	srv := newEcho(k, impl, EchoConfig{GreetTimeout: timeout})
	mute := k.Dial(srv)
	start := time.Now()
	mute.NetConn().SetReadDeadline(start.Add(testkit.IOTimeout))
	_, err := mute.NetConn().Read(make([]byte, 1))
	if !testkit.IsClosed(err) {
		k.Fatalf("a client connected and sent nothing, with the greet timeout at %v: want the server to close "+
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
	srv := newEcho(k, impl, EchoConfig{})
	echoTrip(k, k.Dial(srv), 1, "first")

	release := exhaustFDs(k)
	c1 := k.DialAddr(srv.Addr)
	c1.ExpectClosed()
	cpu := idleCPUNoFDs(300 * time.Millisecond)
	release()
	if cpu > maxIdleCPU {
		k.Fatalf("out of fds, after refusing a client, the test process kept %.0f%% of a core busy over 300ms: the "+
			"server spins\nhint: on EMFILE, close the reserved fd, accept and close the client, and open the "+
			"reserve again", cpu*100)
	}
	c2 := k.Dial(srv)
	c2.WriteLine("again")
	if _, _, err := readEcho(c2); err != nil {
		k.Fatalf("once fds were free again, a new client's line got %s: the server must go on accepting%s",
			testkit.Describe(err), c2.Context())
	}
}

// exhaustFDs runs the server's process out of fds, leaving one for the
// client where the client is in the same process, and returns what gives
// them back (also run at cleanup).
func exhaustFDs(k *testkit.T) (release func()) {
	k.Helper()
	highest := 0
	for fd := range openFDs(k) {
		highest = max(highest, fd)
	}
	if judge.IsJudge() {
		// The server is in the subject, the client here: use up the
		// subject's fds, all of them.
		n, err := judge.ExhaustFDs(highest)
		if err != nil || n == 0 {
			k.Fatalf("test bug: could not use up the server's fds (%d opened): %v", n, err)
		}
		k.Cleanup(judge.ReleaseFDs)
		return judge.ReleaseFDs
	}
	fillers := exhaustOwnFDs(k, highest)
	// Free one fd, for the client; the server then has none for it.
	fillers[len(fillers)-1].Close()
	return func() {
		for _, f := range fillers[:len(fillers)-1] {
			f.Close()
		}
	}
}

// exhaustOwnFDs lowers this process's fd limit to a little above what is open and
// opens /dev/null until no fd is left. The limit is restored at cleanup.
func exhaustOwnFDs(k *testkit.T, highest int) []*os.File {
	k.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		k.Fatalf("getrlimit: %v", err)
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
	k.Run("serve-without-socket", func(t *testing.T) { checkServeRefusesNoSocket(testkit.New(t, k.Exercise()), impl) })
}

// checkUnreadOutputClosed: a client with replies queued that it does not
// read during the grace Close gives it is closed when the grace is over,
// by teardown: its connection is not left open with the loop gone.
func checkUnreadOutputClosed(k *testkit.T, impl Impl) {
	k.Helper()
	const repeat = 1024
	srv := newEchoOn(k, impl, EchoConfig{Repeat: repeat}, k.ListenSmall())
	c := k.DialSmall(srv.Addr) // small buffers on both sides: most of the replies stay queued in the server
	const n = 64
	c.SetWriteDeadline(time.Now().Add(testkit.IOTimeout))
	if _, err := c.Write([]byte(strings.Repeat("unread\n", n))); err != nil {
		k.Fatalf("writing %d × \"unread\\n\": %v", n, err)
	}
	echoTrip(k, k.Dial(srv), repeat, "probe")
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

	srv := newEcho(k, impl, EchoConfig{})
	alice := k.Dial(srv)
	bob := k.Dial(srv)
	alice.Write([]byte("half a line"), "half a line")
	echoTrip(k, bob, 1, "barrier")
	idle := []*testkit.Conn{alice, bob}
	for range 20 {
		idle = append(idle, k.Dial(srv))
	}
	echoTrip(k, bob, 1, "barrier")

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
	raw, err := impl.NewEcho(EchoConfig{})
	if err != nil {
		k.Fatalf("NewEcho: %v", err)
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

package stocktest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
)

// pipelinedShows is how many shows Close checks send in one write: 13 MB of
// replies, far more than the socket buffers hold, so the server is still
// writing them when Close is called. The 8000 bytes of requests fit in one
// read of an 8 KiB buffer: a server that closes a socket with requests still
// unread in the kernel makes it send a reset, which can destroy replies the
// client has not read yet (see the chapter 04 lesson on lingering close).
const pipelinedShows = 1600

// Close checks exercise 4.7: Close stops accepting, lets the replies in
// flight finish (a client never receives a cut record), closes every
// connection, writes the stocks back one last time, makes Serve return
// lab.ErrServerClosed, can be called twice, and leaves no goroutine behind.
func Close(t *testing.T, impl Impl) {
	k := testkit.New(t, "4.7")
	checkCloseSyncs(k, impl)
	checkCloseReportsFailure(k, impl)
	checkCloseInFlight(k, impl)
	checkContract(k, impl)
	if impl.Threaded {
		checkSecondCloseWaits(k, impl)
		checkQueuedAtClose(k, impl)
		checkLinger(k, impl)
		checkCloseGraceForLateWrite(k, impl)
	}
}

// checkSecondCloseWaits: a second Close, called while the first is still
// stopping the server, waits for it too. The write-back is held inside the
// disk's Write, so the first Close cannot finish; the second must not return
// meanwhile either (the contract's close-waits check races two calls, which
// on a busy machine may run one after the other).
func checkSecondCloseWaits(k *testkit.T, impl Impl) {
	k.Helper()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	cfg := Config{SyncInterval: never}
	cfg.Saver.Intercept = func(w io.Writer) io.Writer {
		return writerFunc(func(p []byte) (int, error) {
			once.Do(func() { close(entered) })
			<-release
			return w.Write(p)
		})
	}
	srv, raw, _ := newServer(k, impl, cfg, market)
	defer srv.Close()
	c := k.Dial(srv)
	exchange(k, c, "sell 3 4", newModel(parseStocks(k, market)).apply(mustParse("sell 3 4")))
	c.WriteLine("exit")
	c.ExpectClosed()

	closed := make(chan error, 2)
	go func() { closed <- raw.Close() }()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		close(release)
		k.Fatalf("after a sell and exit, then Close, no write-back started within 10s")
	}
	go func() { closed <- raw.Close() }()
	select {
	case err := <-closed:
		close(release)
		k.Fatalf("while the first Close was still writing the stocks back (its write held by the test), a Close "+
			"returned (%v).\nEvery Close must wait until the server has stopped: a second call waits for the "+
			"first one (e.g. on a channel the first closes when it is done)", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	for range 2 {
		select {
		case err := <-closed:
			if err != nil {
				k.Fatalf("Close returned %v", err)
			}
		case <-time.After(10 * time.Second):
			k.Fatalf("Close did not return within 10s once the write-back could finish")
		}
	}
}

// writerFunc is an io.Writer made of a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// checkCloseInFlight: Close while a reply is being written. With a lingering
// close (chapter 04), the client then reads every record the server sent and
// a clean end of stream, even though it sent more requests the server never
// read: closing a socket with unread input makes the kernel send a reset,
// which destroys replies the client has not read yet.
func checkCloseInFlight(k *testkit.T, impl Impl) {
	k.Helper()
	s := make(syncs, 16)
	// Small socket buffers on both ends (accepted sockets inherit the
	// listener's) hold only a few records in flight, so the server is
	// blocked in the middle of writing a batch of replies when Close comes.
	ln, err := (&net.ListenConfig{Control: smallBuffer(syscall.SO_SNDBUF)}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen: %v", err)
	}
	srv, raw, path := newServerOn(k, impl, Config{SyncInterval: never, OnSync: s.hook}, market, ln)
	m := newModel(parseStocks(k, market))
	idle := k.Dial(srv)
	exchange(k, idle, "buy 4 1", m.apply(mustParse("buy 4 1")))

	busy := k.DialWith(&net.Dialer{Control: smallBuffer(syscall.SO_RCVBUF)}, srv)
	busy.Write([]byte(strings.Repeat("show\n", pipelinedShows)), `"show\n" × 1600 (in one write)`)
	want := m.apply(mustParse("show"))
	expectRecord(k, busy, want) // the server is writing the replies now

	closed := make(chan error, 1)
	go func() { closed <- raw.Close() }()
	// More requests, which the server will not read before it closes: they
	// sit in its socket when it closes.
	// (Chapter 05's loop promises no lingering close: it gets none of these.)
	if impl.Threaded {
		busy.Write([]byte(strings.Repeat("show\n", 100)), `"show\n" × 100 more (in one write, after Close was called)`)
	}

	// Every record that arrives is whole; then the connection is closed.
	got := 1
	for {
		text, n, err := readRecordN(busy)
		if err != nil && n == 0 && errors.Is(err, io.EOF) {
			break // closed between two records
		}
		if err != nil && n == 0 && errors.Is(err, syscall.ECONNRESET) && !impl.Threaded {
			break // closed between two records, without a lingering close
		}
		if errors.Is(err, syscall.ECONNRESET) {
			k.Fatalf("after Close was called during %d pipelined shows (and 100 more requests were sent), "+
				"reply %d: the connection was reset (%v).\nA socket closed with requests still unread sends "+
				"a reset, and the reset destroys replies the client has not read: close gracefully (CloseWrite, "+
				"drain what the client sends until it closes or CloseGrace passes, then Close: a lingering close)",
				pipelinedShows, got+1, err)
		}
		if err != nil {
			k.Fatalf("after Close was called during %d pipelined shows, reply %d: %v\n"+
				"(Close must let a reply being written finish: no cut record)", pipelinedShows, got+1, err)
		}
		if text != want {
			k.Fatalf("reply %d to a pipelined show while closing\n  want: %q\n   got: %q", got+1, want, text)
		}
		got++
	}
	busy.Close()
	idle.ExpectClosed()
	idle.Close()
	select {
	case err := <-closed:
		if err != nil {
			k.Fatalf("Close returned %v", err)
		}
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("Close did not return within %v", testkit.IOTimeout)
	}
	if got := readText(k, path); got != m.file() {
		k.Fatalf("after Close, stock.txt must hold the trades (buy 4 1)\n  want: %q\n   got: %q", m.file(), got)
	}
	if c, err := net.DialTimeout("tcp", srv.Addr, testkit.IOTimeout); err == nil {
		c.SetReadDeadline(time.Now().Add(testkit.IOTimeout))
		n, _ := c.Read(make([]byte, 1))
		c.Close()
		if n > 0 {
			k.Fatalf("after Close, a new connection to %s was answered: Close must stop accepting", srv.Addr)
		}
	}
	if err := raw.Close(); err != nil {
		k.Fatalf("a second Close returned %v; want nil", err)
	}
	srv.Close() // checks that Serve returned lab.ErrServerClosed
}

// checkContract runs the server contract every server of the course follows
// (testkit.CheckContract): nothing started before Serve, Serve after Close
// refused, two racing Close calls that both wait for every goroutine, and
// Accept errors (EMFILE: out of file descriptors) retried.
//
// Chapter 05's stock server is a handler on chapter 05's event loop, which
// accepts with its own accept4 on the listener's descriptor: it meets the
// contract's Accept errors through the listener's AcceptFault, which the loop
// asks before each accept4, and handles them as exercise 5.7 taught.
func checkContract(k *testkit.T, impl Impl) {
	k.Helper()
	path := writeStocks(k, market)
	if raw, err := impl.NewServer(Config{StockPath: path, Logger: testkit.Logger()}); err != nil {
		k.Fatalf("building the server needs an earlier exercise: %v", err)
	} else {
		raw.Close()
	}
	want := newModel(parseStocks(k, market)).apply(mustParse("show"))
	k.CheckContract(testkit.Contract{
		New: func(log *slog.Logger) lab.Server {
			raw, err := impl.NewServer(Config{StockPath: path, SyncInterval: never, Logger: log})
			if err != nil {
				return unbuilt{err}
			}
			return raw
		},
		Probe: func(k *testkit.T, addr string) {
			c := k.DialAddr(addr)
			exchange(k, c, "show", want)
			c.Close()
		},
	})
}

// unbuilt stands in for a server NewServer could not build (an earlier
// exercise is missing): it serves nothing, so every rule of the contract
// fails with the reason.
type unbuilt struct{ err error }

func (u unbuilt) Serve(ln net.Listener) error {
	ln.Close()
	return fmt.Errorf("building the server needs an earlier exercise: %w", u.err)
}

func (u unbuilt) Close() error { return nil }

// smallBuffer returns a Control function that sets a socket's send or
// receive buffer (option) to its minimum before it listens or connects.
func smallBuffer(option int) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = testkit.SetsockoptInt(fd, syscall.SOL_SOCKET, option, 4096)
		})
		if err != nil {
			return err
		}
		return serr
	}
}

// checkCloseSyncs: the write-back when the last client left failed; Close
// writes the stocks back once more, and this time the disk works.
func checkCloseSyncs(k *testkit.T, impl Impl) {
	k.Helper()
	s := make(syncs, 16)
	cfg, failing := failingDisk(s)
	srv, raw, path := newServer(k, impl, cfg, market)
	m := newModel(parseStocks(k, market))
	c := k.Dial(srv)
	exchange(k, c, "sell 3 4", m.apply(mustParse("sell 3 4")))
	c.WriteLine("exit")
	c.ExpectClosed()
	if err := s.next(k, "after the only client sold and left, with the disk failing"); err == nil {
		k.Fatalf("the write-back with a failing disk reported success")
	}
	failing.Store(false)
	if err := raw.Close(); err != nil {
		k.Fatalf("Close returned %v", err)
	}
	if got := readText(k, path); got != m.file() {
		k.Fatalf("the write-back when the last client left failed (injected); then Close was called with the "+
			"disk working again. Close must write the stocks back one last time\n  want: %q\n   got: %q",
			m.file(), got)
	}
	srv.Close()
}

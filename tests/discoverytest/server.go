package discoverytest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
	"serverlab/tools/given/users"
	"serverlab/tools/given/wire"
)

// newServer builds a server with a fresh users file in a temporary folder.
func newServer(k *testkit.T, impl Impl, cfg Config) (lab.Server, string) {
	k.Helper()
	if cfg.UsersPath == "" {
		cfg.UsersPath = filepath.Join(k.TempDir(), "users.txt")
	}
	srv, err := impl.NewServer(cfg)
	if errors.Is(err, lab.ErrNotImplemented) {
		k.Fatalf("building the server needs an earlier exercise (New opens the user store): %v", err)
	}
	if err != nil {
		k.Fatalf("NewServer(%+v): %v", cfg, err)
	}
	return srv, cfg.UsersPath
}

func registration(name, password string) wire.Frame {
	return wire.Frame{Type: wire.Registration, Sender: name, Payload: []byte(password)}
}

func answer(name, payload string) wire.Frame {
	return wire.Frame{Type: wire.Registration, Sender: wire.ServerName, Target: name, Payload: []byte(payload)}
}

// register sends one registration on a new connection and checks the answer
// and that the server then closes the connection. It returns the client's
// port, which the server should have recorded.
func register(k *testkit.T, srv *testkit.Server, name, password, want string) int {
	k.Helper()
	c := k.Dial(srv)
	c.SendFrame(registration(name, password))
	c.ExpectFrame(answer(name, want))
	c.ExpectClosed()
	return c.NetConn().LocalAddr().(*net.TCPAddr).Port
}

func readFile(k *testkit.T, path string) string {
	k.Helper()
	b, err := testkit.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		k.Fatalf("reading %s: %v", path, err)
	}
	return string(b)
}

// Serve checks exercise 1.4: the iterative Serve loop.
func Serve(t *testing.T, impl Impl) {
	k := testkit.New(t, "1.4")
	raw, path := newServer(k, impl, Config{Timeout: 10 * time.Second})
	srv := k.Serve(raw)

	port := register(k, srv, "alice", "pass123", "OK")
	want := fmt.Sprintf("alice pass123 127.0.0.1 %d\n", port)
	if got := readFile(k, path); got != want {
		k.Fatalf("users file after alice registered\n  want: %q\n   got: %q", want, got)
	}
	register(k, srv, "alice", "pass123", "OK")  // same password: idempotent
	register(k, srv, "alice", "stolen", "FAIL") // another password: refused
	register(k, srv, "mallory", "two words", "FAIL")
	// Names that would let a user pass for the server, or for someone else.
	for _, name := range []string{wire.ServerName, "Server", "SERVER", wire.Everyone, "all", "ali\u200bce", "bo\xffb",
		"\u0455\u0435rv\u0435r"} { // the last with Cyrillic ѕ and е: mixed scripts
		register(k, srv, name, "pw", "FAIL")
	}
	register(k, srv, strings.Repeat("n", wire.MaxName), "pw", "OK")
	checkClosesSilently(k, srv)
	checkFragmented(k, srv)
	checkOneRequestPerConnection(k, srv)

	register(k, srv, "bob", "secret", "OK")
	var names []string
	for _, line := range strings.Split(strings.TrimSuffix(readFile(k, path), "\n"), "\n") {
		names = append(names, strings.Fields(line + " ")[0])
	}
	wantNames := []string{"alice", strings.Repeat("n", wire.MaxName), "probe", "frag", "carol", "bob"}
	if strings.Join(names, " ") != strings.Join(wantNames, " ") {
		k.Fatalf("users file after the whole exchange: want one line per accepted registration, in order, "+
			"and none for refused ones\n  want names: %q\n   got names: %q", wantNames, names)
	}
	checkRestart(k, impl, srv, path)
	// TODO(ex 1.4) asks it of Serve: after Close, Serve closes ln and
	// returns lab.ErrServerClosed.
	fresh, _ := newServer(k, impl, Config{Timeout: time.Minute})
	k.CheckServeAfterClose(fresh)
	// It asks this too: any other accept error is returned as it is.
	broken, _ := newServer(k, impl, Config{Timeout: time.Minute})
	k.CheckAcceptErrorReturned(broken)
	checkServeOwnership(k, impl) // closeorder.go
	checkCloseRules(k, impl)     // closewait.go
	checkCloseReportsStore(k, impl)
}

// closeFailsFile is a users file whose Close fails (fault injection: a
// network file system reports a write it could not make only when the file
// is closed).
type closeFailsFile struct {
	users.AppendFile
}

var errCloseInjected = errors.New("injected failure closing the users file (a late write error)")

func (f *closeFailsFile) Close() error {
	f.AppendFile.Close()
	return errCloseInjected
}

// checkCloseReportsStore: Close closes the store, and the first call returns
// the store's error; later calls return nil. A Close that drops the error
// tells whoever stops the server that users.txt is safe when the last
// registrations may not be.
func checkCloseReportsStore(k *testkit.T, impl Impl) {
	k.Helper()
	failing := func(p string) (users.AppendFile, error) {
		f, err := openAppend(p)
		if err != nil {
			return nil, err
		}
		return &closeFailsFile{AppendFile: f}, nil
	}
	raw, _ := newServer(k, impl, Config{Timeout: 10 * time.Second, OpenUsers: failing})
	srv := k.Serve(raw)
	register(k, srv, "dora", "pw", "OK")
	closed := make(chan error, 1)
	go func() { closed <- raw.Close() }()
	select {
	case err := <-closed:
		if err == nil || !(errors.Is(err, errCloseInjected) || strings.Contains(err.Error(), errCloseInjected.Error())) {
			k.Fatalf("the users file's Close fails with %q; closed the server after one registration\n"+
				"  want: Close returns that error (the first Close returns the store's error)\n   got: %v\n"+
				"hint: keep what s.store.Close returned and return it from the first Close; later calls return nil",
				errCloseInjected, err)
		}
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("Close did not return within %v (the users file's Close fails)", testkit.IOTimeout)
	}
	srv.Close() // a second Close: nil, and Serve returned lab.ErrServerClosed
}

// checkRestart: registrations survive a restart of the server, and still
// own their names.
func checkRestart(k *testkit.T, impl Impl, old *testkit.Server, path string) {
	k.Helper()
	old.Close()
	before := readFile(k, path)
	raw, _ := newServer(k, impl, Config{UsersPath: path, Timeout: 10 * time.Second})
	srv := k.Serve(raw)
	register(k, srv, "alice", "stolen", "FAIL")
	register(k, srv, "alice", "pass123", "OK")
	if after := readFile(k, path); after != before {
		k.Fatalf("after a restart, registering alice again changed the users file\n  before: %q\n   after: %q", before, after)
	}
}

// checkClosesSilently: requests the discovery server cannot serve are closed
// without an answer, and the server carries on.
func checkClosesSilently(k *testkit.T, srv *testkit.Server) {
	k.Helper()
	login, _ := wire.Encode(wire.Frame{Type: wire.Login, Sender: "alice", Payload: []byte("pass123")})
	cases := []struct {
		what string
		send []byte
	}{
		{"a LOGIN frame (the discovery server only registers)", login},
		{"payload_length = -1", testkit.RawHeader(1, -1, []byte("bob"), nil)},
		{"payload_length = 1<<30", testkit.RawHeader(1, 1<<30, []byte("bob"), nil)},
		{"a 32-byte sender with no NUL", testkit.RawHeader(1, 2, bytes.Repeat([]byte("s"), 32), nil)},
		{"half a header, then end of stream", login[:30]},
	}
	for _, c := range cases {
		conn := k.Dial(srv)
		conn.Write(c.send, c.what)
		conn.CloseWrite()
		conn.ExpectClosed()
		register(k, srv, "probe", "pw", "OK") // the server is still serving
	}
}

// checkFragmented: a request that arrives in many small segments is still one
// request.
func checkFragmented(k *testkit.T, srv *testkit.Server) {
	k.Helper()
	f := registration("frag", "mented")
	b, _ := wire.Encode(f)
	c := k.Dial(srv)
	for i, piece := range [][]byte{b[:1], b[1:5], b[5:9], b[9:40], b[40:71], b[71:73], b[73:]} {
		c.Write(piece, fmt.Sprintf("piece %d of %v (% x)", i+1, f, piece))
	}
	c.ExpectFrame(answer("frag", "OK"))
	c.ExpectClosed()
}

// checkOneRequestPerConnection: after its answer the server closes the
// connection; a second request on it gets nothing.
func checkOneRequestPerConnection(k *testkit.T, srv *testkit.Server) {
	k.Helper()
	c := k.Dial(srv)
	c.SendFrame(registration("carol", "pw"))
	c.ExpectFrame(answer("carol", "OK"))
	c.TryWrite(testkit.Encode(registration("carol2", "pw")), "a second registration on the same connection")
	c.ExpectClosed()
}

// Deadlines checks exercise 1.5: a client that stalls cannot hold the
// iterative server for longer than the configured timeout.
func Deadlines(t *testing.T, impl Impl) {
	k := testkit.New(t, "1.5")
	const timeout = 300 * time.Millisecond
	raw, path := newServer(k, impl, Config{Timeout: timeout})
	srv := k.Serve(raw)
	register(k, srv, "warmup", "pw", "OK")

	// A client that connects and says nothing; the next client must still be
	// served, once the silent one's time is up.
	silent := k.Dial(srv)
	if _, err := registerFrom(k, srv, "next", "pw"); err != nil {
		k.Fatalf("a client connected and sent nothing; the next client's registration got %v\n"+
			"hint: set a deadline on the connection (SetDeadline) so a silent client is dropped after Config.Timeout (%v)",
			err, timeout)
	}
	silent.ExpectClosed()

	// A client that sends half a header and stops.
	half := k.Dial(srv)
	half.Write(testkit.Encode(registration("half", "pw"))[:40], "the first 40 bytes of a registration")
	if _, err := registerFrom(k, srv, "after-half", "pw"); err != nil {
		k.Fatalf("a client sent half a header and stalled; the next client's registration got %v", err)
	}
	half.ExpectClosed()

	checkTrickle(k, srv, timeout)
	if got := readFile(k, path); strings.Contains(got, "slowpoke") {
		k.Errorf("a client that took %v to send its request was registered; the deadline must cover the whole request", 50*time.Millisecond*80)
	}
	checkSlowSync(k, impl)
	checkTimeoutBounded(k, impl)
	checkZeroConfig(k, impl)
	checkOneRequestDeadline(k, impl)
}

// slowSyncFile is a users file whose Sync takes delay (fault injection: a
// slow disk).
type slowSyncFile struct {
	users.AppendFile
	delay time.Duration
}

func (f *slowSyncFile) Sync() error {
	time.Sleep(f.delay) // fault injection: a slow fsync, not synchronisation
	return f.AppendFile.Sync()
}

// checkSlowSync: the answer has a deadline of its own, set once the user is
// on disk. A sync slower than Timeout must not cost the client the OK that
// says it is registered: a user stored but told nothing registers again,
// and a client that was told nothing cannot know it may log in.
func checkSlowSync(k *testkit.T, impl Impl) {
	k.Helper()
	const timeout = 300 * time.Millisecond
	slow := func(p string) (users.AppendFile, error) {
		f, err := openAppend(p)
		if err != nil {
			return nil, err
		}
		return &slowSyncFile{AppendFile: f, delay: 2 * timeout}, nil
	}
	raw, path := newServer(k, impl, Config{Timeout: timeout, OpenUsers: slow})
	srv := k.Serve(raw)
	c := k.Dial(srv)
	c.SendFrame(registration("patient", "pw"))
	got, err := c.TryReadFrame()
	if err != nil || testkit.FrameDiff(answer("patient", "OK"), got) != "" {
		stored := strings.Contains(readFile(k, path), "patient ")
		k.Fatalf("Config.Timeout = %v and the users file's Sync takes %v; sent a registration of patient\n"+
			"  want: %v\n   got: %v (%s); patient is in the users file: %v\n"+
			"hint: after the store has answered, give the answer's write a deadline of its own "+
			"(conn.SetWriteDeadline(time.Now().Add(Timeout))): the one set for the request has run out",
			timeout, 2*timeout, answer("patient", "OK"), got, testkit.Describe(err), stored)
	}
}

// maxTimeout is the chapter's MaxTimeout (README: New clamps Config.Timeout
// to it).
const maxTimeout = 10 * time.Second

// checkTimeoutBounded: every limit has an upper bound. Config.Timeout = 1h
// (-timeout 1h) must be clamped to MaxTimeout, or one silent client holds
// the iterative server for an hour. The deadlines the server sets on a
// connection are recorded, so that no one has to wait for them.
func checkTimeoutBounded(k *testkit.T, impl Impl) {
	k.Helper()
	raw, _ := newServer(k, impl, Config{Timeout: time.Hour})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen: %v", err)
	}
	dl := testkit.RecordDeadlines(ln)
	srv := k.ServeListener(raw, dl)
	register(k, srv, "hour", "pw", "OK")
	if n := dl.Accepted(); n != 1 {
		k.Fatalf("one client registered; the server accepted %d connections", n)
	}
	set := dl.Deadlines()
	if len(set) == 0 {
		k.Fatalf("the server served a connection without setting any deadline on it")
	}
	for _, d := range set {
		if !d.Deadline.IsZero() && d.Deadline.Sub(d.At) > maxTimeout+time.Second {
			k.Fatalf("Config.Timeout = 1h: the server called %s(now + %v); want at most MaxTimeout (%v) from now: "+
				"New clamps Timeout to MaxTimeout, so that one silent client cannot hold the server for an hour",
				d.Which, d.Deadline.Sub(d.At).Round(time.Second), maxTimeout)
		}
	}
}

// registerFrom is register for checks that want the error instead of a
// failure.
func registerFrom(k *testkit.T, srv *testkit.Server, name, password string) (wire.Frame, error) {
	c, err := k.TryDial(srv)
	if err != nil {
		return wire.Frame{}, err
	}
	if err := c.TryWrite(testkit.Encode(registration(name, password)), "registration of "+name); err != nil {
		return wire.Frame{}, err
	}
	got, err := c.TryReadFrame()
	if err != nil {
		return got, errors.New(testkit.Describe(err))
	}
	if want := answer(name, "OK"); testkit.FrameDiff(want, got) != "" {
		return got, fmt.Errorf("want %v, got %v", want, got)
	}
	return got, nil
}

// checkTrickle: a client that sends its request one byte every 50 ms keeps
// each Read short, so a deadline reset on every Read never fires; the
// deadline must bound the whole exchange.
func checkTrickle(k *testkit.T, srv *testkit.Server, timeout time.Duration) {
	k.Helper()
	c := k.Dial(srv)
	req := testkit.Encode(registration("slowpoke", "pw"))
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for _, b := range req {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if c.NetConn().SetWriteDeadline(time.Now().Add(testkit.IOTimeout)) != nil {
				return
			}
			if _, err := c.NetConn().Write([]byte{b}); err != nil {
				return // the server closed the connection: what we want
			}
		}
	}()
	defer func() { close(stop); <-done }()
	// The whole request takes 80 × 50 ms = 4 s to send; the server must give
	// up long before, without answering.
	c.NetConn().SetReadDeadline(time.Now().Add(testkit.IOTimeout))
	var buf [256]byte
	n, err := c.NetConn().Read(buf[:])
	switch {
	case n > 0:
		k.Fatalf("a client sent its request one byte every 50 ms and was answered (%d bytes): with Config.Timeout = %v "+
			"the server must give up first. hint: set one deadline for the whole exchange, not one per Read", n, timeout)
	case !testkit.IsClosed(err):
		k.Fatalf("a client sent its request one byte every 50 ms: want the server to close the connection within %v, got %s",
			testkit.IOTimeout, testkit.Describe(err))
	}
}

// acceptSignal wraps a listener and reports each accepted connection, and
// the time before the server had it, so a check knows when the server has a
// client in hand, and that any deadline it set on it came later.
type acceptSignal struct {
	net.Listener
	accepted chan time.Time
}

func (l *acceptSignal) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		select {
		case l.accepted <- time.Now():
		default:
		}
	}
	return c, err
}

// Close checks exercise 1.6: Close stops the server at once, even while a
// client is connected, waits for it, and can be called twice.
func Close(t *testing.T, impl Impl) {
	k := testkit.New(t, "1.6")
	// New clamps Timeout to MaxTimeout: bob's deadline is MaxTimeout after
	// the server accepted him, however long IOTimeout is on a busy machine.
	// Close must return before it: only then did closing bob's connection,
	// not his deadline, end the Read.
	raw, _ := newServer(k, impl, Config{Timeout: maxTimeout})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen: %v", err)
	}
	sig := &acceptSignal{Listener: ln, accepted: make(chan time.Time, 1)}
	srv := k.ServeListener(raw, sig)
	register(k, srv, "alice", "pw", "OK")
	<-sig.accepted // alice's connection

	// A client that sends half a header and then waits: the server is blocked
	// reading it, with a minute left on its deadline.
	c := k.Dial(srv)
	c.Write(testkit.Encode(registration("bob", "pw"))[:10], "the first 10 bytes of a registration")
	var bobAccepted time.Time
	select {
	case bobAccepted = <-sig.accepted:
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("the server did not accept a second connection within %v", testkit.IOTimeout)
	}
	// Accepted is not yet served: wait until the server reads bob's
	// connection, so that only closing it can make that Read return.
	waitReading(k)

	// Leave a margin before bob's deadline: a Close that returns just
	// after it was released by it.
	limit := time.Until(bobAccepted.Add(maxTimeout - time.Second))
	if limit <= 0 {
		k.Fatalf("the machine is too slow for this check: bob's deadline (%v after his accept) is near before "+
			"Close could be called", maxTimeout)
	}
	closed := make(chan error, 1)
	go func() { closed <- raw.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			k.Fatalf("Close with a client connected: %v", err)
		}
	case <-time.After(limit):
		k.Fatalf("Close did not return within %v while a client was connected (it will once the client's "+
			"deadline fires): Close must close the connection being served, so that its Read returns", limit.Round(time.Millisecond))
	}
	if err, stopped := srv.Wait(); !stopped {
		k.Fatalf("Serve did not return within %v after Close returned", testkit.IOTimeout)
	} else if !errors.Is(err, lab.ErrServerClosed) {
		k.Fatalf("after Close, Serve returned %v; want lab.ErrServerClosed", err)
	}
	c.ExpectClosed()

	again := make(chan error, 1)
	go func() { again <- raw.Close() }()
	select {
	case err := <-again:
		if err != nil {
			k.Errorf("a second Close returned %v; want nil (Close is idempotent)", err)
		}
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("a second Close did not return within %v", testkit.IOTimeout)
	}
	fresh, _ := newServer(k, impl, Config{Timeout: time.Minute})
	k.CheckServeAfterClose(fresh)
	checkCloseWaitsForServe(k, impl)
	checkCloseDuringBackoff(k, impl)
	checkAcceptedDuringClose(k, impl)

	k.CheckContract(contract(k, impl))
}

// brokenServer stands for a server that could not be built: every call
// reports why.
type brokenServer struct{ err error }

func (b brokenServer) Serve(ln net.Listener) error { ln.Close(); return b.err }
func (b brokenServer) Close() error                { return b.err }

// lingeringListener is a listener whose Accept, once the listener is closed,
// takes a moment to return (fault injection: a slow wake-up), and records
// when it has. A Close that returns before that did not wait for Serve.
type lingeringListener struct {
	net.Listener
	closed   atomic.Bool
	returned atomic.Bool // Accept has returned after the close
}

func (l *lingeringListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil && l.closed.Load() {
		time.Sleep(100 * time.Millisecond) // fault injection: Accept slow to return after Close, not synchronisation
		l.returned.Store(true)
	}
	return c, err
}

func (l *lingeringListener) Close() error {
	l.closed.Store(true)
	return l.Listener.Close()
}

// checkCloseWaitsForServe: two Close calls that race both return only after
// Serve has stopped: here, after Serve's Accept has returned (slowly) and
// Serve with it. The Serve loop is the iterative server's only goroutine:
// a Close that does not wait for it (or a second Close that returns at once
// because the first is under way) returns while it still runs.
func checkCloseWaitsForServe(k *testkit.T, impl Impl) {
	k.Helper()
	raw, _ := newServer(k, impl, Config{Timeout: time.Minute})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen: %v", err)
	}
	lingering := &lingeringListener{Listener: ln}
	srv := k.ServeListener(raw, lingering)
	register(k, srv, "alice", "pw", "OK")
	early := make(chan int, 2)
	for i := range 2 {
		go func() {
			raw.Close()
			if !lingering.returned.Load() {
				early <- i + 1
				return
			}
			early <- 0
		}()
	}
	for range 2 {
		select {
		case n := <-early:
			if n != 0 {
				k.Errorf("Close call %d of 2 (racing) returned while Serve was still waiting in Accept: every "+
					"Close must wait for Serve to return (s.serve.Wait(), in every call, not only the first)", n)
			}
		case <-time.After(testkit.IOTimeout):
			k.Fatalf("Close did not return within %v", testkit.IOTimeout)
		}
	}
}

// checkCloseDuringBackoff: Close interrupts lab.Accept's wait between
// retries (testkit.CheckCloseDuringBackoff).
func checkCloseDuringBackoff(k *testkit.T, impl Impl) {
	k.Helper()
	raw, _ := newServer(k, impl, Config{Timeout: time.Minute})
	k.CheckCloseDuringBackoff(raw)
}

// heldListener hands out its next connection only once Close has been called
// on it: the connection arrives between Accept and handle just as the
// server is being closed, the moment a handle that records the connection
// without checking closed gets wrong.
type heldListener struct {
	net.Listener
	holding chan struct{} // a token once Accept holds a connection
	release chan struct{}
	once    sync.Once
}

func (l *heldListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		select {
		case l.holding <- struct{}{}:
		default:
		}
		<-l.release
	}
	return c, err
}

func (l *heldListener) Close() error {
	l.once.Do(func() { close(l.release) })
	return l.Listener.Close()
}

// checkAcceptedDuringClose: a connection accepted while Close runs is closed
// at once, not served: Close has already closed what it knew of, so a
// handle that went on would keep Close waiting for its whole deadline.
func checkAcceptedDuringClose(k *testkit.T, impl Impl) {
	k.Helper()
	raw, _ := newServer(k, impl, Config{Timeout: time.Minute})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen: %v", err)
	}
	held := &heldListener{Listener: ln, holding: make(chan struct{}, 1), release: make(chan struct{})}
	k.ServeListener(raw, held)
	c := k.DialAddr(ln.Addr().String())
	// Close only once Serve's Accept holds the connection: a Close that came
	// first would stop Serve before it accepted, and check nothing.
	select {
	case <-held.holding:
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("the server did not accept a connection within %v", testkit.IOTimeout)
	}
	closed := make(chan struct{})
	go func() { raw.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		c.Close()
		<-closed
		k.Fatalf("a connection was accepted while Close was running; Close did not return within 2s: handle served " +
			"it. Check closed when you record the connection (under s.mu), and close it at once if the server is closed")
	}
	c.ExpectClosed()
}

// waitReading waits until a goroutine of the server is blocked reading a
// connection (a Read on a net.Conn, under the server's own code), or fails
// after testkit.IOTimeout.
func waitReading(k *testkit.T) {
	k.Helper()
	deadline := time.Now().Add(testkit.IOTimeout)
	for {
		for _, g := range testkit.Goroutines() {
			if g.State == "IO wait" && slices.ContainsFunc(g.Funcs, func(f string) bool {
				return strings.HasPrefix(f, "net.(*conn).Read(")
			}) && slices.ContainsFunc(g.Funcs, func(f string) bool {
				return strings.HasPrefix(f, "serverlab/chapters/") || strings.HasPrefix(f, "serverlab/solutions/")
			}) {
				return
			}
		}
		if time.Now().After(deadline) {
			k.Fatalf("the server accepted a connection that sent half a frame, and was not reading it %v later",
				testkit.IOTimeout)
		}
		time.Sleep(5 * time.Millisecond) // between looks at the server's goroutines, which no event announces
	}
}
